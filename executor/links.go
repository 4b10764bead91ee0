package executor

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// Links are most of what the element read (axread.go) would ask the tree
// about on a long text: all 715 such elements of the Go specification,
// 849 of 1,092 on a Wikipedia article. Of a link the renderer reads only
// its role, its target, and its name where its own text renders empty.
// So a plain link is not asked about: its role (link) and its target are
// derived from the layout read (plainLinks). A plain link is an <a> with
// an href, and:
//   - no role, tabindex, contenteditable, inert or aria-* attribute;
//   - a layout object that visibility does not hide;
//   - text of its own that is shown, in itself or in inline elements that
//     render as text (plainInline), and no other element in it: its label
//     is then never empty, and the tree's name is never needed;
//   - no ancestor with aria-hidden or inert, which hide it from the tree
//     (the layout read's tree is the flat tree, so content slotted into a
//     shadow tree has that tree's elements as its ancestors);
//   - an href the browser resolves as linkURL does, against an http or
//     https base;
//   - and no element in the read's documents with aria-owns (which can
//     move the link under one that hides it), aria-modal, or an open
//     dialog (either can make the rest of the page inert).
//
// Chromium 156 gives every such link the role link and the resolved href
// as its url, whatever its other ancestors (a button, a role=img, a
// custom element; TestElementReadRendersAsWholeTree's controls page has
// them). Every other <a> is asked about, as before, and both reads
// render the same snapshot on every page of that test. On the seven pages
// of the speed benchmark, every plain link's role and target are those
// the whole tree gives.

// plainInline are the elements a plain link's content may hold: inline
// text elements whose implicit role the renderer does not read.
var plainInline = map[string]bool{"span": true, "b": true, "i": true, "em": true, "strong": true, "code": true,
	"small": true, "sub": true, "sup": true, "abbr": true, "cite": true, "dfn": true, "kbd": true, "samp": true,
	"var": true, "mark": true, "q": true, "s": true, "u": true, "time": true, "bdi": true, "bdo": true, "tt": true,
	"font": true, "big": true, "strike": true, "ins": true, "del": true, "nobr": true}

