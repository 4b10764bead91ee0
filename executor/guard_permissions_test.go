package executor

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// TestAskingFrameAppliesGrantsOnlyWhereTheBrowserDoes proves when a
// report's frame is one a grant to its URL's origin reaches: a page's
// main frame, or a frame embedded only by documents of the same origin,
// whose execution context has that origin. A frame embedded by another
// origin (however deep), a sandboxed document (an opaque origin), a
// context whose origin is not its URL's, and a frame whose embedder the
// guard does not know are each Unapplied, with a reason that says which;
// a frame the guard does not know has no URL.
func TestAskingFrameAppliesGrantsOnlyWhereTheBrowserDoes(t *testing.T) {
	t.Parallel()
	const a, b = "http://127.0.0.1:8000", "http://127.0.0.2:9000"
	g := &targetGuard{
		pages: map[string]string{"s-top-a": "top-a", "s-top-b": "top-b"},
		frames: map[string]string{
			"top-a": a + "/", "top-b": b + "/",
			"a-in-a": a + "/ask", "a-in-a-in-a": a + "/deeper",
			"a-in-b": a + "/ask", "b-in-a": b + "/mid", "a-in-b-in-a": a + "/ask",
			"orphan": a + "/ask", "uncommitted": "", "blank-in-a": "about:blank",
		},
		frameParents: map[string]string{
			"a-in-a": "top-a", "a-in-a-in-a": "a-in-a",
			"a-in-b": "top-b", "b-in-a": "top-a", "a-in-b-in-a": "b-in-a", "blank-in-a": "top-a",
		},
	}
	tests := []struct {
		name      string
		ctx       reportingContext
		url       string
		unapplied string // what the reason holds ("" when the grant applies)
	}{
		{"the top-level page of the origin", reportingContext{"top-a", a}, a + "/", ""},
		{"a frame of the origin in a page of the origin", reportingContext{"a-in-a", a}, a + "/ask", ""},
		{"a frame of the origin two deep in the origin", reportingContext{"a-in-a-in-a", a}, a + "/deeper", ""},
		{"a frame of the origin in another origin's page", reportingContext{"a-in-b", a}, a + "/ask", "embedded by " + pagetext.Value(b)},
		{"a frame of the origin in another origin's frame of the origin's page", reportingContext{"a-in-b-in-a", a}, a + "/ask", "embedded by " + pagetext.Value(b)},
		{"a sandboxed frame of the origin in the origin", reportingContext{"a-in-a", "://"}, a + "/ask", "sandboxed"},
		{"a sandboxed frame said to be null", reportingContext{"a-in-a", "null"}, a + "/ask", "sandboxed"},
		{"a sandboxed top-level page", reportingContext{"top-a", ""}, a + "/", "sandboxed"},
		{"a context of another origin than its URL's", reportingContext{"a-in-a", b}, a + "/ask", "has the origin " + pagetext.Value(b)},
		{"a frame whose embedder is not known", reportingContext{"orphan", a}, a + "/ask", "does not know which page embeds"},
		{"a frame of no web origin", reportingContext{"blank-in-a", a}, "about:blank", ""},
		{"a frame the guard does not know", reportingContext{"gone", a}, "", ""},
		{"a frame that has not committed", reportingContext{"uncommitted", a}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := g.askingFrame(tt.ctx)
			if got.URL != tt.url {
				t.Errorf("URL %q, want %q", got.URL, tt.url)
			}
			if tt.unapplied == "" && got.Unapplied != "" || !strings.Contains(got.Unapplied, tt.unapplied) {
				t.Errorf("Unapplied %q, want one that says %q", got.Unapplied, tt.unapplied)
			}
		})
	}
}

// TestAskingFrameEndsALoopOfParents proves a loop in the frames' parents
// (which the browser never reports) ends the walk as unknown: recorded
// as refused, never as a grant.
func TestAskingFrameEndsALoopOfParents(t *testing.T) {
	t.Parallel()
	g := &targetGuard{
		pages:        map[string]string{},
		frames:       map[string]string{"x": "http://127.0.0.1/", "y": "http://127.0.0.1/"},
		frameParents: map[string]string{"x": "y", "y": "x"},
	}
	if got := g.askingFrame(reportingContext{"x", "http://127.0.0.1"}); got.Unapplied == "" {
		t.Errorf("a frame in a loop of parents is taken as one a grant reaches: %+v", got)
	}
}
