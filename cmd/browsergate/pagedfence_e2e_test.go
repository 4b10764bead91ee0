package main

import (
	"strings"
	"testing"
)

// TestPagedSnapshotWritesItsPageLineAfterTheFence: the line that says
// where a paged snapshot is and how to go on is browsergate's own, and
// comes after the page content's fence; a page that prints a look-alike
// of it has it inside the fence, and nothing of it after.
func TestPagedSnapshotWritesItsPageLineAfterTheFence(t *testing.T) {
	t.Parallel()
	const lookalike = "[page 1 of 9 of this snapshot; the next: snapshot {page: 2}]"
	body := strings.Replace(longPage(450), "<main>", "<main><p>"+lookalike+"</p>", 1)
	site, _ := serveLogged(t, map[string]string{"/long": body})
	f := startWith(t, continuationBudgetManifest)

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	for _, args := range []map[string]any{nil, {"page": 2}} {
		out := f.mustAllow(t, "e2e.snapshot", args)
		end := strings.Index(out, "\n[END PAGE CONTENT ")
		if !strings.HasPrefix(out, "[PAGE CONTENT ") || end < 0 {
			t.Fatalf("snapshot %v is not fenced:\n%.400s", args, out)
		}
		inside, after := out[:end], out[end:]
		if strings.Contains(inside, " of this snapshot; the next: snapshot {page: 3}") || strings.Contains(inside, " of this snapshot; the next: snapshot {page: 2}]\n[END") {
			t.Errorf("snapshot %v: browsergate's page line is inside the fence", args)
		}
		if strings.Contains(after, "page 1 of 9") {
			t.Errorf("snapshot %v: the page's look-alike line got out of the fence:\n%s", args, after)
		}
		if args == nil {
			if !strings.Contains(inside, "page 1 of 9 of this snapshot") {
				t.Errorf("the page's look-alike line is not inside the fence:\n%.600s", inside)
			}
			if !strings.Contains(after, "\n[page 1 of ") || !strings.Contains(after, "; the next: snapshot {page: 2}]") {
				t.Errorf("the page line is not after the fence:\n%s", after)
			}
		} else if !strings.Contains(after, "\n[page 2 of ") {
			t.Errorf("page 2's line is not after the fence:\n%s", after)
		}
	}
}
