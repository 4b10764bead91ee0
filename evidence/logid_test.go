package evidence_test

import (
	"regexp"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// TestLogIDNamesTheFile: a new file gets a random log id that stays with
// it, readers see it, another file has another; a file written before
// revision 14 gets one when first opened for writing, and none when read.
func TestLogIDNamesTheFile(t *testing.T) {
	s, path := openStore(t, nil)
	id := s.LogID()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("log id %q is not 32 lowercase hex digits", id)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		again, err := evidence.Open(path, &evidence.Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		if again.LogID() != id {
			t.Errorf("reopened (read-only %v): log id %q, want %q", ro, again.LogID(), id)
		}
		again.Close()
	}
	other, _ := openStore(t, nil)
	if other.LogID() == id {
		t.Fatal("two files have the same log id")
	}

	// A file from before revision 14: its log id removed.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("log_id")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if ro.LogID() != "" {
		t.Errorf("an old file read: log id %q, want none", ro.LogID())
	}
	ro.Close()
	rw, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if rw.LogID() == "" || rw.LogID() == id {
		t.Errorf("an old file opened for writing: log id %q, want a new one", rw.LogID())
	}
	if rep, err := rw.Verify(); err != nil || !rep.OK() {
		t.Fatalf("the old file with its new log id does not verify: %v %v", err, rep.Problems)
	}
}
