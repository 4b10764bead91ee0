package replay

import (
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestSameOutputIgnoresOnlyTheFetchTime proves a replayed fetch_page
// whose output differs only in its fetch time is the same, and that any
// other difference, a truncated output, or another command's differing
// output is not.
func TestSameOutputIgnoresOnlyTheFetchTime(t *testing.T) {
	t.Parallel()
	rec := func(command, out, sha string, truncated bool) *evidence.Envelope {
		return &evidence.Envelope{Command: command, Output: out, OutputSHA256: sha, OutputTruncated: truncated}
	}
	was := "Title: A\nURL: http://a/\nFetched: 2026-11-28T10:00:00Z\nLength: 3 characters\n\nabc"
	now := "Title: A\nURL: http://a/\nFetched: 2026-11-28T16:00:07Z\nLength: 3 characters\n\nabc"
	other := "Title: A\nURL: http://a/\nFetched: 2026-11-28T16:00:07Z\nLength: 3 characters\n\nabd"
	for _, tc := range []struct {
		name      string
		want, got *evidence.Envelope
		same      bool
	}{
		{"the same bytes", rec("read", "x", "1", false), rec("read", "y", "1", false), true},
		{"only the fetch time", rec("fetch_page", was, "1", false), rec("fetch_page", now, "2", false), true},
		{"the text too", rec("fetch_page", was, "1", false), rec("fetch_page", other, "2", false), false},
		{"truncated", rec("fetch_page", was, "1", true), rec("fetch_page", now, "2", true), false},
		{"another command", rec("read", was, "1", false), rec("read", now, "2", false), false},
	} {
		if got := sameOutput(tc.want, tc.got); got != tc.same {
			t.Errorf("%s: sameOutput = %v, want %v", tc.name, got, tc.same)
		}
	}
}
