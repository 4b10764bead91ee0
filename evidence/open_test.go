package evidence_test

import (
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// TestASessionItsDaemonDiedInIsRecordedAsEnded: a session with records
// that was not said to have ended when its writer let go of the file (a
// daemon killed) is found open by the next writer, which records its end
// once; a session that ended is not.
func TestASessionItsDaemonDiedInIsRecordedAsEnded(t *testing.T) {
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	for _, id := range []string{"died", "died", "ended", "old"} {
		if err := s.Append(envelope(id, "https://a.example/"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SessionsEnded("ended"); err != nil {
		t.Fatal(err)
	}
	s.Close() // as a killed daemon leaves it: nothing more said

	again, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	died, err := again.RecordDiedSessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(died) != 2 || died[0] != "died" || died[1] != "old" {
		t.Fatalf("sessions recorded as ended by the daemon's death: %q, want died and old", died)
	}
	recs, err := again.Records("died")
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if len(recs) != 3 || last.Kind != evidence.KindSessionEnd || last.Decision.Rule != evidence.RuleDaemonDied || last.Principal != "alice" || last.Tool != "chrome_live" {
		t.Fatalf("the last record of the session its daemon died in: %d records, %+v", len(recs), last)
	}
	if again, err := again.RecordDiedSessions(); err != nil || len(again) != 0 {
		t.Fatalf("a second start records %q (%v), want nothing", again, err)
	}
	if rep, err := again.Verify(); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
}

// TestAPrunedSessionIsNotOpen: prune removes a session's open mark with
// the session, so a later start does not record the end of a session no
// longer in the log.
func TestAPrunedSessionIsNotOpen(t *testing.T) {
	s, _ := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	if err := s.Append(envelope("gone", "https://a.example/"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(envelope("kept", "https://a.example/"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(t0.Add(500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	open, err := s.OpenSessions()
	if err != nil || len(open) != 1 || open[0].ID != "kept" {
		t.Fatalf("open sessions after a prune: %+v (%v), want only kept", open, err)
	}
}
