package anchor_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence/anchor"
	"golang.org/x/mod/sumdb/note"
)

// testOrigin names the test fleet's log.
const testOrigin = "browsergate.test/fleet-log"

// newKey makes an Ed25519 note key pair named origin.
func newKey(t testing.TB, origin string) (note.Signer, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// testLog is an open log in a temporary directory with its verifier.
type testLog struct {
	*anchor.Log
	dir      string
	signer   note.Signer
	vkey     string
	verifier *anchor.Verifier
}

// openLog opens a new log signed by a new key, closed when t ends.
func openLog(t testing.TB) *testLog {
	t.Helper()
	s, vkey := newKey(t, testOrigin)
	return openLogWith(t, t.TempDir(), s, vkey)
}

// openLogWith opens the log in dir with signer s.
func openLogWith(t testing.TB, dir string, s note.Signer, vkey string) *testLog {
	t.Helper()
	l, err := anchor.Open(context.Background(), anchor.Config{Dir: dir, Signer: s, Origin: testOrigin,
		CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	v, err := anchor.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{Log: l, dir: dir, signer: s, vkey: vkey, verifier: v}
}

// records makes n leaves as the evidence store will: the canonical JSON
// of one record's hash, log, seq and session.
func records(session string, from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range n {
		seq := from + i
		h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", session, seq))
		out[i] = fmt.Appendf(nil, `{"hash":"%s","log":"replica-1","seq":%d,"session":"%s"}`, hex.EncodeToString(h[:]), seq, session)
	}
	return out
}

// appendAll appends leaves and returns the checkpoint that covers them.
func (l *testLog) appendAll(t testing.TB, leaves [][]byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := l.Append(ctx, leaves); err != nil {
		t.Fatal(err)
	}
	cp, err := l.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// copyDir copies a log's directory (a snapshot an attacker might put
// back, or a copy a test tampers with) into a new temporary directory.
func copyDir(t testing.TB, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
