package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

func TestWriteTimelineGolden(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, &evidence.Options{Now: fixedClock(1123 * time.Millisecond)})

	allowed := envelope("s-1", "https://a.example.com/")
	denied := &evidence.Envelope{
		Session: "s-1", Principal: "alice", Tool: "chrome_live", Command: "navigate",
		Args: map[string]any{"url": "http://127.0.0.2/"},
		Decision: evidence.Decision{
			Stage: "scope", Rule: "allowed_domains",
			Reasons: []string{"host 127.0.0.2 not in allowed_domains"},
		},
		Before: map[string]any{"url": "https://a.example.com/", "title": "Example"},
	}
	typed := &evidence.Envelope{
		Session: "s-1", Principal: "alice", Tool: "chrome_live", Command: "type_text",
		Args: map[string]any{"ref": "e12", "text": "a long text " + strings.Repeat("x", 80), "clear": true, "n": 3},
		Decision: evidence.Decision{
			Allowed: true, Stage: "act", Cedar: "allow", PolicyIDs: []string{"p1", "p2"}, Approval: &evidence.Approval{ID: "apr-1", Approved: true, Channel: "operator", By: "bob", At: time.Unix(1700000000, 0)},
		},
		After: map[string]any{"url": "https://a.example.com/form", "title": "Evil\x1b[2J title"},
		Error: "element detached\nretry",
	}
	other := envelope("s-2", "https://b.example.com/")
	if err := s.Append(allowed, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(other, []byte("png")); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*evidence.Envelope{denied, typed} {
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}

	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string][]*evidence.Envelope{}
	for _, sum := range sums {
		if recs[sum.ID], err = s.Records(sum.ID); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := evidence.WriteTimeline(&buf, sums, recs); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(buf.Bytes(), "\x1b\r") {
		t.Errorf("timeline passes control characters through:\n%q", buf.String())
	}
	golden(t, "timeline.golden", buf.Bytes())
}
