package central_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/central"
)

// backup writes a copy of the fleet's file as it is now and returns its
// path.
func (f *fleet) backup(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.local.Backup(out); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return path
}

// TestAFileBehindTheStoreIsRefused: a file put back from a backup (its
// log id the same, its sessions shorter than what the store holds), or a
// copy another daemon wrote other records to, is refused at start: it
// would roll the store's heads back and take acknowledgements for records
// the store holds other bytes of.
func TestAFileBehindTheStoreIsRefused(t *testing.T) {
	f := newFleet(t)
	for range 3 {
		f.call(t, "s1", "https://a.example/", "")
	}
	old := f.backup(t)
	for range 2 {
		f.call(t, "s1", "https://a.example/later", "")
	}
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	restored, err := evidence.Open(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if restored.LogID() != f.local.LogID() {
		t.Fatal("the backup has another log id")
	}
	_, err = central.NewShipper(context.Background(), restored, f.central, "r1", nil)
	if !errors.Is(err, evidence.ErrCorrupt) || !strings.Contains(err.Error(), "older than the store") {
		t.Fatalf("a shipper of a file put back from a backup: %v, want it refused", err)
	}

	// A copy that went its own way: the same session, other records.
	e := &evidence.Envelope{Session: "s1", Principal: "mallory", Tool: "web", Command: "navigate", Decision: evidence.Decision{Allowed: true, Stage: "gate"}}
	for range 3 {
		if err := restored.Append(e, nil); err != nil {
			t.Fatal(err)
		}
		e = &evidence.Envelope{Session: "s1", Principal: "mallory", Tool: "web", Command: "navigate", Decision: evidence.Decision{Allowed: true, Stage: "gate"}}
	}
	if _, err := central.NewShipper(context.Background(), restored, f.central, "r2", nil); !errors.Is(err, evidence.ErrCorrupt) {
		t.Fatalf("a shipper of a copy that other records were written to: %v, want it refused", err)
	}
	// Shipped anyway, from nothing: nothing of it is taken.
	b, err := restored.NextBatch(evidence.NewShipped(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.central.Ship(context.Background(), "r2", b); !errors.Is(err, central.ErrConflict) {
		t.Fatalf("shipping the copy's batch: %v, want ErrConflict", err)
	}
	if rep, _ := f.verifyCentral(t); !rep.OK() || rep.LogHead.Records != 5 {
		t.Fatalf("the store after the copy was refused: %v %+v", rep.Problems, rep.LogHead)
	}
}

// TestAHeadIsRefusedWhenItGoesBack: the store takes a session's head, and
// the log-wide head, only forward; each is checked on its own.
func TestAHeadIsRefusedWhenItGoesBack(t *testing.T) {
	f := newFleet(t)
	f.call(t, "s1", "https://a.example/", "")
	early, err := f.local.NextBatch(evidence.NewShipped(), 0)
	if err != nil {
		t.Fatal(err)
	}
	f.call(t, "s1", "https://a.example/2", "")
	if err := f.shipper(t).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	late, err := f.local.NextBatch(evidence.NewShipped(), 0)
	if err != nil {
		t.Fatal(err)
	}
	sessionBack := *early
	sessionBack.LogHead, sessionBack.LogSet = late.LogHead, late.LogSet
	logBack := *early
	logBack.Heads = nil
	for name, b := range map[string]*evidence.Batch{"a session's head": &sessionBack, "the log-wide head": &logBack} {
		if err := f.central.Ship(context.Background(), "r1", b); !errors.Is(err, central.ErrConflict) {
			t.Errorf("%s put back to an earlier one: %v, want ErrConflict", name, err)
		}
	}
	if rep, _ := f.verifyCentral(t); !rep.OK() || rep.LogHead.Records != 2 {
		t.Fatalf("the store after earlier heads were refused: %v %+v", rep.Problems, rep.LogHead)
	}
}

// TestARecordAheadOfItsHeadIsNotAcknowledged: a record shipped in a batch
// that did not bring its session's head is not yet the store's (read back,
// it is left out), so it is not acknowledged.
func TestARecordAheadOfItsHeadIsNotAcknowledged(t *testing.T) {
	f := newFleet(t)
	for range 5 {
		f.call(t, "s1", "https://a.example/", "")
	}
	s := f.shipper(t)
	sh := central.ShippedOf(s)
	b, err := f.local.NextBatch(sh, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.central.Ship(context.Background(), "r1", b); err != nil {
		t.Fatal(err)
	}
	sh.Apply(b)
	if sh.UpToDate("s1", 1) {
		t.Fatal("record 1 counts as held by the store while its session's head is not there")
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !sh.UpToDate("s1", 5) {
		t.Fatal("record 5 does not count as held once the batches completed")
	}
}

// TestARecordMissingFromTheFileStopsShippingWithAnError: a gap below a
// session's head is an error, said, not a batch that never completes.
func TestARecordMissingFromTheFileStopsShippingWithAnError(t *testing.T) {
	f := newFleet(t)
	for range 3 {
		f.call(t, "s1", "https://a.example/", "")
	}
	f.local.Close()
	db, err := bolt.Open(f.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).Bucket([]byte("s1")).Delete([]byte{0, 0, 0, 0, 0, 0, 0, 2})
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if f.local, err = evidence.Open(f.path, nil); err != nil {
		t.Fatal(err)
	}
	err = f.shipper(t).Flush(context.Background())
	if !errors.Is(err, evidence.ErrCorrupt) || !strings.Contains(err.Error(), "no record 2") {
		t.Fatalf("shipping a file with a record missing: %v, want ErrCorrupt naming it", err)
	}
}

// TestAStoreURLNeverCarriesAPassword: a password, in any spelling pgx
// reads, or a parameter beyond where the server is, who connects and TLS,
// is refused before anything connects, and the refusal does not repeat it.
func TestAStoreURLNeverCarriesAPassword(t *testing.T) {
	if err := central.CheckURL("postgres://browsergate@127.0.0.1:5432/fleet?sslmode=require&application_name=browsergate"); err != nil {
		t.Fatalf("a URL without a password: %v", err)
	}
	for _, u := range []string{
		"postgres://browsergate:hunter2@127.0.0.1/fleet",
		"postgresql://browsergate@127.0.0.1/fleet?password=hunter2",
		"postgres://browsergate:2024?@127.0.0.1:5432/bg",
		"postgres://browsergate@127.0.0.1/fleet?password=hunter2;x",
		"postgres://browsergate@127.0.0.1/fleet?sslpassword=hunter2",
		"host=127.0.0.1 user=browsergate password=hunter2",
		"postgres://browsergate@127.0.0.1/fleet?pool_max_conns=1000",
	} {
		err := central.CheckURL(u)
		if err == nil {
			t.Errorf("%s: accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "2024") {
			t.Errorf("%s: the refusal repeats the password: %v", u, err)
		}
	}
}
