package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// A session_end record (revision 4) chains, verifies, and shows as what it
// is: not a call, with the refusals it holds and how many it counts but
// does not list.
func TestSessionEndRecord(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	call := envelope("s-1", "https://a.example.com/")
	call.Blocked = []evidence.BlockedRequest{{URL: "http://127.0.0.2/first", Rule: "allowed_domains", Layer: "interception", Between: true}}
	call.BlockedDropped = 101
	end := &evidence.Envelope{
		Kind: evidence.KindSessionEnd, Session: "s-1", Principal: "alice", Tool: "chrome_live",
		Decision: evidence.Decision{Stage: evidence.StageEgress, Rule: "refused after the last call",
			Reasons: []string{"the session ended: the daemon shut down; 1 request(s) refused"}},
		Blocked: []evidence.BlockedRequest{{URL: "http://127.0.0.2/last", Rule: "allowed_domains", Layer: "proxy", Between: true}},
	}
	for _, e := range []*evidence.Envelope{call, end} {
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := s.Verify(); err != nil || !rep.OK() || rep.Records != 2 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	recs, err := s.Records("s-1")
	if err != nil || len(recs) != 2 {
		t.Fatalf("records: %v %d", err, len(recs))
	}
	if got := recs[1]; got.Kind != evidence.KindSessionEnd || got.Seq != 2 || got.PrevHash != recs[0].Hash || got.Command != "" {
		t.Errorf("session_end record as read back: %+v", got)
	}
	if recs[0].Kind != "" || recs[0].BlockedDropped != 101 {
		t.Errorf("call record as read back: kind %q, blocked_dropped %d", recs[0].Kind, recs[0].BlockedDropped)
	}
	var buf bytes.Buffer
	sums, _ := s.Sessions()
	if err := evidence.WriteTimeline(&buf, sums, map[string][]*evidence.Envelope{"s-1": recs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "  #2 2026-11-22T10:00:01.000Z  [session_end]  DENY egress: refused after the last call — the session ended") {
		t.Errorf("timeline:\n%s", buf.String())
	}
	s.Close()

	doc, _, _ := exportHTML(t, path, evidence.HTMLOptions{})
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, want := range []string{"between calls", "and 101 more refused request(s), counted but not listed"} {
		if !strings.Contains(text(rows[0]), want) {
			t.Errorf("the call's row lacks %q: %s", want, text(rows[0]))
		}
	}
	for _, want := range []string{"session_end", "not a call", "DENIED", "egress", "http://127.0.0.2/last", "proxy, between calls"} {
		if !strings.Contains(text(rows[1]), want) {
			t.Errorf("the session_end row lacks %q: %s", want, text(rows[1]))
		}
	}
}
