package daemon

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// TestSessionPageShowsGrantsApartFromRefusals: a session's page lists the
// permission requests its records hold as granted under their own
// heading, and a record with grants and no refusal shows no refused
// request.
func TestSessionPageShowsGrantsApartFromRefusals(t *testing.T) {
	t.Parallel()
	rec := &evidence.Envelope{Seq: 1, Time: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), Command: "click",
		Decision: evidence.Decision{Allowed: true, Stage: evidence.StageGate},
		PermissionsGranted: []evidence.PermissionGrant{{URL: "https://maps.example.test/where", Permission: "geolocation",
			Origin: "https://maps.example.test", Between: true}}}
	var page bytes.Buffer
	err := consolePages.ExecuteTemplate(&page, "session.html", map[string]any{"ID": "s1", "Records": []*evidence.Envelope{rec}, "Verified": true})
	if err != nil {
		t.Fatal(err)
	}
	want := "Permissions the manifest granted the pages:</p><ul><li>https://maps.example.test/where — geolocation, granted to https://maps.example.test (between calls)</li></ul>"
	if !strings.Contains(page.String(), want) {
		t.Errorf("the session's page does not list the grant:\n%s", page.String())
	}
	if strings.Contains(page.String(), "Requests the egress gate refused") {
		t.Errorf("the session's page lists a refusal, and none was made:\n%s", page.String())
	}
}
