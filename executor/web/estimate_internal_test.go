package web

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func treeSize(n *html.Node) int {
	c := 1
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c += treeSize(k)
	}
	return c
}

// TestEstimateBoundsTheTree: estimateNodes is never below the nodes
// html.Parse makes, on real pages and on the shapes that make the parser
// build more than a node a token (formatting elements cloned again,
// misnested end tags, raw text that is markup inside svg, implied
// elements); and the shapes that would blow up a page's tree past
// MaxNodes are refused, small as they are.
func TestEstimateBoundsTheTree(t *testing.T) {
	formatting := func(k, runs int) string {
		var b strings.Builder
		b.WriteString("<p>")
		for i := range k {
			fmt.Fprintf(&b, "<font a=%d>", i)
		}
		b.WriteString("</p>" + strings.Repeat("<div>x</div>", runs))
		return b.String()
	}
	pages := map[string]string{
		"formatting cloned":  formatting(20, 50),
		"misnested":          strings.Repeat("<b><p>x</b>y</p>", 200),
		"svg style":          "<svg><style>" + strings.Repeat("<g>x</g>", 300),
		"math title":         "<math><title>" + strings.Repeat("<mi>x</mi>", 300),
		"table foster":       "<table>" + strings.Repeat("x<td>y<tr>z<col>", 200),
		"nested tables":      strings.Repeat("<table><tr><td>", 100),
		"anchors":            strings.Repeat(`<a href="/x">x<a href="/y">y</a>`, 200),
		"unclosed lists":     strings.Repeat("<li><b>x<li><i>y", 200),
		"frameset and noise": "<frameset><frame>" + strings.Repeat("<frameset>x", 100),
	}
	for _, name := range []string{"go-memory-model.html", "wikipedia-time-loops.html"} {
		b, err := os.ReadFile("../../cmd/browsergate/testdata/docs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = string(b)
	}
	for name, page := range pages {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		if est, real := estimateNodes([]byte(page)), treeSize(doc); est < real {
			t.Errorf("%s: estimated %d nodes, the parser made %d", name, est, real)
		}
	}
	for name, page := range map[string]string{
		"formatting bomb": formatting(500, 2000),
		"svg style bomb":  "<svg><style>" + strings.Repeat("<g>x</g>", 300000),
		"both":            "<svg><style>" + formatting(500, 2000),
	} {
		if _, err := Parse([]byte(page), "text/html", "http://x.example/"); err != ErrTooLarge {
			t.Errorf("%s (%d bytes): %v, want ErrTooLarge", name, len(page), err)
		}
	}
}
