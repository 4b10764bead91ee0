package executor

import (
	"strings"
	"testing"
)

// TestPaginate: pages end at line ends, fit the budget, and join to the
// whole text; a line longer than the budget is split at a rune boundary.
func TestPaginate(t *testing.T) {
	text := strings.Repeat("line of text\n", 50) + strings.Repeat("é", 40) + "\nend"
	for _, budget := range []int{20, 33, 100, 1000} {
		pages := paginate(text, budget, nil)
		if strings.Join(pages, "") != text {
			t.Fatalf("budget %d: pages do not join to the text", budget)
		}
		for i, p := range pages {
			if len(p) > budget || !strings.HasSuffix(p, "\n") && i < len(pages)-1 && strings.Contains(p, "\n") {
				t.Errorf("budget %d: page %d (%d bytes) %q", budget, i+1, len(p), p)
			}
		}
	}
	if page, where := pageOf("snapshot", []string{"a\n", "b"}, 1); page != "a\n" || !strings.Contains(where, "snapshot {page: 2}") {
		t.Errorf("page 1 is not the page alone, or does not say how to get page 2: %q, %q", page, where)
	}
	if page, where := pageOf("snapshot", []string{"a\n", "b"}, 2); page != "b" || where != "[page 2 of 2 of this snapshot: the end]" {
		t.Errorf("page 2: %q, %q", page, where)
	}
}

// TestPaginateKeepsSpansWhole: a page never ends inside a span to keep (a
// secret the record masks): it ends before it, or after it when the span
// starts the page.
func TestPaginateKeepsSpansWhole(t *testing.T) {
	text := strings.Repeat("x", 15) + "SECRETVALUE" + strings.Repeat("y", 30)
	keep := [][2]int{{15, 26}}
	for _, budget := range []int{10, 20, 24, 30} {
		pages := paginate(text, budget, keep)
		if strings.Join(pages, "") != text {
			t.Fatalf("budget %d: pages do not join to the text", budget)
		}
		whole := false
		for _, p := range pages {
			if strings.Contains(p, "SECRETVALUE") {
				whole = true
			} else if strings.Contains(p, "SECRET") || strings.Contains(p, "VALUE") {
				t.Errorf("budget %d: a page holds a piece of the span: %q", budget, p)
			}
		}
		if !whole {
			t.Errorf("budget %d: no page holds the span whole: %q", budget, pages)
		}
	}
}
