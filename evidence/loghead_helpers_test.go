package evidence_test

import (
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence/evidencetest"
)

func readLog(t *testing.T, tx *bolt.Tx) *evidencetest.LogHead {
	t.Helper()
	h, err := evidencetest.ReadLogHead(tx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func setOf(t *testing.T, tx *bolt.Tx) (set *evidencetest.Set, sessions, pruned, records uint64) {
	t.Helper()
	set, sessions, pruned, records, err := evidencetest.SetOf(tx)
	if err != nil {
		t.Fatal(err)
	}
	return set, sessions, pruned, records
}

// relog recomputes the log-wide head without the key (evidencetest.Relog).
func relog(t *testing.T, tx *bolt.Tx) {
	t.Helper()
	if err := evidencetest.Relog(tx); err != nil {
		t.Fatal(err)
	}
}

func putLog(t *testing.T, tx *bolt.Tx, h *evidencetest.LogHead, state []byte) {
	t.Helper()
	if err := evidencetest.PutLogHead(tx, h, state); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the closed evidence file at path to a new temporary
// file, so that each edit of a test starts from the same log.
func copyFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