// plainLinks are the plain links of layout, by node, with the tree's
// information the renderer needs of them: the role link and the resolved
// target.
func plainLinks(layout *domsnapshot.CaptureSnapshotResult) map[cdp.BackendNodeID]*axInfo {
	for _, d := range layout.Documents {
		doc := docNodes{layout, d}
		for i := range d.Nodes.NodeType {
			if d.Nodes.NodeType[i] == 1 && doc.rearranges(i) {
				return nil
			}
		}
	}
	out := map[cdp.BackendNodeID]*axInfo{}
	for _, d := range layout.Documents {
		doc := docNodes{layout, d}
		base, err := url.Parse(doc.str(d.BaseURL))
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
			continue
		}
		n := len(d.Nodes.NodeType)
		layoutOf := make(map[int64]int, len(d.Layout.NodeIndex))
		for li, ni := range d.Layout.NodeIndex {
			layoutOf[ni] = li
		}
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
		barred := make([]bool, n)
		anchor := make([]int, n)
		state := map[int]int{}
		for i := range n {
			anchor[i] = -1
			p := int(d.Nodes.ParentIndex[i])
			if p < 0 {
				continue
			}
			if p >= i {
				barred[i] = true // not in document order: not judged
				continue
			}
			barred[i] = barred[p] || doc.barsLinks(p)
			if d.Nodes.NodeType[p] == 1 && !pseudo[int64(p)] {
				if _, ok := state[p]; ok {
					anchor[i] = p
				} else if anchor[p] >= 0 && plainInline[doc.tag(p)] {
					anchor[i] = anchor[p]
				}
			}
			switch d.Nodes.NodeType[i] {
			case 1:
				if a := anchor[i]; a >= 0 && !pseudo[int64(i)] && !plainInline[doc.tag(i)] {
					state[a] = notPlain
				}
				if doc.tag(i) == "a" && !barred[i] && doc.maybePlainAnchor(i, layoutOf) {
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
			if u, ok := linkURL(base, href); ok {
				out[d.Nodes.BackendNodeID[a]] = &axInfo{role: "link", props: map[string]string{"url": u}}
			}
		}
	}
	return out
}

// docNodes is one document of a layout read.
type docNodes struct {
	layout *domsnapshot.CaptureSnapshotResult
	d      *domsnapshot.DocumentSnapshot
}

func (doc docNodes) str(i domsnapshot.StringIndex) string { return strIndex(doc.layout.Strings, i) }

func (doc docNodes) tag(i int) string { return strings.ToLower(doc.str(doc.d.Nodes.NodeName[i])) }

func (doc docNodes) attr(i int, name string) (string, bool) {
	if i >= len(doc.d.Nodes.Attributes) {
		return "", false
	}
	a := doc.d.Nodes.Attributes[i]
	for k := 0; k+1 < len(a); k += 2 {
		if strings.EqualFold(doc.str(domsnapshot.StringIndex(a[k])), name) {
			return doc.str(domsnapshot.StringIndex(a[k+1])), true
		}
	}
	return "", false
}

func (doc docNodes) has(i int, name string) bool {
	_, ok := doc.attr(i, name)
	return ok
}

// style is computed style k (an index of snapStyles) of the node laid out
// at li.
func (doc docNodes) style(li, k int) string {
	st := doc.d.Layout.Styles
	if li >= len(st) || k >= len(st[li]) {
		return ""
	}
	return doc.str(domsnapshot.StringIndex(st[li][k]))
}

// rearranges: element i is an open dialog or has aria-modal, either of
// which can make the rest of the page inert to the tree, or it has
// aria-owns, which can move a link under an element that hides it.
func (doc docNodes) rearranges(i int) bool {
	return doc.has(i, "aria-modal") || doc.has(i, "aria-owns") || doc.tag(i) == "dialog" && doc.has(i, "open")
}

// barsLinks: node p hides the links under it from the tree (aria-hidden,
// inert), or is not an element or a document.
func (doc docNodes) barsLinks(p int) bool {
	switch doc.d.Nodes.NodeType[p] {
	case 1:
		return doc.has(p, "aria-hidden") || doc.has(p, "inert")
	case 9:
		return false
	}
	return true
}

// maybePlainAnchor: the <a> at node i has an href, no attribute that can
// change its role or hide it, and a layout object visibility does not
// hide.
func (doc docNodes) maybePlainAnchor(i int, layoutOf map[int64]int) bool {
	if !doc.has(i, "href") || doc.has(i, "inert") || i < len(doc.d.Nodes.Attributes) && mayHaveRole(doc.layout, doc.d.Nodes.Attributes[i]) {
		return false
	}
	li, ok := layoutOf[int64(i)]
	return ok && doc.style(li, 1) == "visible"
}

// shownText: text node i, laid out at li, shows something.
func (doc docNodes) shownText(i, li int) bool {
	if v := doc.style(li, 1); v == "hidden" || v == "collapse" {
		return false
	}
	text := doc.str(doc.d.Nodes.NodeValue[i])
	if li < len(doc.d.Layout.Text) && doc.d.Layout.Text[li] >= 0 {
		text = doc.str(doc.d.Layout.Text[li])
	}
	return strings.TrimSpace(text) != ""
}

// linkURL resolves href against base as the browser's URL parser does,
// for the hrefs where Go's parser and it agree; ok is false for any other
// (the link is then asked about). Such an href holds only letters,
// digits and -._~/?#=&%+:,;@!$*(), at most one #, and no encoded dot; one
// that names a host names a domain (plainHost), and a port without a
// leading zero. The browser writes the scheme and host in lower case, a
// port that is the scheme's default not at all, and an empty path as /.
func linkURL(base *url.URL, href string) (string, bool) {
	for i := 0; i < len(href); i++ {
		c := href[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/?#=&%+:,;@!$*()", c) >= 0 {
			continue
		}
		return "", false
	}
	if strings.Count(href, "#") > 1 || strings.Contains(strings.ToLower(href), "%2e") {
		return "", false
	}
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if href == "" {
		u := *base
		u.Fragment, u.RawFragment = "", ""
		return u.String(), true
	}
	if ref.Scheme != "" {
		if _, special := defaultPorts[ref.Scheme]; !special {
			if ref.Opaque == "" || strings.HasPrefix(ref.Opaque, "/") {
				return "", false
			}
			return ref.Scheme + href[len(ref.Scheme):], true // the scheme in lower case
		}
	}
	abs := base.ResolveReference(ref)
	if ref.Host == "" && !strings.HasPrefix(href, "//") && ref.Scheme == "" {
		// The base's host and port, as the browser wrote them.
		return abs.String(), true
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
	return abs.String(), true
}

// defaultPorts are the special schemes a link may resolve to here, with
// their default ports.
var defaultPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// plainHost: host is a domain of lower-case letters, digits, hyphens and
// dots whose last label is not a number (the browser reads such a host as
// an IPv4 address) and no label of which is punycode.
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
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return false
	}
	return true
}
