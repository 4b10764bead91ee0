package daemon

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// TestSessionPageShowsGrantsOnlySessionEndAsRecorded: on a session's
// page, a session_end record that holds only granted permission requests
// is styled and titled as recorded, not refused, and counts the grants
// it does not list; a session_end record with a refusal is still a
// refusal.
func TestSessionPageShowsGrantsOnlySessionEndAsRecorded(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	grants := &evidence.Envelope{Seq: 1, Time: at, Kind: evidence.KindSessionEnd,
		Decision: evidence.Decision{Stage: evidence.StageEgress, Rule: "recorded after the last call"},
		PermissionsGranted: []evidence.PermissionGrant{{URL: "https://maps.example.test/where", Permission: "geolocation",
			Origin: "https://maps.example.test", Between: true}},
		PermissionsGrantedDropped: 2}
	refused := &evidence.Envelope{Seq: 2, Time: at, Kind: evidence.KindSessionEnd,
		Decision: evidence.Decision{Stage: evidence.StageEgress, Rule: "refused after the last call"},
		Blocked:  []evidence.BlockedRequest{{URL: "https://tracker.example.test/", Rule: "not in scope", Layer: "proxy", Between: true}}}
	var page bytes.Buffer
	err := consolePages.ExecuteTemplate(&page, "session.html", map[string]any{"ID": "s1", "Records": []*evidence.Envelope{grants, refused}, "Verified": true})
	if err != nil {
		t.Fatal(err)
	}
	got := page.String()
	if !strings.Contains(got, `<li class="recorded">`+"\n  <h2>#1 ") || !strings.Contains(got, "session_end recorded") {
		t.Errorf("the grants-only session_end record is not shown as recorded:\n%s", got)
	}
	if !strings.Contains(got, `<li class="refused">`+"\n  <h2>#2 ") {
		t.Errorf("the session_end record with a refusal is no longer shown as refused:\n%s", got)
	}
	if strings.Count(got, `class="refused"`) != 1 {
		t.Errorf("want one record styled refused:\n%s", got)
	}
	if !strings.Contains(got, "… and 2 more granted permission request(s), counted but not listed in the record") {
		t.Errorf("the session's page does not count the grants a record does not list:\n%s", got)
	}
}
