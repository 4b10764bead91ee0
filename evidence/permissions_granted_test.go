package evidence_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// Granted permission requests (revision 12) chain, verify and read back
// as written, are covered by the hash like any member, and the HTML
// report lists them apart from the refused requests: a grant is never
// shown as a refusal.
func TestPermissionsGrantedRecorded(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	call := envelope("s-1", "https://maps.example.test/")
	call.PermissionsGranted = []evidence.PermissionGrant{{URL: "https://maps.example.test/where", Permission: "geolocation", Origin: "https://maps.example.test"}}
	call.PermissionsGrantedDropped = 3
	end := &evidence.Envelope{
		Kind: evidence.KindSessionEnd, Session: "s-1", Principal: "alice", Tool: "chrome_live",
		Decision: evidence.Decision{Stage: evidence.StageEgress, Rule: "recorded after the last call",
			Reasons: []string{"the session ended: the daemon shut down; [browser.permissions] had granted 1 permission request(s)"}},
		PermissionsGranted: []evidence.PermissionGrant{{URL: "https://maps.example.test/later", Permission: "clipboard-read",
			Origin: "https://maps.example.test", Between: true}},
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
	if got := recs[0]; !slices.Equal(got.PermissionsGranted, call.PermissionsGranted) || got.PermissionsGrantedDropped != 3 || len(got.Blocked) != 0 {
		t.Errorf("the call record as read back: granted %+v (%d more), blocked %+v", got.PermissionsGranted, got.PermissionsGrantedDropped, got.Blocked)
	}
	if got := recs[1]; !slices.Equal(got.PermissionsGranted, end.PermissionsGranted) || len(got.Blocked) != 0 {
		t.Errorf("the session_end record as read back: granted %+v, blocked %+v", got.PermissionsGranted, got.Blocked)
	}
	stored, err := evidence.CanonicalJSON(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"permissions_granted":[{"origin":"https://maps.example.test","permission":"geolocation","url":"https://maps.example.test/where"}]`,
		`"permissions_granted_dropped":3`} {
		if !bytes.Contains(stored, []byte(want)) {
			t.Errorf("the canonical record lacks %s:\n%s", want, stored)
		}
	}
	s.Close()

	doc, _, _ := exportHTML(t, path, evidence.HTMLOptions{})
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, want := range []string{
		"https://maps.example.test/where — geolocation, granted to https://maps.example.test by [browser.permissions]",
		"https://maps.example.test/later — clipboard-read, granted to https://maps.example.test by [browser.permissions] (between calls)",
	} {
		granted := find(rows[i], func(n *html.Node) bool { return n.Data == "ul" && hasClass(n, "granted") })
		if len(granted) != 1 || !strings.Contains(text(granted[0]), want) {
			t.Errorf("row %d does not list %q among the permissions granted: %s", i+1, want, text(rows[i]))
		}
		if blocked := find(rows[i], func(n *html.Node) bool { return n.Data == "ul" && hasClass(n, "blocked") }); len(blocked) != 0 {
			t.Errorf("row %d lists blocked requests, and none was refused: %s", i+1, text(blocked[0]))
		}
	}
	if !strings.Contains(text(rows[0]), "and 3 more granted permission request(s), counted but not listed") {
		t.Errorf("the call's row does not count the grants it does not list: %s", text(rows[0]))
	}
}

// A grant altered in the file (its origin made another) breaks the
// record's hash: verify names the record.
func TestPermissionsGrantedTamperingDetected(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	call := envelope("s-1", "https://maps.example.test/")
	call.PermissionsGranted = []evidence.PermissionGrant{{URL: "https://maps.example.test/where", Permission: "geolocation", Origin: "https://maps.example.test"}}
	if err := s.Append(call, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	tamper(t, path, func(tx *bolt.Tx) error {
		v := chain(tx, "s-1").Get(key(1))
		edited := bytes.Replace(v, []byte(`"origin":"https://maps.example.test"`), []byte(`"origin":"https://maps.example.tesx"`), 1)
		if bytes.Equal(edited, v) {
			t.Fatal("the stored record holds no grant to edit")
		}
		return chain(tx, "s-1").Put(key(1), edited)
	})
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if first, ok := rep.FirstBad(); !ok || first.Session != "s-1" || first.Seq != 1 || !strings.Contains(first.Reason, "hash mismatch") {
		t.Errorf("verify after a grant was altered: first bad %+v (ok %v), want record 1's hash mismatch", first, ok)
	}
}
