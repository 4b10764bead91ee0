package evidence_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// grantsOnlyEnd is the session_end record of a session whose pages were
// granted a permission after its last call and refused nothing.
func grantsOnlyEnd(session string) *evidence.Envelope {
	return &evidence.Envelope{
		Kind: evidence.KindSessionEnd, Session: session, Principal: "alice", Tool: "chrome_live",
		Decision: evidence.Decision{Stage: evidence.StageEgress, Rule: "recorded after the last call",
			Reasons: []string{"the session ended; [browser.permissions] had granted 1 permission request(s)"}},
		PermissionsGranted: []evidence.PermissionGrant{{URL: "https://maps.example.test/later", Permission: "geolocation",
			Origin: "https://maps.example.test", Between: true}},
	}
}

// TestRecordsOnlyIsASessionEndThatRefusedNothing proves which records
// refused nothing: a session_end record of the egress stage with no
// blocked entry and none left out. One with a refusal listed or only
// counted, an operator's end of the session, and a call refused are
// refusals.
func TestRecordsOnlyIsASessionEndThatRefusedNothing(t *testing.T) {
	t.Parallel()
	withBlocked := grantsOnlyEnd("s")
	withBlocked.Blocked = []evidence.BlockedRequest{{URL: "https://x.test/", Rule: "r", Layer: "proxy", Between: true}}
	withDropped := grantsOnlyEnd("s")
	withDropped.BlockedDropped = 1
	byOperator := grantsOnlyEnd("s")
	byOperator.Decision.Stage, byOperator.Decision.Rule = evidence.StageLimits, "ended by the operator"
	call := grantsOnlyEnd("s")
	call.Kind = ""
	for _, tt := range []struct {
		name string
		e    *evidence.Envelope
		want bool
	}{
		{"grants alone", grantsOnlyEnd("s"), true},
		{"a refusal listed", withBlocked, false},
		{"a refusal counted, not listed", withDropped, false},
		{"an operator's end", byOperator, false},
		{"a call", call, false},
	} {
		if got := tt.e.RecordsOnly(); got != tt.want {
			t.Errorf("%s: RecordsOnly %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestGrantsOnlySessionEndShownAsRecorded: evidence show and the HTML
// report show a session_end record that holds only grants as RECORDED,
// never as a refusal; a session_end record with a refusal is still
// shown DENY / DENIED.
func TestGrantsOnlySessionEndShownAsRecorded(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	refused := grantsOnlyEnd("s-2")
	refused.Decision.Rule = "refused after the last call"
	refused.Blocked = []evidence.BlockedRequest{{URL: "https://tracker.example.test/", Rule: "not in scope", Layer: "proxy", Between: true}}
	for _, e := range []*evidence.Envelope{grantsOnlyEnd("s-1"), refused} {
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	records := map[string][]*evidence.Envelope{}
	for _, id := range []string{"s-1", "s-2"} {
		if records[id], err = s.Records(id); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := evidence.WriteTimeline(&buf, sums, records); err != nil {
		t.Fatal(err)
	}
	shown := buf.String()
	if !strings.Contains(shown, "[session_end]  RECORDED egress: recorded after the last call — the session ended; [browser.permissions] had granted 1") {
		t.Errorf("evidence show does not show the grants-only session_end record as RECORDED:\n%s", shown)
	}
	if strings.Contains(shown, "DENY egress: recorded after the last call") {
		t.Errorf("evidence show shows the grants-only session_end record as a refusal:\n%s", shown)
	}
	if !strings.Contains(shown, "[session_end]  DENY egress: refused after the last call") {
		t.Errorf("evidence show no longer shows a session_end record with a refusal as DENY:\n%s", shown)
	}
	s.Close()

	doc, _, _ := exportHTML(t, path, evidence.HTMLOptions{})
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	verdicts := func(row *html.Node, class string) int {
		return len(find(row, func(n *html.Node) bool { return n.Data == "span" && hasClass(n, "verdict") && hasClass(n, class) }))
	}
	var grantsRow, refusedRow *html.Node
	for _, r := range rows {
		if strings.Contains(text(r), "refused after the last call") {
			refusedRow = r
		} else {
			grantsRow = r
		}
	}
	if grantsRow == nil || refusedRow == nil {
		t.Fatal("the report lacks a session's row")
	}
	if verdicts(grantsRow, "recorded") != 1 || verdicts(grantsRow, "deny") != 0 || !strings.Contains(text(grantsRow), "RECORDED") {
		t.Errorf("the report does not show the grants-only session_end record as RECORDED: %s", text(grantsRow))
	}
	if verdicts(refusedRow, "deny") != 1 || verdicts(refusedRow, "recorded") != 0 {
		t.Errorf("the report no longer shows a session_end record with a refusal as DENIED: %s", text(refusedRow))
	}
}
