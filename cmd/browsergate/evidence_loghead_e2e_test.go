package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestMissingSessionEndToEnd: two sessions of serve --signing-key write
// one log; a whole session (its records and its head) is then deleted
// from the bbolt file with bbolt itself, and the real `evidence verify
// --pubkey` must exit 1 saying a session is missing: by id for the
// session the last append wrote to, by count for an earlier one (nothing
// left in the file names it). Before this, both edits verified.
func TestMissingSessionEndToEnd(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, filepath.Join(dir, "signer"))
	manifest := fmt.Sprintf(e2eManifest, "launch", "")
	first := recordedLog(t, manifest, "--signing-key", keyPath)
	// A second daemon, on the same file: a second session.
	second := startWith(t, manifest, "--signing-key", keyPath, "--evidence", first.evidence)
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": second.siteURL + "/login"})
	second.cs.Close()

	sums, _ := logContents(t, first.evidence)
	if len(sums) != 2 {
		t.Fatalf("the log holds %d session(s), want 2", len(sums))
	}
	earlier, last := sums[0].ID, sums[1].ID
	out, code := runBinary(t, "evidence", "verify", "--evidence", first.evidence, "--pubkey", pubPath)
	if code != 0 || !strings.Contains(out, "ok: log-wide head #") || !strings.Contains(out, "covers every session: 2 in the log, 0 pruned; its signature verified") {
		t.Fatalf("verify --pubkey of the intact log: exit %d\n%s", code, out)
	}

	for _, tc := range []struct {
		name, session string
		want          []string
	}{
		{"the session written last", last, []string{
			"FAIL: session " + last + " record ",
			"missing: log-wide head #",
			"1 session(s) missing: it covers 2 session(s), the log has 1",
		}},
		{"an earlier session", earlier, []string{
			"1 session(s) missing: it covers 2 session(s), the log has 1 (removed with their heads)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "evidence.db")
			data, err := os.ReadFile(first.evidence)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			deleteSessionWithBbolt(t, path, tc.session)
			out, code := runBinary(t, "evidence", "verify", "--evidence", path, "--pubkey", pubPath)
			if code != 1 {
				t.Errorf("verify --pubkey with session %s deleted: exit %d, want 1\n%s", tc.session, code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("verify --pubkey output lacks %q:\n%s", w, out)
				}
			}
			if _, code := runBinary(t, "evidence", "verify", "--evidence", path); code != 1 {
				t.Errorf("verify without the key: exit %d, want 1 (the log-wide head was left as it was)", code)
			}
		})
	}
}

// deleteSessionWithBbolt removes a session's bucket of records and its
// head from the evidence file, and nothing else, as someone who can write
// the file would.
func deleteSessionWithBbolt(t *testing.T, path, session string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("sessions")).DeleteBucket([]byte(session)); err != nil {
			return err
		}
		return tx.Bucket([]byte("heads")).Delete([]byte(session))
	})
	if err != nil {
		t.Fatal(err)
	}
}
