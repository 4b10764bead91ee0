package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// Snapshot limits. A snapshot is never cut silently: one longer than its
// budget (the max_chars argument) is split into pages at line ends, and
// each page but the last ends with the call that gives the next.
const (
	// maxNameLen is the longest a name (a control's, an option's) is
	// shown, here as in the snapshot.
	maxNameLen = snapshot.MaxNameLen
	// defaultSnapshotBudget holds a 300 KB reference page in one reply.
	defaultSnapshotBudget = 200000
	maxSnapshotLen        = 60000 // extract_mode = "text" (a plain innerText dump)
)

// snapshot reads the page's layout and accessibility tree (one round trip
// each, in parallel) and renders them (package snapshot), from the element
// sel matches when sel is set. It replaces the session's refs, and returns
// the first page of the text; the others wait for snapshot {page: N}.
func (s *session) snapshot(ctx context.Context, sel string, budget int) (output, error) {
	text, err := s.renderPage(ctx, sel)
	if err != nil {
		return output{}, err
	}
	return s.firstPage("snapshot", text, budget), nil
}

// renderPage is the snapshot's text, masked, of the page or of the
// element sel matches, and makes its refs the session's.
func (s *session) renderPage(ctx context.Context, sel string) (string, error) {
	var scopeNode cdp.BackendNodeID
	if sel != "" {
		el, err := s.querySelector(ctx, sel)
		if err != nil {
			return "", err
		}
		scopeNode = el.backend
	}
	top, err := s.capture(ctx, ctx, "", 0)
	if err != nil {
		return "", err
	}
	page, err := snapshot.Render(top, snapshot.Options{Root: scopeNode, FrameURL: s.shownURL})
	if errors.Is(err, snapshot.ErrRootNotFound) {
		return "", fmt.Errorf("selector %q matches no element of the tab's own document", sel)
	}
	if err != nil {
		return "", err
	}
	// Masked before it is split (a split secret would show its pieces),
	// each part for the secrets considered on the documents it shows: a
	// frame's for its own, the page's for the tab's page, so that a page
	// that embeds the secret's site is not masked for its secret.
	text := s.maskParts(page.Parts, snapshot.StringAt(top.Layout.Strings, top.Layout.Documents[0].DocumentURL))
	if text == "" {
		text = "(the page shows no text)"
	}
	s.tab.refs, s.tab.refsNavs = page.Refs, s.tab.watch.navigationCount()
	return text, nil
}

// maskParts masks a rendered page's parts (snapshot.Part) for the agent,
// each for the secrets considered on its documents (docHosts). A part
// that holds text of documents not masked for the same secrets (a table
// row, a link, that gathers a frame's text with its page's) is withheld:
// masked for them all, the page's own guesses would tell the right one.
func (s *session) maskParts(parts []snapshot.Part, top string) string {
	var every []string // what a document whose URL's choosers are not known may hold
	for _, p := range parts {
		for _, d := range p.Docs {
			every = append(every, docHost(d.URL))
		}
	}
	every = append(every, s.pageHosts()...)
	var b strings.Builder
	for _, p := range parts {
		if p.Own {
			b.WriteString(p.Text)
			continue
		}
		var secs [][]*toolclad.Secret
		var hosts []string
		for _, d := range p.Docs {
			h, known := s.docHosts(d, top)
			if !known {
				// Who chose its URL is not known: it may hold what any
				// document shown holds. Masked for them all, a page's own
				// guesses would tell; so withheld unless that is the same.
				secs = append(secs, s.considered(every...))
			}
			secs, hosts = append(secs, s.considered(h...)), append(hosts, h...)
		}
		if !sameSecrets(secs) {
			b.WriteString(partWithheld)
			continue
		}
		b.WriteString(s.maskPage(p.Text, hosts...))
	}
	return b.String()
}

// partWithheld stands for a snapshot's part that holds text of documents
// not masked for the same secrets (maskParts).
const partWithheld = "[withheld: this line holds text of documents not masked for the same secrets]"

// docHosts are the hosts a document d a snapshot shows is masked for:
// its own, and those of the documents that may have chosen its URL in
// its frame (the value may have come in it); the tab's page's too for
// the page (top) and a document of no host of its own. known is false
// when who chose its URL is not known.
func (s *session) docHosts(d snapshot.Doc, top string) (hosts []string, known bool) {
	u := d.URL
	hosts = []string{docHost(u)}
	if hosts[0] == "" || u == top {
		hosts = append(hosts, s.pageHosts()...)
		hosts = append(hosts, hostOf(top))
	}
	choosers, known := s.urlChoosers(pageURL{tab: d.Frame, url: u})
	return append(hosts, choosers...), known
}

