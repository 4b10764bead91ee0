package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// TestTimelineSummaryIsALinePerSession: with Summary, a session is its
// header and one line of counts, no line per record (what show --summary
// says it prints); with RefusalsOnly as well, the refused calls follow.
func TestTimelineSummaryIsALinePerSession(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	recs := map[string][]*evidence.Envelope{"s-1": {
		{Seq: 1, Time: at, Principal: "alice", Command: "navigate", Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
		{Seq: 2, Time: at, Principal: "alice", Command: "navigate", Decision: evidence.Decision{Stage: "scope", Rule: "allowed_domains"}},
		{Seq: 3, Time: at, Principal: "alice", Command: "submit_form", Decision: evidence.Decision{Allowed: true, Stage: "gate",
			Approval: &evidence.Approval{ID: "apr-1", Approved: true, Channel: "operator", By: "bob"}}},
	}}
	sessions := []evidence.SessionSummary{{ID: "s-1", First: at, Last: at, Records: 3, Head: strings.Repeat("ab", 32)}}
	for _, tc := range []struct {
		name string
		opts evidence.TimelineOptions
		want string
	}{
		{"summary", evidence.TimelineOptions{Summary: true},
			"session s-1  agent alice  3 records  2026-11-28T12:00:00.000Z .. 2026-11-28T12:00:00.000Z  head abababababab\n" +
				"  summary: 3 call(s): 2 allowed, 1 refused (scope 1); a human approved 1 and denied 0\n"},
		{"summary of the refusals", evidence.TimelineOptions{Summary: true, RefusalsOnly: true},
			"session s-1  agent alice  3 records  2026-11-28T12:00:00.000Z .. 2026-11-28T12:00:00.000Z\n" +
				"  summary: 3 call(s): 2 allowed, 1 refused (scope 1); a human approved 1 and denied 0\n" +
				"  #2 2026-11-28T12:00:00.000Z  navigate  DENY scope: allowed_domains\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := evidence.WriteTimelineWith(&buf, sessions, recs, tc.opts); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("timeline:\n%s\nwant:\n%s", buf.String(), tc.want)
			}
		})
	}
}
