package snapshot

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// Links are most of what the executor's element read (executor/axread.go)
// would ask the tree about on a long text: all 715 such elements of the Go
// specification, 849 of 1,092 on a Wikipedia article. Of a link the renderer
// reads only its role, its target, and its name where its own text renders
// empty. So a plain link is not asked about: its role (link) and its target
// are derived from the layout read (PlainLinks). A plain link is an HTML <a>
// of the tab's own document (not of a frame in it) with an href, and:
//   - no role, tabindex, contenteditable or aria-* attribute;
//   - a layout object that is neither inert (the inert attribute or the
//     interactivity style, on it or around it) nor hidden by visibility;
//   - text of its own that is shown, in itself or in inline elements that
//     render as text (plainInline) with none of those attributes, and no
//     other element in it: its label is then not empty, and the tree's
//     name is not needed;
//   - no ancestor with aria-hidden, no custom element around it (one can
//     hide it through ElementInternals, with no attribute), and no option
//     or select (an option's content is presentational); the layout
//     read's tree is the flat tree, so content slotted into a shadow tree
//     has that tree's elements as its ancestors;
//   - an href the browser resolves as linkURL does, against an http or
//     https base that Go writes back as the browser wrote it, to fewer
//     than 10,000 characters;
//   - no element in the document with aria-owns (which can move the link
//     under one that hides it) or aria-modal;
//   - and nothing in the document's top layer (the executor's topLayer,
//     asked of the browser after the layout is read): a modal dialog or a
//     fullscreen element makes the rest of the page inert, wherever it is,
//     and a popover is treated alike.
//
// On the pages of the executor's TestElementReadRendersAsWholeTree
// (among them the shapes two reviews found where earlier versions of
// these rules went wrong) and on the ten pages of the peers' token
// comparison (a probe), both reads render the same snapshot, and every plain
// link's role and target are those the whole tree gives. Chromium 156 gives
// a link its role even under a button or a role=img, which are therefore no
// bar. What the layout cannot show: an href set in another namespace
// (setAttributeNS, which a later setAttribute('href') only updates),
// which Chromium does not take for a link's; such a link shows as a link
// to that target.

// plainInline are the elements a plain link's content may hold: inline
// text elements whose implicit role the renderer does not read.
var plainInline = map[string]bool{"span": true, "b": true, "i": true, "em": true, "strong": true, "code": true,
	"small": true, "sub": true, "sup": true, "abbr": true, "cite": true, "dfn": true, "kbd": true, "samp": true,
	"var": true, "mark": true, "q": true, "s": true, "u": true, "time": true, "bdi": true, "bdo": true, "tt": true,
	"font": true, "big": true, "strike": true, "ins": true, "del": true, "nobr": true}

// PlainLinks are the plain links of layout (read with ComputedStyles), by
// node, with the tree's information the renderer needs of them: the role
// link and the resolved target. The caller checks the top layer.
func PlainLinks(layout *domsnapshot.CaptureSnapshotResult) map[cdp.BackendNodeID]*AXNode {
	if len(layout.Documents) == 0 {
		return nil
	}
	d := layout.Documents[0]
	doc := docNodes{layout, d}
	if doc.rearranged() {
		return nil
	}
	// The base as the browser wrote it, which Go must write back alike
	// (it would escape a user's name again, say); but for its fragment,
	// which no resolution by Go keeps.
	baseText := doc.str(d.BaseURL)
	basePage, _, _ := strings.Cut(baseText, "#")
	base, err := url.Parse(basePage)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.String() != basePage {
		return nil
	}
	layoutOf := doc.layoutIndex()
	out := map[cdp.BackendNodeID]*AXNode{}
	n := len(d.Nodes.NodeType)
	pseudo := map[int64]bool{}
	if p := d.Nodes.PseudoType; p != nil {
		for _, i := range p.Index {
			pseudo[i] = true
		}
	}
	// barred: an ancestor of the node keeps its links from being
	// plain. anchor: the <a> that may be plain the node is in, through
	// plainInline elements only (-1: none). state: of each such <a>,
	// whether it holds shown text (shows) or is not plain after all
	// (notPlain).
	const (
		maybe = iota
		shows
		notPlain
	)
	barred := doc.barred()
	anchor := make([]int, n)
	state := map[int]int{}
	for i := range n {
		anchor[i] = -1
		p := int(d.Nodes.ParentIndex[i])
		if p < 0 || p >= i {
			continue
		}
		if d.Nodes.NodeType[p] == 1 {
			if _, ok := state[p]; ok {
				anchor[i] = p
			} else if anchor[p] >= 0 && plainInline[doc.tag(p)] {
				anchor[i] = anchor[p]
			}
		}
		switch d.Nodes.NodeType[i] {
		case 1:
			if a := anchor[i]; a >= 0 && !pseudo[int64(i)] && (!plainInline[doc.tag(i)] || doc.mayHaveRole(i)) {
				state[a] = notPlain
			}
			// An HTML element's name is upper case (another namespace's
			// <a>, an SVG one included, is asked about).
			if doc.str(d.Nodes.NodeName[i]) == "A" && !barred[i] && doc.maybePlainAnchor(i, layoutOf) {
				state[i] = maybe
			}
		case 3:
			if a := anchor[i]; a >= 0 && state[a] == maybe {
				if li, ok := layoutOf[int64(i)]; ok && doc.shownText(i, li) {
					state[a] = shows
				}
			}
		}
	}
	for a, st := range state {
		if st != shows {
			continue
		}
		href, _ := doc.attr(a, "href")
		if u, ok := linkURL(basePage, base, href); ok {
			out[d.Nodes.BackendNodeID[a]] = &AXNode{Role: "link", Props: map[string]string{"url": u}}
		}
	}
	return out
}