// docHost is the host of a document at u: a blob: URL's is its origin's.
func docHost(u string) string {
	return hostOf(strings.TrimPrefix(u, "blob:"))
}

// paged is the text of the latest reply of a command that did not fit
// one reply (snapshot, read), split into pages, and the document it is of.
type paged struct {
	command string
	pages   []string
	navs    int
	// reading is how far the agent has read it: a page further on is a
	// continuation that does not count toward max_interactions.
	reading gate.Reading
}

// firstPage keeps text's pages for command {page: N} when it does not
// fit budget, and returns the first (or the whole text), with the line
// that says where it is as a note of browsergate's own.
func (s *session) firstPage(command, text string, budget int) output {
	s.tab.paged = paged{}
	var keep [][2]int
	if s.secretSpans != nil && len(text) > budget {
		keep = s.secretSpans(text)
	}
	pages := paginate(text, budget, keep)
	for i := range pages {
		pages[i] = pagetext.Balanced(pages[i])
	}
	if len(pages) == 1 {
		return output{Text: text}
	}
	// Its free pages are those it has at the default size, whatever the
	// budget the agent asked for (gate.FreePages).
	free := gate.FreePages(len(text), defaultSnapshotBudget)
	s.tab.paged = paged{command: command, pages: pages, navs: s.tab.watch.navigationCount(), reading: gate.NewReading(len(pages), free)}
	page, where := pageOf(command, pages, 1)
	return output{Text: page, notes: where}
}

// nextPage is page n of command's latest reply that did not fit one. It
// is marked continued when it moves forward through that reply, in the tab
// and document the reply is of, to a page the reply has free
// (gate.Reading): such a call does not count toward max_interactions
// unless it carries more than the page (freeContinuation).
func (s *session) nextPage(command string, n int) (output, error) {
	p := &s.tab.paged
	switch {
	case p.command != command:
		return output{}, fmt.Errorf("there is no %s reply with more pages: call %s without page first", command, command)
	case p.navs != s.tab.watch.navigationCount():
		return output{}, fmt.Errorf("the tab has moved to another document since that %s: call it again", command)
	case n < 1 || n > len(p.pages):
		return output{}, fmt.Errorf("the latest %s has pages 1 to %d, not %d", command, len(p.pages), n)
	}
	page, where := pageOf(command, p.pages, n)
	out := output{Text: page, notes: where}
	if p.reading.Advance(n) {
		out.continued = &continuation{page: n, of: len(p.pages), text: out.Text}
	}
	return out, nil
}

// maxFrameDepth bounds how deep out-of-process frames are read (a frame
// of a frame of a frame …).
const maxFrameDepth = 3

// capture reads the layout and accessibility tree of a process's documents
// (exec is the tab's context, or an out-of-process frame's): the whole
// tree, or, in the tab's own document when it has few controls, the
// tree's nodes of the elements a snapshot asks about (capture_ax.go); and then
// the out-of-process frames it embeds, the same way.
func (s *session) capture(ctx, exec context.Context, id target.ID, depth int) (*snapshot.Capture, error) {
	// An out-of-process frame's document is read before and after: one
	// that loaded another document meanwhile gives refs that are stale
	// at once (no loader).
	var loader cdp.LoaderID
	if id != "" {
		loader = frameLoader(exec)
	}
	var (
		layout domsnapshot.CaptureSnapshotResult
		ax     map[cdp.BackendNodeID]*snapshot.AXNode
		err    error
	)
	byElement, derive := false, false
	if id == "" {
		byElement, derive = s.chooseRead(exec)
	}
	if byElement {
		// The tree is built once per document: Chromium keeps it.
		built, navs := func() {}, s.tab.watch.navigationCount()
		if !s.tab.treeBuilt || s.tab.treeNavs != navs {
			built = s.buildTree(exec)
			s.tab.treeBuilt, s.tab.treeNavs = true, navs
		}
		layout, ax, err = readByElements(exec, derive)
		built()
	}
	if !byElement || errors.Is(err, errElementRead) {
		layout, ax, err = s.readWholeTree(exec)
	}
	if id != "" && frameLoader(exec) != loader {
		loader = ""
	}
	if err != nil {
		return nil, err
	}
	if len(layout.Documents) == 0 {
		return nil, errors.New("read the page's layout: no document")
	}
	fc := &snapshot.Capture{Target: id, Loader: loader, Layout: &layout, AX: ax, Frames: map[cdp.BackendNodeID]*snapshot.Capture{}}
	if depth >= maxFrameDepth {
		return fc, nil
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, owner := range oopifOwners(&layout) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			desc, err := chromedp.Call(exec, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: owner})
			if err != nil || desc.Node == nil || desc.Node.FrameID == "" {
				return
			}
			sub := &snapshot.Capture{Target: target.ID(desc.Node.FrameID), URL: desc.Node.DocumentURL}
			fctx, cancel, err := s.inFrame(ctx, sub.Target)
			if err == nil {
				defer cancel()
				if c, err := s.capture(ctx, fctx, sub.Target, depth+1); err == nil {
					sub = c
				}
			}
			mu.Lock()
			fc.Frames[owner] = sub
			mu.Unlock()
		}()
	}
	wg.Wait()
	return fc, nil
}

