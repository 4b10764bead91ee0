package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// ax builds an accessibility node for the renderer tests.
func ax(id, parent, role, name string, backend int64, kids ...string) *accessibility.Node {
	n := &accessibility.Node{NodeID: accessibility.NodeID(id), ParentID: accessibility.NodeID(parent),
		Role: axValue(role), BackendDOMNodeID: cdp.BackendNodeID(backend)}
	if name != "" {
		n.Name = axValue(name)
	}
	for _, k := range kids {
		n.ChildIDs = append(n.ChildIDs, accessibility.NodeID(k))
	}
	return n
}

func axValue(v any) *accessibility.Value {
	b, _ := json.Marshal(v)
	return &accessibility.Value{Value: b}
}

func TestSnapshotRendering(t *testing.T) {
	t.Parallel()
	link := ax("4", "3", "link", "Docs", 40, "5")
	link.Properties = []*accessibility.Property{{Name: "url", Value: &accessibility.Value{Value: []byte(`"http://site.test/docs"`)}}}
	heading := ax("6", "1", "heading", "Sign in", 60, "7")
	heading.Properties = []*accessibility.Property{{Name: "level", Value: &accessibility.Value{Value: []byte(`1`)}}}
	box := ax("9", "8", "textbox", "Username", 90)
	box.Value = &accessibility.Value{Value: []byte(`"alice"`)}
	ignored := ax("2", "1", "none", "", 20, "3")
	ignored.Ignored = true
	nodes := []*accessibility.Node{
		ax("1", "", "RootWebArea", "Login", 10, "2", "6", "8", "11"),
		ignored,
		ax("3", "2", "navigation", "", 30, "4"),
		link,
		ax("5", "4", "StaticText", "Docs", 50),
		heading,
		ax("7", "6", "StaticText", "Sign in", 70),
		ax("8", "1", "form", "", 80, "9", "10"),
		box,
		ax("10", "8", "button", "Sign in", 100),
		ax("11", "1", "StaticText", "  Welcome\n back ", 110),
	}
	sn := &snapshotter{nodes: map[accessibility.NodeID]*accessibility.Node{}, origin: "http://site.test", refs: map[string]cdp.BackendNodeID{}}
	for _, n := range nodes {
		sn.nodes[n.NodeID] = n
	}
	sn.walk(nodes[0], 0)
	want := `navigation:
  link "Docs" [ref=e1] -> /docs
heading "Sign in" [level=1]
form:
  textbox "Username" [ref=e2] value="alice"
  button "Sign in" [ref=e3]
text "Welcome back"
`
	if got := sn.b.String(); got != want {
		t.Fatalf("snapshot:\n%s\nwant:\n%s", got, want)
	}
	if sn.refs["e1"] != 40 || sn.refs["e2"] != 90 || sn.refs["e3"] != 100 || len(sn.refs) != 3 {
		t.Fatalf("refs = %v", sn.refs)
	}
}

func TestClipKeepsRunesWhole(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 10) // 2 bytes each
	got := clip(s, 5)
	if !strings.HasSuffix(got, "…") || strings.ContainsRune(got, '\uFFFD') || len(got) > 5+len("…") {
		t.Fatalf("clip(%q, 5) = %q", s, got)
	}
}

func TestPruneDropsLabelEchoesAndSeparators(t *testing.T) {
	t.Parallel()
	in := "form:\n  text \"Username\"\n  textbox \"Username\" [ref=e1]\n  text \"·\"\n  text \"Keep me\"\n  button \"Go\" [ref=e2]\n"
	want := "form:\n  textbox \"Username\" [ref=e1]\n  text \"Keep me\"\n  button \"Go\" [ref=e2]\n"
	if got := prune(in); got != want {
		t.Fatalf("prune:\n%s\nwant:\n%s", got, want)
	}
}
