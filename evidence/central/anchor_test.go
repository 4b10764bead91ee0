package central_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/evidence/central"
)

// anchored is a fleet whose store is anchored in a transparency log on a
// directory.
type anchored struct {
	*fleet
	anchorer *central.Anchorer
	verifier *anchor.Verifier
	dir      string
}

func newAnchored(t *testing.T) *anchored {
	t.Helper()
	f := newFleet(t)
	signer, v := fleetKey(t)
	dir := filepath.Join(t.TempDir(), "log")
	l, err := anchor.Open(context.Background(), anchor.Config{Dir: dir, Signer: signer, CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return &anchored{fleet: f, anchorer: &central.Anchorer{Store: f.central, Log: l, Verifier: v}, verifier: v, dir: dir}
}

// fleetKey makes a new key of the fleet's log: its signer and verifier.
func fleetKey(t *testing.T) (note.Signer, *anchor.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "browsergate.test/fleet-log")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := anchor.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, v
}

// shipAndAnchor ships the file and anchors what the store holds.
func (a *anchored) shipAndAnchor(t *testing.T) {
	t.Helper()
	if err := a.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.anchorer.AnchorOnce(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func (a *anchored) verify(t *testing.T) *central.AnchorReport {
	t.Helper()
	return a.verifyWithin(t, time.Hour)
}

// verifyWithin verifies with a grace for records not anchored yet, every
// log vouched for (as by its signed log-wide head).
func (a *anchored) verifyWithin(t *testing.T, grace time.Duration) *central.AnchorReport {
	t.Helper()
	return a.verifyVouched(t, grace, func(string) bool { return true })
}

// verifyVouched verifies with a grace, the logs vouched for by vouched.
func (a *anchored) verifyVouched(t *testing.T, grace time.Duration, vouched func(string) bool) *central.AnchorReport {
	t.Helper()
	rep, err := a.central.VerifyAnchors(context.Background(), a.verifier, anchor.DirSource(a.dir), nil, grace, vouched)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAnchoredStoreVerifies(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.call(t, "s1", "https://a.example/2", "")
	a.call(t, "s2", "https://b.example/", "")
	a.shipAndAnchor(t)
	a.call(t, "s2", "https://b.example/2", "")
	if err := a.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := a.verify(t)
	if !rep.OK() || rep.Records != 4 || rep.Anchored != 3 || rep.Unanchored != 1 || rep.Checkpoint.Size != 3 {
		t.Fatalf("report %+v, want 4 records, 3 anchored under a checkpoint of size 3, 1 not yet", rep)
	}
	if got := a.pg.SQL(t, a.db, "SELECT count(*) FROM evidence_checkpoints"); got != "1" {
		t.Fatalf("%s checkpoints published in the store, want 1", got)
	}
}

// TestAnchorsShowWhatTheStoreCannot: changes to the store that leave
// every remaining log verifying by the file's rules — a whole log
// deleted, with its records, heads and log-wide head — and the others
// the file's rules see too, each named by the anchors.
func TestAnchorsShowWhatTheStoreCannot(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"a whole log deleted", `DELETE FROM evidence_records; DELETE FROM evidence_heads; DELETE FROM evidence_logs`, "2 anchored record(s) (seq 1 to 2) are not in the store"},
		{"a session deleted", `DELETE FROM evidence_records WHERE session = 's1'; DELETE FROM evidence_heads WHERE session = 's1'`, "session s1: 2 anchored record(s) (seq 1 to 2) are not in the store"},
		{"a session rolled back", `DELETE FROM evidence_records WHERE session = 's1' AND seq = 2`, "session s1: 1 anchored record(s) (seq 2 to 2) are not in the store"},
		{"a record rewritten", `UPDATE evidence_records SET record = convert_to(replace(convert_from(record, 'UTF8'), hash, repeat('0', 64)), 'UTF8') WHERE session = 's2'`, "the record was rewritten"},
		{"a rollback disguised as a prune", `DELETE FROM evidence_records WHERE session = 's1' AND seq = 2;
			INSERT INTO evidence_tombstones SELECT log_id, '%DIGEST%', '{"n":9}' FROM evidence_logs`, "the prune forged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAnchored(t)
			a.call(t, "s1", "https://a.example/", "")
			a.call(t, "s1", "https://a.example/2", "")
			a.call(t, "s2", "https://b.example/", "")
			a.shipAndAnchor(t)
			if rep := a.verify(t); !rep.OK() {
				t.Fatalf("before: %v", rep.Problems)
			}
			sql := tc.sql
			if strings.Contains(sql, "%DIGEST%") {
				recs, err := a.local.Records("s1")
				if err != nil {
					t.Fatal(err)
				}
				sql = strings.ReplaceAll(sql, "%DIGEST%", evidence.HeadDigest("s1", 2, recs[1].Hash))
			}
			a.pg.SQL(t, a.db, sql)
			rep := a.verify(t)
			if rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), tc.want) {
				t.Fatalf("problems %q, want one saying %q", rep.Problems, tc.want)
			}
		})
	}
}

