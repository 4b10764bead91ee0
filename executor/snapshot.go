package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Snapshot limits keep a long page from flooding the agent's context.
const (
	maxNameLen     = 120
	maxTextLen     = 300
	maxSnapshotLen = 60000
)

// interactive roles get a ref the other commands accept.
var interactive = map[string]bool{
	"link": true, "button": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "listbox": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true, "spinbutton": true,
	"treeitem": true, "option": true,
}

// containers are printed as a line with their children indented below.
var containers = map[string]bool{
	"navigation": true, "main": true, "form": true, "list": true, "table": true, "dialog": true,
	"alertdialog": true, "banner": true, "contentinfo": true, "complementary": true, "region": true,
	"article": true, "search": true, "row": true, "alert": true,
}

// skipped roles carry nothing the agent needs.
var skipped = map[string]bool{"InlineTextBox": true, "ListMarker": true, "LineBreak": true}

// snapshotter renders an accessibility tree as compact indented text and
// assigns refs e1, e2, ... to interactive elements in document order.
type snapshotter struct {
	mask   func(string) string // masks secret values
	nodes  map[accessibility.NodeID]*accessibility.Node
	origin string
	b      strings.Builder
	refs   map[string]cdp.BackendNodeID
	next   int
}

// snapshot reads the accessibility tree in one round trip and renders it,
// from the element sel matches when sel is set. It replaces the session's
// refs.
func (s *session) snapshot(ctx context.Context, sel string, origin string) (string, error) {
	var scopeNode cdp.BackendNodeID
	if sel != "" {
		el, err := s.querySelector(ctx, sel)
		if err != nil {
			return "", err
		}
		scopeNode = el.backend
	}
	res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return "", fmt.Errorf("read accessibility tree: %w", err)
	}
	sn := &snapshotter{nodes: make(map[accessibility.NodeID]*accessibility.Node, len(res.Nodes)),
		origin: origin, refs: map[string]cdp.BackendNodeID{}, mask: s.maskText}
	var root *accessibility.Node
	for _, n := range res.Nodes {
		sn.nodes[n.NodeID] = n
		if root == nil && n.ParentID == "" {
			root = n
		}
		if scopeNode != 0 && n.BackendDOMNodeID == scopeNode {
			root = n
		}
	}
	if root == nil {
		return "", fmt.Errorf("the page has no accessibility tree yet")
	}
	if scopeNode != 0 && root.BackendDOMNodeID != scopeNode {
		return "", fmt.Errorf("selector %q matches an element with no accessible content", sel)
	}
	sn.walk(root, 0)
	s.tab.refs = sn.refs
	out := prune(sn.b.String())
	if len(out) > maxSnapshotLen {
		out = out[:maxSnapshotLen] + fmt.Sprintf("\n[snapshot truncated at %d characters: pass a selector to scope it]", maxSnapshotLen)
	}
	return out, nil
}

