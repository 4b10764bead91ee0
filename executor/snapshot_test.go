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
		pages := paginate(text, budget)
		if strings.Join(pages, "") != text {
			t.Fatalf("budget %d: pages do not join to the text", budget)
		}
		for i, p := range pages {
			if len(p) > budget || !strings.HasSuffix(p, "\n") && i < len(pages)-1 && strings.Contains(p, "\n") {
				t.Errorf("budget %d: page %d (%d bytes) %q", budget, i+1, len(p), p)
			}
		}
	}
	if got := pageOf("snapshot", []string{"a\n", "b"}, 1); !strings.Contains(got, "snapshot {page: 2}") {
		t.Errorf("page 1 does not say how to get page 2: %q", got)
	}
}
