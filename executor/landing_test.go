package executor

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// TestWithLanding: navigate's output says where the tab landed when it is
// not the URL asked for, on its first line and in its structured content,
// and says nothing more when the tab is where it was sent (the browser's
// spelling of the same URL included).
func TestWithLanding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, asked, landed string
		redirected          bool
	}{
		{name: "same URL", asked: "http://a.test/x", landed: "http://a.test/x"},
		{name: "the browser adds the path", asked: "http://a.test", landed: "http://a.test/"},
		{name: "the browser lowercases the host", asked: "http://A.test/x", landed: "http://a.test/x"},
		{name: "same fragment", asked: "http://a.test/x#top", landed: "http://a.test/x#top"},
		{name: "redirected", asked: "http://a.test/old", landed: "http://a.test/new", redirected: true},
		{name: "to another host", asked: "http://a.test/", landed: "http://b.test/login?next=%2F", redirected: true},
		{name: "nothing read after", asked: "http://a.test/", landed: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := output{Text: "navigated to " + pagetext.Value(c.asked) + "\n[a note]", reportStatus: true, asked: c.asked}
			out := withLanding(in, c.landed, c.landed)
			first, rest, _ := strings.Cut(out.Text, "\n")
			said := strings.Contains(first, ", and was redirected to ")
			if said != c.redirected {
				t.Errorf("first line %q: says redirected = %v, want %v", first, said, c.redirected)
			}
			if rest != "[a note]" {
				t.Errorf("the lines after the first became %q", rest)
			}
			if !c.redirected {
				if out.Structured != nil {
					t.Errorf("structured content %v for a tab where it was sent", out.Structured)
				}
				return
			}
			if !strings.Contains(pagetext.Unmarked(first), c.landed) {
				t.Errorf("first line %q does not name %s", first, c.landed)
			}
			if pagetext.Unmarked(out.Structured["final_url"].(string)) != c.landed || out.Structured["redirected"] != true {
				t.Errorf("structured content %v, want final_url %s and redirected true", out.Structured, c.landed)
			}
		})
	}
}