// prune drops lines that cost tokens and carry nothing: text that only
// repeats the name of the field or control right below it (a label), and
// text made only of punctuation (separators such as "·" or "|").
func prune(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if q, ok := strings.CutPrefix(t, "text "); ok {
			if !hasWordChar(q) {
				continue
			}
			if i+1 < len(lines) && strings.Contains(lines[i+1], " "+q+" [ref=") {
				continue
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

func (sn *snapshotter) walk(n *accessibility.Node, depth int) {
	role := sn.str(n.Role)
	if n.Ignored || role == "" || role == "none" || role == "generic" || role == "RootWebArea" ||
		role == "paragraph" || role == "LabelText" || role == "group" || role == "listitem" ||
		role == "cell" || role == "gridcell" || role == "Section" || role == "document" {
		sn.children(n, depth)
		return
	}
	if skipped[role] {
		return
	}
	name := clip(sn.str(n.Name), maxNameLen)
	switch {
	case role == "StaticText":
		if t := clip(collapse(sn.str(n.Name)), maxTextLen); t != "" {
			sn.line(depth, "text "+strconv.Quote(t))
		}
	case role == "heading":
		sn.line(depth, fmt.Sprintf("heading %s [level=%s]", strconv.Quote(name), axProp(n, "level")))
	case role == "image" || role == "img":
		if name != "" {
			sn.line(depth, "img "+strconv.Quote(name))
		}
	case interactive[role]:
		sn.interactive(n, role, name, depth)
	case containers[role]:
		head := role
		if name != "" {
			head += " " + strconv.Quote(name)
		}
		sn.line(depth, head+":")
		sn.children(n, depth+1)
	default:
		if name != "" {
			sn.line(depth, role+" "+strconv.Quote(name))
		}
		sn.children(n, depth)
	}
}

func (sn *snapshotter) interactive(n *accessibility.Node, role, name string, depth int) {
	var b strings.Builder
	b.WriteString(role)
	if name != "" {
		b.WriteString(" " + strconv.Quote(name))
	}
	if n.BackendDOMNodeID != 0 {
		sn.next++
		ref := "e" + strconv.Itoa(sn.next)
		sn.refs[ref] = n.BackendDOMNodeID
		b.WriteString(" [ref=" + ref + "]")
	}
	for _, flag := range []string{"checked", "selected", "disabled", "required", "expanded", "focused"} {
		if v := axProp(n, flag); v == "true" || v == "mixed" {
			b.WriteString(" [" + flag + "]")
		}
	}
	if v := clip(sn.str(n.Value), maxNameLen); v != "" && role != "link" {
		b.WriteString(" value=" + strconv.Quote(v))
	}
	if role == "link" {
		if u := axProp(n, "url"); u != "" {
			b.WriteString(" -> " + strings.TrimPrefix(u, sn.origin))
		}
	}
	if role == "combobox" || role == "listbox" {
		if opts := sn.optionNames(n, 12); opts != "" {
			b.WriteString(" options: " + opts)
		}
	}
	sn.line(depth, b.String())
	// The name already carries a link's or button's text; a text field's
	// children are its own editor internals. Only nested interactive
	// elements (rare) are worth a line.
	if role != "combobox" && role != "listbox" {
		sn.nestedInteractive(n, depth+1)
	}
}

func (sn *snapshotter) nestedInteractive(n *accessibility.Node, depth int) {
	for _, id := range n.ChildIDs {
		c := sn.nodes[id]
		if c == nil {
			continue
		}
		if r := sn.str(c.Role); interactive[r] && !c.Ignored {
			sn.interactive(c, r, clip(sn.str(c.Name), maxNameLen), depth)
			continue
		}
		sn.nestedInteractive(c, depth)
	}
}

func (sn *snapshotter) optionNames(n *accessibility.Node, limit int) string {
	var names []string
	var visit func(*accessibility.Node)
	visit = func(x *accessibility.Node) {
		for _, id := range x.ChildIDs {
			c := sn.nodes[id]
			if c == nil || len(names) >= limit {
				continue
			}
			if sn.str(c.Role) == "option" {
				names = append(names, strconv.Quote(clip(sn.str(c.Name), 40)))
				continue
			}
			visit(c)
		}
	}
	visit(n)
	return strings.Join(names, ", ")
}

func (sn *snapshotter) children(n *accessibility.Node, depth int) {
	for _, id := range n.ChildIDs {
		if c := sn.nodes[id]; c != nil {
			sn.walk(c, depth)
		}
	}
}

func (sn *snapshotter) line(depth int, s string) {
	sn.b.WriteString(strings.Repeat("  ", depth))
	sn.b.WriteString(s)
	sn.b.WriteByte('\n')
}

// axString decodes an AX value to a string: strings as they are, other JSON
// values in their JSON text.
// str is a node value as text, with secret values masked before anything
// clips or collapses it (a clipped secret would show its prefix).
func (sn *snapshotter) str(v *accessibility.Value) string {
	t := axString(v)
	if sn.mask != nil {
		t = sn.mask(t)
	}
	return t
}

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
