package replay

import (
	"regexp"

	"github.com/browsergate/browsergate/evidence"
)

// fetchedLine is the line of fetch_page's header that says when the page
// was fetched: a replay fetches it at another time, so it is the one line
// of the output that cannot repeat.
var fetchedLine = regexp.MustCompile(`(?m)^Fetched: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// sameOutput reports whether the replayed call's output is the recorded
// one: the same bytes, or for fetch_page the same but for the fetch time
// (both outputs recorded whole, so nothing unseen can differ).
func sameOutput(want, got *evidence.Envelope) bool {
	if want.OutputSHA256 == got.OutputSHA256 {
		return true
	}
	if want.Command != "fetch_page" || want.OutputTruncated || got.OutputTruncated {
		return false
	}
	return fetchedLine.ReplaceAllString(want.Output, "Fetched:") == fetchedLine.ReplaceAllString(got.Output, "Fetched:")
}