// oopifOwners are the iframe (and frame) elements of a capture whose
// document is not in it: it is in another process.
func oopifOwners(layout *domsnapshot.CaptureSnapshotResult) []cdp.BackendNodeID {
	var out []cdp.BackendNodeID
	for _, d := range layout.Documents {
		has := map[int64]bool{}
		if c := d.Nodes.ContentDocumentIndex; c != nil {
			for _, i := range c.Index {
				has[i] = true
			}
		}
		for i, name := range d.Nodes.NodeName {
			tag := strings.ToLower(snapshot.StringAt(layout.Strings, name))
			if (tag == "iframe" || tag == "frame") && !has[int64(i)] {
				out = append(out, d.Nodes.BackendNodeID[i])
			}
		}
	}
	return out
}

// paginate splits text into pages of at most budget bytes, at line ends
// (a line longer than the budget is split inside, at a rune boundary), so
// that the pages, joined, are the text. No page ends inside one of the
// spans keep (sorted [start, end) byte offsets of text): it ends before
// the span, or after it when the span starts the page.
func paginate(text string, budget int, keep [][2]int) []string {
	if budget <= 0 || len(text) <= budget {
		return []string{text}
	}
	var pages []string
	off := 0 // where text starts in the whole
	for len(text) > budget {
		cut := strings.LastIndexByte(text[:budget], '\n') + 1
		if cut <= 0 {
			for cut = budget; cut > 0 && !isRuneStart(text[cut]); cut-- {
			}
		}
		for _, k := range keep {
			start, end := k[0]-off, k[1]-off
			if start < cut && cut < end {
				if cut = start; cut <= 0 {
					cut = min(end, len(text))
				}
				break
			}
		}
		pages = append(pages, text[:cut])
		text, off = text[cut:], off+cut
	}
	return append(pages, text)
}

// pageOf is page n of pages of command's reply, and the line that says
// where it is and how to go on. The line is browsergate's own: the reply
// writes it after the page content's fence (reply), never inside, where a
// page could print a look-alike.
func pageOf(command string, pages []string, n int) (page, where string) {
	if n < len(pages) {
		return pages[n-1], fmt.Sprintf("[page %d of %d of this %s; the next: %s {page: %d}]", n, len(pages), command, command, n+1)
	}
	return pages[n-1], fmt.Sprintf("[page %d of %d of this %s: the end]", n, len(pages), command)
}

// fullAXTree is Accessibility.getFullAXTree read into axNode: the fields
// a snapshot uses, and nothing of the rest (each name's sources, the
// ignored reasons, the tree's links), which Go would otherwise decode
// for nothing: on a long page the answer is several MB.
var fullAXTree = cdp.Command[accessibility.GetFullAXTreeParams, axTree]{Method: accessibility.CommandGetFullAXTree}

type axTree struct {
	Nodes []*axNode `json:"nodes"`
}

// axNode is the part of an accessibility.Node a snapshot reads.
type axNode struct {
	Ignored          bool              `json:"ignored"`
	Role             *axValue          `json:"role"`
	Name             *axValue          `json:"name"`
	Value            *axValue          `json:"value"`
	Properties       []axProperty      `json:"properties"`
	BackendDOMNodeID cdp.BackendNodeID `json:"backendDOMNodeId"`
}

type axValue struct {
	Value jsonv2.Value `json:"value"`
}

type axProperty struct {
	Name  string   `json:"name"`
	Value *axValue `json:"value"`
}

// axIndex keys the accessibility tree's nodes by their DOM node: role,
// name, value and states.
func axIndex(nodes []*axNode) map[cdp.BackendNodeID]*snapshot.AXNode {
	out := make(map[cdp.BackendNodeID]*snapshot.AXNode, len(nodes))
	for _, n := range nodes {
		if n.BackendDOMNodeID == 0 || n.Ignored {
			continue
		}
		info := &snapshot.AXNode{Role: axString(n.Role), Name: axString(n.Name), Value: axString(n.Value), Props: map[string]string{}}
		for _, p := range n.Properties {
			info.Props[p.Name] = axString(p.Value)
		}
		out[n.BackendDOMNodeID] = info
	}
	return out
}

// axString decodes an AX value to a string: strings as they are, other JSON
// values in their JSON text.
func axString(v *axValue) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err == nil {
		return s
	}
	return string(v.Value)
}