// rearranged: an element of the document has aria-modal, which can make
// the rest of the page hidden from the tree, or aria-owns, which moves
// elements in the tree (no case was found where Chromium 156 then hides a
// link or takes its role; it is a precaution).
func (doc docNodes) rearranged() bool {
	for i, t := range doc.d.Nodes.NodeType {
		if t == 1 && (doc.has(i, "aria-modal") || doc.has(i, "aria-owns")) {
			return true
		}
	}
	return false
}

// barsLinks: node p hides the links under it from the tree (aria-hidden;
// a custom element, which can hide them through ElementInternals with no
// attribute; an option, whose content is presentational). A node that is
// not an element or a document bars them too, though the layout read has
// none (it is the flat tree: no shadow root nodes).
func (doc docNodes) barsLinks(p int) bool {
	switch doc.d.Nodes.NodeType[p] {
	case 1:
		tag := doc.tag(p)
		return doc.has(p, "aria-hidden") || strings.Contains(tag, "-") || tag == "option"
	case 9:
		return false
	}
	return true
}

// layoutIndex maps the document's nodes to where they are laid out (a
// node with no layout object is not in it).
func (doc docNodes) layoutIndex() map[int64]int {
	out := make(map[int64]int, len(doc.d.Layout.NodeIndex))
	for li, ni := range doc.d.Layout.NodeIndex {
		out[ni] = li
	}
	return out
}

// barred is, of each node, whether an ancestor of it bars the links under
// it (barsLinks), or it is out of document order (its parent after it:
// not judged).
func (doc docNodes) barred() []bool {
	out := make([]bool, len(doc.d.Nodes.NodeType))
	for i := range out {
		switch p := int(doc.d.Nodes.ParentIndex[i]); {
		case p < 0:
		case p >= i:
			out[i] = true
		default:
			out[i] = out[p] || doc.barsLinks(p)
		}
	}
	return out
}

// mayHaveRole: element i has an attribute that can give it a role its tag
// does not (MayHaveRole).
func (doc docNodes) mayHaveRole(i int) bool {
	return i < len(doc.d.Nodes.Attributes) && MayHaveRole(doc.layout, doc.d.Nodes.Attributes[i])
}

// MayHaveRole: an element with these attributes (a role, tabindex,
// contenteditable or aria-*) can have a role its tag does not give it.
func MayHaveRole(layout *domsnapshot.CaptureSnapshotResult, attrs domsnapshot.ArrayOfStrings) bool {
	for k := 0; k+1 < len(attrs); k += 2 {
		n := StringAt(layout.Strings, domsnapshot.StringIndex(attrs[k]))
		if n == "role" || n == "tabindex" || n == "contenteditable" || strings.HasPrefix(n, "aria-") {
			return true
		}
	}
	return false
}

// maybePlainAnchor: the <a> at node i has an href, no attribute that can
// change its role, and a layout object that is neither inert nor hidden
// by visibility.
func (doc docNodes) maybePlainAnchor(i int, layoutOf map[int64]int) bool {
	if !doc.has(i, "href") || doc.mayHaveRole(i) {
		return false
	}
	li, ok := layoutOf[int64(i)]
	return ok && doc.style(li, styleVisibility) == "visible" && doc.style(li, styleInteractivity) != "inert"
}

