package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// t0 is the fixed clock every test starts from.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixedClock returns a clock that advances by step on every call. It is
// not safe for concurrent use; concurrent tests set Time themselves.
func fixedClock(step time.Duration) func() time.Time {
	now := t0
	return func() time.Time {
		t := now
		now = now.Add(step)
		return t
	}
}

// openStore opens a fresh store in a temporary directory.
func openStore(t testing.TB, opts *evidence.Options) (*evidence.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "evidence.db")
	s, err := evidence.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// envelope returns a typical allowed navigate call.
func envelope(session, url string) *evidence.Envelope {
	return &evidence.Envelope{
		Session:   session,
		Principal: "alice",
		Tool:      "chrome_live",
		Command:   "navigate",
		Args:      map[string]any{"url": url},
		Decision: evidence.Decision{
			Allowed: true, Stage: "act", Scope: "allowed: *.example.com",
			Cedar: "allow", PolicyIDs: []string{"permit-allowed-domains"},
		},
		Before:           map[string]any{"url": "about:blank", "title": ""},
		After:            map[string]any{"url": url, "title": "Example"},
		Output:           "navigated to " + url,
		InteractionCount: 1,
		DurationMicros:   1234,
	}
}

// storedForm returns the bytes Append would store for e (canonical JSON
// with the hash member), built from the public API only: e must hold no
// characters encoding/json escapes differently (<, >, &, U+2028).
func storedForm(t *testing.T, e *evidence.Envelope) []byte {
	t.Helper()
	h, err := evidence.Hash(e)
	if err != nil {
		t.Fatal(err)
	}
	c, err := evidence.CanonicalJSON(e)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(c))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	m["hash"] = h
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// testKey returns a fixed ed25519 key; different n give different keys.
func testKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
