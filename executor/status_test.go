package executor

import "testing"

// withStatus puts the document's HTTP status on the first line of a
// navigate's output, before any note added after it, and adds nothing for
// an unknown status.
func TestWithStatus(t *testing.T) {
	for _, c := range []struct {
		text   string
		status int
		want   string
	}{
		{"navigated to http://a/", 200, "navigated to http://a/ (HTTP 200 OK)"},
		{"navigated to http://a/x", 404, "navigated to http://a/x (HTTP 404 Not Found)"},
		{"navigated to http://a/\n[a note]", 200, "navigated to http://a/ (HTTP 200 OK)\n[a note]"},
		{"navigated to http://a/", 0, "navigated to http://a/"},
	} {
		if got := withStatus(c.text, c.status); got != c.want {
			t.Errorf("withStatus(%q, %d) = %q, want %q", c.text, c.status, got, c.want)
		}
	}
}