// shownText: text node i, laid out at li, shows something.
func (doc docNodes) shownText(i, li int) bool {
	if v := doc.style(li, styleVisibility); v == "hidden" || v == "collapse" {
		return false
	}
	text := doc.str(doc.d.Nodes.NodeValue[i])
	if li < len(doc.d.Layout.Text) && doc.d.Layout.Text[li] >= 0 {
		text = doc.str(doc.d.Layout.Text[li])
	}
	return strings.TrimSpace(text) != ""
}

// linkURL resolves href against base (basePage as the browser wrote it,
// without its fragment) as the browser's URL parser does, for the hrefs
// where Go's parser and it agree (TestLinkURL, and the controls page of
// the executor's TestElementReadRendersAsWholeTree, which compares with
// Chromium); ok is false for any other (the link is then asked about).
// Such an href holds only letters, digits and -._~/?#=&%+:,;@!$*(), at
// most one #, not at its end (Go leaves an empty fragment out), no
// encoded dot anywhere, and no // in its path; one that names a host
// names a domain (plainHost), with no user, and a port without a leading
// zero; a scheme other than defaultPorts' is one of opaqueSchemes, and
// file is not taken. The browser writes the scheme and host in lower
// case, a port that is the scheme's default not at all, and an empty
// path as /.
func linkURL(basePage string, base *url.URL, href string) (string, bool) {
	for i := 0; i < len(href); i++ {
		c := href[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/?#=&%+:,;@!$*()", c) >= 0 {
			continue
		}
		return "", false
	}
	if strings.Count(href, "#") > 1 || strings.HasSuffix(href, "#") || strings.Contains(strings.ToLower(href), "%2e") {
		return "", false // an empty fragment, which Go leaves out
	}
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if href == "" || href[0] == '#' {
		// The base without its fragment, as the browser wrote it (Go
		// would lose an empty query, a ? alone), and href's fragment.
		return shortEnough(basePage + href)
	}
	// Past the scheme and the start of an authority, a // in the path is
	// an empty segment, which Go's resolution drops next to a dot segment.
	rest := href[len(ref.Scheme):]
	if ref.Scheme != "" {
		rest = rest[1:]
	}
	path, _, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
	path, _, _ = strings.Cut(path, "#")
	if strings.Contains(path, "//") || ref.Scheme == "file" {
		return "", false
	}
	if ref.Scheme != "" {
		if _, special := defaultPorts[ref.Scheme]; !special {
			if !opaqueSchemes[ref.Scheme] || ref.Opaque == "" {
				return "", false
			}
			return shortEnough(ref.Scheme + href[len(ref.Scheme):]) // the scheme in lower case
		}
	}
	abs := base.ResolveReference(ref)
	if ref.Scheme == "" && !strings.HasPrefix(href, "//") {
		// The base's host and port, as the browser wrote them.
		return shortEnough(abs.String())
	}
	if ref.Host == "" || ref.User != nil {
		return "", false // no host (the browser takes the path's first segment), or a user
	}
	host, port := strings.ToLower(abs.Hostname()), abs.Port()
	if !plainHost(host) {
		return "", false
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 || port[0] == '0' {
			return "", false
		}
		if strconv.Itoa(defaultPorts[abs.Scheme]) == port {
			port = ""
		}
	}
	abs.Host = host
	if port != "" {
		abs.Host += ":" + port
	}
	if abs.Path == "" {
		abs.Path, abs.RawPath = "/", ""
	}
	return shortEnough(abs.String())
}

// maxLinkURL: Chromium cuts the url it gives a link at 10,000 characters;
// a longer target is asked about.
const maxLinkURL = 10000

func shortEnough(u string) (string, bool) {
	return u, len(u) < maxLinkURL
}

// opaqueSchemes are the schemes other than defaultPorts' a link's target
// may have: the browser writes them as they are (but for the scheme's
// case), where it writes its own (chrome:, devtools:, filesystem: …) as
// it would a host.
var opaqueSchemes = map[string]bool{"mailto": true, "tel": true, "javascript": true, "data": true}

// defaultPorts are the special schemes a link may resolve to here, with
// their default ports.
var defaultPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// plainHost: host is a domain of lower-case letters, digits, hyphens and
// dots whose last label is not a number, decimal or 0x (such a host is an
// IPv4 address, which the browser writes in its own form: http://0x7f/
// is http://0.0.0.127/), and no label of which is punycode.
func plainHost(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	for _, l := range labels {
		if l == "" || strings.HasPrefix(l, "xn--") {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != "" && !strings.HasPrefix(last, "0x")
}
