package replay

import (
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestGrantedNoteCountsTheGrants: a session_end record's line counts the
// permission requests it lists as granted and those it only counts, and
// says nothing of grants when it has none.
func TestGrantedNoteCountsTheGrants(t *testing.T) {
	t.Parallel()
	r := &evidence.Envelope{Kind: evidence.KindSessionEnd, PermissionsGrantedDropped: 2,
		PermissionsGranted: []evidence.PermissionGrant{{URL: "https://a.test/", Permission: "geolocation", Origin: "https://a.test", Between: true}}}
	if got, want := grantedNote(r), ", and 3 permission request(s) [browser.permissions] granted them"; got != want {
		t.Errorf("grantedNote = %q, want %q", got, want)
	}
	if got := grantedNote(&evidence.Envelope{Kind: evidence.KindSessionEnd}); got != "" {
		t.Errorf("grantedNote without grants = %q, want nothing", got)
	}
}
