package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/chromedp"
)

// Snapshot limits. A snapshot is never cut silently: one longer than its
// budget (the max_chars argument) is split into pages at line ends, and
// each page but the last ends with the call that gives the next.
const (
	maxNameLen = 120
	maxTextLen = 300
	// defaultSnapshotBudget holds a 300 KB reference page in one reply.
	defaultSnapshotBudget = 200000
	maxSnapshotLen        = 60000 // extract_mode = "text" (a plain innerText dump)
)

// snapshot reads the page's layout and accessibility tree (one round trip
// each, in parallel) and renders them (render.go), from the element sel
// matches when sel is set. It replaces the session's refs, and returns the
// first page of the text; the others wait for snapshot {page: N}.
func (s *session) snapshot(ctx context.Context, sel, origin string, budget int) (string, error) {
	var scopeNode cdp.BackendNodeID
	if sel != "" {
		el, err := s.querySelector(ctx, sel)
		if err != nil {
			return "", err
		}
		scopeNode = el.backend
	}
	var (
		wg     sync.WaitGroup
		axRes  accessibility.GetFullAXTreeResult
		axErr  error
		layout domsnapshot.CaptureSnapshotResult
		lErr   error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		axRes, axErr = chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	}()
	layout, lErr = chromedp.Call(ctx, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: snapStyles})
	wg.Wait()
	if axErr != nil {
		return "", fmt.Errorf("read the accessibility tree: %w", axErr)
	}
	if lErr != nil || len(layout.Documents) == 0 {
		return "", fmt.Errorf("read the page's layout: %v", lErr)
	}
	ax := axIndex(axRes.Nodes)
	s.frameAX(ctx, &layout, ax)
	page, _, _ := strings.Cut(strIndex(layout.Strings, layout.Documents[0].DocumentURL), "#")
	r := &renderer{snap: &layout, ax: ax, origin: origin, page: page, refs: map[string]refTarget{}}
	v := newDocView(layout.Documents[0])
	r.top = v
	root := -1
	for i, id := range v.d.Nodes.BackendNodeID {
		if (scopeNode == 0 && v.d.Nodes.ParentIndex[i] < 0) || (scopeNode != 0 && id == scopeNode) {
			root = i
			break
		}
	}
	if root < 0 {
		return "", fmt.Errorf("selector %q matches no element of the tab's own document", sel)
	}
	r.render(v, root)
	text := s.maskText(r.output()) // before it is split: a split secret would show its pieces
	if text == "" {
		text = "(the page shows no text)"
	}
	s.tab.refs, s.tab.refsNavs = r.refs, s.tab.watch.navigationCount()
	return s.firstPage("snapshot", text, budget), nil
}

// paged is the text of the latest reply of a command that did not fit
// one reply (snapshot, read), split into pages, and the document it is of.
type paged struct {
	command string
	pages   []string
	navs    int
}

// firstPage keeps text's pages for command {page: N} when it does not
// fit budget, and returns the first (or the whole text).
func (s *session) firstPage(command, text string, budget int) string {
	s.tab.paged = paged{}
	pages := paginate(text, budget)
	if len(pages) == 1 {
		return text
	}
	s.tab.paged = paged{command: command, pages: pages, navs: s.tab.watch.navigationCount()}
	return pageOf(command, pages, 1)
}

// nextPage is page n of command's latest reply that did not fit one.
func (s *session) nextPage(command string, n int) (string, error) {
	p := s.tab.paged
	switch {
	case p.command != command:
		return "", fmt.Errorf("there is no %s reply with more pages: call %s without page first", command, command)
	case p.navs != s.tab.watch.navigationCount():
		return "", fmt.Errorf("the tab has moved to another document since that %s: call it again", command)
	case n < 1 || n > len(p.pages):
		return "", fmt.Errorf("the latest %s has pages 1 to %d, not %d", command, len(p.pages), n)
	}
	return pageOf(command, p.pages, n), nil
}

// frameAX adds the accessibility trees of the embedded documents the
// layout holds (same-process frames) to ax, read in parallel; a frame
// whose tree cannot be read shows its text without controls.
func (s *session) frameAX(ctx context.Context, layout *domsnapshot.CaptureSnapshotResult, ax map[cdp.BackendNodeID]*axInfo) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, d := range layout.Documents[1:] {
		frame := cdp.FrameID(strIndex(layout.Strings, d.FrameID))
		if frame == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: frame})
			if err != nil {
				return
			}
			mu.Lock()
			maps.Copy(ax, axIndex(res.Nodes))
			mu.Unlock()
		}()
	}
	wg.Wait()
}

func strIndex(strs []string, i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(strs) {
		return ""
	}
	return strs[i]
}

// paginate splits text into pages of at most budget bytes, at line ends
// (a line longer than the budget is split inside, at a rune boundary), so
// that the pages, joined, are the text.
func paginate(text string, budget int) []string {
	if budget <= 0 || len(text) <= budget {
		return []string{text}
	}
	var pages []string
	for len(text) > budget {
		cut := strings.LastIndexByte(text[:budget], '\n') + 1
		if cut <= 0 {
			for cut = budget; cut > 0 && !isRuneStart(text[cut]); cut-- {
			}
		}
		pages = append(pages, text[:cut])
		text = text[cut:]
	}
	return append(pages, text)
}

// pageOf is page n of pages of command's reply with the line that says
// where it is and how to go on.
func pageOf(command string, pages []string, n int) string {
	p := pages[n-1]
	if !strings.HasSuffix(p, "\n") {
		p += "\n" // a page that ends inside a line: the marker has a line of its own
	}
	if n < len(pages) {
		return p + fmt.Sprintf("[page %d of %d of this %s; the next: %s {page: %d}]", n, len(pages), command, command, n+1)
	}
	return p + fmt.Sprintf("[page %d of %d of this %s: the end]", n, len(pages), command)
}

// axIndex keys the accessibility tree's nodes by their DOM node: role,
// name, value and states.
func axIndex(nodes []*accessibility.Node) map[cdp.BackendNodeID]*axInfo {
	out := make(map[cdp.BackendNodeID]*axInfo, len(nodes))
	for _, n := range nodes {
		if n.BackendDOMNodeID == 0 || n.Ignored {
			continue
		}
		info := &axInfo{role: axString(n.Role), name: axString(n.Name), value: axString(n.Value), props: map[string]string{}}
		for _, p := range n.Properties {
			info.props[string(p.Name)] = axString(p.Value)
		}
		out[n.BackendDOMNodeID] = info
	}
	return out
}

// axString decodes an AX value to a string: strings as they are, other JSON
// values in their JSON text.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err == nil {
		return s
	}
	return string(v.Value)
}

func axProp(n *accessibility.Node, name string) string {
	for _, p := range n.Properties {
		if string(p.Name) == name {
			return axString(p.Value)
		}
	}
	return ""
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
