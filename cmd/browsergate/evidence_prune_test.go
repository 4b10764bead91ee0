package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// oldAndNewLog writes a log with sessions "old-1" and "old-2" (last
// records in 2025, one with a screenshot) and "new" (2026), signed with
// the key at keyPath when it is set.
func oldAndNewLog(t *testing.T, keyPath string) string {
	t.Helper()
	var opts evidence.Options
	if keyPath != "" {
		data, err := os.ReadFile(keyPath)
		if err != nil {
			t.Fatal(err)
		}
		if opts.SigningKey, err = evidence.ParsePrivateKey(data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "evidence.db")
	s, err := evidence.Open(path, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, r := range []struct {
		session string
		at      time.Time
		shot    []byte
	}{
		{"old-1", time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), []byte("\x89PNG old")},
		{"old-1", time.Date(2025, 3, 1, 9, 5, 0, 0, time.UTC), nil},
		{"old-2", time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), nil},
		{"new", time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC), nil},
	} {
		e := &evidence.Envelope{Session: r.session, Time: r.at, Principal: "alice", Tool: "e2e", Command: "navigate",
			Args:     map[string]any{"url": fmt.Sprintf("http://127.0.0.1/%d", i)},
			Decision: evidence.Decision{Allowed: true, Stage: "gate", Cedar: "allow"}}
		if err := s.Append(e, r.shot); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestPruneCLI(t *testing.T) {
	t.Parallel()
	_, pubPath := keygen(t, filepath.Join(t.TempDir(), "k"))
	keyPath := strings.TrimSuffix(pubPath, ".pub") + ".key"
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			t.Parallel()
			key, verifyArgs, pruneArgs := "", []string{}, []string{}
			if signed {
				key, verifyArgs, pruneArgs = keyPath, []string{"--pubkey", pubPath}, []string{"--pubkey", pubPath, "--signing-key", keyPath}
			}
			path := oldAndNewLog(t, key)
			if signed {
				// The log-wide head that records the prune must be signed.
				out, code := runBinary(t, append([]string{"evidence", "prune", "--evidence", path, "--before", "2026-01-01"}, verifyArgs...)...)
				if code != 1 || !strings.Contains(out, "the log is signed") || !strings.Contains(out, "pass --signing-key") {
					t.Errorf("prune of a signed log without --signing-key: exit %d, want 1 asking for it\n%s", code, out)
				}
			}
			out, code := runBinary(t, append([]string{"evidence", "prune", "--evidence", path, "--before", "2026-01-01"}, pruneArgs...)...)
			if code != 0 {
				t.Fatalf("prune: exit %d\n%s", code, out)
			}
			for _, want := range []string{
				"removed session old-1: 2 record(s), 2025-03-01T09:00:00Z .. 2025-03-01T09:05:00Z",
				"removed session old-2: 1 record(s)",
				"removed screenshot ",
				"pruned 2 session(s), 3 record(s), 1 screenshot(s), 0 config blob(s) ending before 2026-01-01T00:00:00Z; kept 1 session(s)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("prune output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "session new") {
				t.Errorf("prune removed the new session:\n%s", out)
			}
			// Nothing of the removed sessions is left in the file's bytes.
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, gone := range []string{`"old-1"`, `"old-2"`} {
				if bytes.Contains(raw, []byte(gone)) {
					t.Errorf("after prune the file still holds %s", gone)
				}
			}
			if !strings.Contains(out, "compacted "+path) || !bytes.Contains(raw, []byte(`"new"`)) {
				t.Errorf("prune did not compact the file, or lost the kept session:\n%s", out)
			}
			out, code = runBinary(t, append([]string{"evidence", "verify", "--evidence", path}, verifyArgs...)...)
			if code != 0 || !strings.Contains(out, "ok: 1 session(s), 1 record(s)") || !strings.Contains(out, "covers every session: 1 in the log, 2 pruned") {
				t.Errorf("verify after prune: exit %d\n%s", code, out)
			}
			// An RFC 3339 cutoff; nothing left before it.
			out, code = runBinary(t, append([]string{"evidence", "prune", "--evidence", path, "--before", "2026-02-01T09:00:00Z"}, pruneArgs...)...)
			if code != 0 || !strings.Contains(out, "nothing to prune") || !strings.Contains(out, "kept 1 session(s)") {
				t.Errorf("prune with an RFC 3339 cutoff at the last record: exit %d\n%s", code, out)
			}
		})
	}
}

func TestPruneCLIRefuses(t *testing.T) {
	t.Parallel()
	path := oldAndNewLog(t, "")
	absent := filepath.Join(t.TempDir(), "absent.db")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"malformed date", []string{"--evidence", path, "--before", "last year"}, 2, `"last year" is not a date`},
		{"date with a time but no zone", []string{"--evidence", path, "--before", "2026-01-01T00:00:00"}, 2, "is not a date"},
		{"no date", []string{"--evidence", path}, 2, "needs --before"},
		{"no file", []string{"--before", "2026-01-01"}, 2, "needs --evidence"},
		{"missing file", []string{"--evidence", absent, "--before", "2026-01-01"}, 1, "no such file"},
	} {
		out, code := runBinary(t, append([]string{"evidence", "prune"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s", tc.name, code, tc.code, tc.want, out)
		}
		if code == 2 && !strings.Contains(out, "run `browsergate help evidence prune` for its flags") {
			t.Errorf("%s: does not say where the flags are\n%s", tc.name, out)
		}
	}
	if _, err := os.Stat(absent); err == nil {
		t.Error("prune created the missing evidence file")
	}

	// A log that does not verify is not pruned at all.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).Bucket([]byte("old-1")).Delete([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "evidence", "prune", "--evidence", path, "--before", "2026-01-01")
	if code != 1 || !strings.Contains(out, "does not verify") || !strings.Contains(out, "session old-1 record 2") {
		t.Errorf("prune of a damaged log: exit %d, want 1 naming the problem\n%s", code, out)
	}
	out, _ = runBinary(t, "evidence", "show", "--evidence", path)
	if !strings.Contains(out, "session old-2") {
		t.Errorf("a refused prune removed sessions:\n%s", out)
	}
}
