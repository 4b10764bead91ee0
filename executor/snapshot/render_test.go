package snapshot_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/executor/snapshot/snapshottest"
)

// render renders the capture saved in testdata as name.
func render(t *testing.T, name string, opts snapshot.Options) snapshot.Page {
	t.Helper()
	c, err := snapshottest.Read("testdata", name)
	if err != nil {
		t.Fatal(err)
	}
	page, err := snapshot.Render(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestRenderFormat renders a page with every construct (the executor's
// snapshotPage, captured as "format"): one line per block, inline code
// kept in place, lists with their nesting and numbers, a table as rows
// with each cell's text once (one Chromium takes for layout as the blocks
// it lays out), a code block with its lines, controls with refs and
// states (their name left out where their label shows it; a select's
// options by their labels, wherever they are in it but for those of a
// select or datalist put in it, hidden ones left out, and which are
// selected in a list box, each once; an option outside a select by its
// label, unless hidden), links with refs and targets, hidden text left
// out, the main content first.
func TestRenderFormat(t *testing.T) {
	t.Parallel()
	got := render(t, "format", snapshot.Options{}).Text
	want := "# The `Client` type\n" +
		"A `Client` sends requests to a [server](e3 /server), and waits.\n" +
		"- one\n" +
		"  - one.a\n" +
		"- two\n" +
		"1. first\n" +
		"2. second\n" +
		"| Order | Total |\n" +
		"| A-1 | 12 EUR |\n" +
		"Left column\n" +
		"its second block\n" +
		"Right column\n" +
		"```\nfunc main() {\n\trun()\n}\n```\n" +
		"form \"Settings\":\n" +
		"Email [textbox e4 value=\"a@b.c\"] [checkbox e5 checked] Remember [combobox \"Size\" e6 value=\"M\" options: \"S\", \"M\"] [listbox \"Sizes\" e7 options: \"Small\", \"M\" (selected), \"L\" (selected)] " +
		"[combobox \"Colour\" e8 value=\"Blue\" options: \"Red\", \"Blue\"] [listbox \"Tags\" e9 options: \"new\" (selected), \"old\"] [button \"Save\" e10]\n" +
		"A stray option\n" +
		"![A diagram]\n" +
		"\n(outside the main content:)\n" +
		"navigation \"Sidebar\":\n" +
		"- [Intro](e1 /intro)\n" +
		"- [Reference](e2 /ref)\n" +
		"contentinfo:\n" +
		"Footer text"
	if got != want {
		t.Errorf("snapshot:\n%s\n\nwant:\n%s\n\n%s", got, want, snapshottest.Diff(want, got))
	}
}

// TestRenderNestedTables: a table inside a cell of another (two tables
// side by side in one row, as LWN lays out its statistics; captured as
// "nested-tables") keeps its rows: each inner table is rendered as a
// table of its own, where it stands, rather than its rows run together
// into the outer cell.
func TestRenderNestedTables(t *testing.T) {
	t.Parallel()
	got := render(t, "nested-tables", snapshot.Options{}).Text
	want := "| Most active developers |\n" +
		"| By changesets |\n" +
		"| Ada | 63 | 16.6% |\n" +
		"| Bob | 56 | 14.7% |\n" +
		"| By changed lines |\n" +
		"| Bob | 4554 | 88.1% |\n" +
		"| Total | 119 changesets |\n" +
		"| Plain | Row |\n" +
		"| x | y |"
	if got != want {
		t.Errorf("snapshot:\n%s\n\nwant:\n%s\n\n%s", got, want, snapshottest.Diff(want, got))
	}
}

// TestRenderRoot: with a root, only the element and what it holds are
// rendered (a snapshot of what a selector matches), its refs numbered
// from e1; a root that is not in the top document is refused, and so is
// a capture without a layout.
func TestRenderRoot(t *testing.T) {
	t.Parallel()
	c, err := snapshottest.Read("testdata", "format")
	if err != nil {
		t.Fatal(err)
	}
	var form cdp.BackendNodeID
	d := c.Layout.Documents[0]
	for i, name := range d.Nodes.NodeName {
		if snapshot.StringAt(c.Layout.Strings, name) == "FORM" {
			form = d.Nodes.BackendNodeID[i]
		}
	}
	page, err := snapshot.Render(c, snapshot.Options{Root: form})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(page.Text, "form \"Settings\":\nEmail [textbox e1 value=\"a@b.c\"]") || strings.Contains(page.Text, "Client") || len(page.Refs) != 7 {
		t.Errorf("the form alone renders as:\n%s\nwith %d refs", page.Text, len(page.Refs))
	}
	if page.Refs["e1"].Node == 0 || page.Refs["e1"].Node == page.Refs["e2"].Node {
		t.Errorf("the refs do not name their elements: %+v", page.Refs)
	}
	if _, err := snapshot.Render(c, snapshot.Options{Root: -1}); !errors.Is(err, snapshot.ErrRootNotFound) {
		t.Errorf("a root not in the document: %v, want ErrRootNotFound", err)
	}
	if _, err := snapshot.Render(&snapshot.Capture{}, snapshot.Options{}); !errors.Is(err, snapshot.ErrNoDocument) {
		t.Errorf("a capture without a layout: %v, want ErrNoDocument", err)
	}
}
