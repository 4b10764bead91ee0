package evidence_test

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// TestExportHTMLInteractionCount: a call refused before it counted as an
// interaction (count 0) says so, instead of "interaction 0".
func TestExportHTMLInteractionCount(t *testing.T) {
	t.Parallel()
	doc, _, _ := exportHTML(t, reportFixture(t, nil), evidence.HTMLOptions{})
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) < 2 {
		t.Fatalf("%d interaction rows", len(rows))
	}
	if got := text(rows[0]); !strings.Contains(got, "interaction 1") {
		t.Errorf("a counted call does not show its count: %q", got)
	}
	if got := text(rows[1]); !strings.Contains(got, "not counted") || strings.Contains(got, "interaction 0") {
		t.Errorf("a call refused before it counted: %q", got)
	}
}