func TestAnchorsShowARewrittenTile(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.shipAndAnchor(t)
	bundles, _ := filepath.Glob(filepath.Join(a.dir, "tile", "entries", "*", "*"))
	if len(bundles) == 0 {
		bundles, _ = filepath.Glob(filepath.Join(a.dir, "tile", "entries", "*"))
	}
	var target string
	for _, b := range bundles {
		if fi, err := os.Stat(b); err == nil && !fi.IsDir() {
			target = b
		}
	}
	if target == "" {
		t.Fatal("no entry bundle in the log's directory")
	}
	raw, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(strings.Replace(string(raw), "s1", "s9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := a.verify(t)
	if rep.OK() || !strings.Contains(rep.Problems[0], "the transparency log's copy") {
		t.Fatalf("a rewritten entry bundle: problems %q", rep.Problems)
	}
}

func TestAPrunedSessionIsNotMissing(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "old", "https://a.example/", "")
	time.Sleep(10 * time.Millisecond)
	cut := time.Now()
	a.call(t, "new", "https://b.example/", "")
	a.shipAndAnchor(t)
	if _, err := a.local.Prune(cut); err != nil {
		t.Fatal(err)
	}
	a.shipAndAnchor(t)
	rep := a.verify(t)
	if !rep.OK() || rep.Pruned != 1 || rep.Records != 1 {
		t.Fatalf("after a prune: %+v", rep)
	}
	// In a log nobody vouched for, the tombstone is only the store's word.
	rep = a.verifyVouched(t, time.Hour, nil)
	if rep.OK() || rep.Pruned != 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), "only the store's tombstone says the session was pruned") {
		t.Fatalf("a prune in a log not vouched for: %+v", rep)
	}
}

// TestStalledAnchoringShows: a record no leaf covers that is older than
// the grace is a problem, not a count: anchoring stalled, or the record
// was put in the store behind the anchorer's back.
func TestStalledAnchoringShows(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.shipAndAnchor(t)
	a.call(t, "s1", "https://a.example/2", "")
	if err := a.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep := a.verifyWithin(t, time.Hour); !rep.OK() || rep.Unanchored != 1 {
		t.Fatalf("a record just shipped: %+v, want it counted as not yet anchored", rep)
	}
	rep := a.verifyWithin(t, 0)
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "are not anchored though they should be") {
		t.Fatalf("a record older than the grace, not anchored: %q", rep.Problems)
	}
}

// TestARecordThatCannotBeAnchoredDoesNotStallTheOthers: a row no file
// writes (a session id too long for a leaf), put in the store, is set
// aside; the records after it are anchored.
func TestARecordThatCannotBeAnchoredDoesNotStallTheOthers(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	if err := a.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.pg.SQL(t, a.db, `INSERT INTO evidence_logs (log_id, replica) VALUES ('forged', 'r9');
		INSERT INTO evidence_records (log_id, session, seq, hash, record) VALUES ('forged', repeat('x', 70000), 1, repeat('0', 64), '\x7b7d')`)
	a.call(t, "s2", "https://b.example/", "")
	a.shipAndAnchor(t)
	if got := a.pg.SQL(t, a.db, "SELECT string_agg(coalesce(leaf::text, 'null'), ',' ORDER BY n) FROM evidence_records"); got != "0,-1,1" {
		t.Fatalf("leaves after anchoring past a record that cannot be anchored: %s, want 0,-1,1", got)
	}
}

// TestALogDirectoryBehindTheFleetIsRefused: an anchorer whose log
// directory holds fewer leaves than the fleet published (a directory not
// shared, or lost) does not anchor: it would make a second log under the
// same key.
func TestALogDirectoryBehindTheFleetIsRefused(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.shipAndAnchor(t)
	other := newAnchored(t) // a log directory of its own, anchoring a's store with a's key
	other.anchorer.Store, other.anchorer.Verifier = a.central, a.verifier
	err := central.CheckLogForTest(context.Background(), other.anchorer)
	if err == nil || !strings.Contains(err.Error(), "not the fleet's log") {
		t.Fatalf("an anchorer with a fresh log directory: %v, want it refused", err)
	}
}

// TestRecordsPutInBehindTheAnchorerShow: records no leaf covers are a
// problem, not a count, when dated ahead of the clock, or when they come
// before an anchored record of their session.
func TestRecordsPutInBehindTheAnchorerShow(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.shipAndAnchor(t)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	a.pg.SQL(t, a.db, `INSERT INTO evidence_logs (log_id, replica) VALUES ('forged', 'r9');
		INSERT INTO evidence_records (log_id, session, seq, hash, record, leaf) VALUES
		('forged', 'future', 1, repeat('0', 64), convert_to('{"time":"2099-01-01T00:00:00Z"}', 'UTF8'), -1),
		('forged', 'gap', 1, repeat('1', 64), convert_to('{"time":"`+now+`"}', 'UTF8'), -1),
		('forged', 'gap', 2, repeat('2', 64), convert_to('{"time":"`+now+`","hash":"`+strings.Repeat("2", 64)+`"}', 'UTF8'), NULL)`)
	if _, err := a.anchorer.AnchorOnce(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(a.verify(t).Problems, "\n")
	for _, want := range []string{"log forged session future: 1 record(s)", "log forged session gap: 1 record(s) (seq 1 to 1) are not anchored though they should be"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems do not say %q:\n%s", want, problems)
		}
	}
}

// TestACheckpointWrittenByOtherHands: a row of evidence_checkpoints that
// does not verify with the log's key neither stops the anchoring nor
// passes the audit.
func TestACheckpointWrittenByOtherHands(t *testing.T) {
	a := newAnchored(t)
	a.call(t, "s1", "https://a.example/", "")
	a.shipAndAnchor(t)
	a.pg.SQL(t, a.db, `INSERT INTO evidence_checkpoints (size, checkpoint) VALUES (1000000000, 'garbage')`)
	if err := central.CheckLogForTest(context.Background(), a.anchorer); err != nil {
		t.Fatalf("the fleet's anchorer, on its own log, after a garbage checkpoint row: %v", err)
	}
	problems := strings.Join(a.verify(t).Problems, "\n")
	if !strings.Contains(problems, "published checkpoint of size 1000000000 does not verify") {
		t.Fatalf("the audit does not name the garbage checkpoint:\n%s", problems)
	}
}
