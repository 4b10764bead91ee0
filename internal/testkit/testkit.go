// Package testkit holds the helpers browsergate's tests share: writing a
// manifest and loading it, the shipped policies, an evidence store in a
// temporary directory, a Chromium to attach to as a user's own (live
// mode), a fake clock, a log sink, and Eventually for conditions a test
// waits on. Every helper fails the test on a setup error, so no test
// carries on with half a fixture. It is imported only by _test.go files.
package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// WriteFile writes data to name in dir and returns the file's path.
func WriteFile(t testing.TB, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return path
}

// Manifest writes src as a manifest file in a new temporary directory and
// loads it.
func Manifest(t testing.TB, src string) *toolclad.Manifest {
	t.Helper()
	m, err := toolclad.Load(WriteFile(t, t.TempDir(), "manifest.toml", src))
	if err != nil {
		t.Fatalf("load the test manifest: %v", err)
	}
	return m
}

// PoliciesDir is the repository's shipped policy directory.
func PoliciesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "policies")
}

// Policies loads the shipped policies (with their schema).
func Policies(t testing.TB) *cedar.Engine {
	t.Helper()
	engine, err := cedar.LoadDir(PoliciesDir())
	if err != nil {
		t.Fatalf("load the shipped policies: %v", err)
	}
	return engine
}

// CopyPolicies copies the shipped policy directory into a temporary one
// that the test may edit, and returns its path.
func CopyPolicies(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(PoliciesDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(PoliciesDir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		WriteFile(t, dir, e.Name(), string(data))
	}
	return dir
}

// Store opens an evidence store in a temporary directory, closed when the
// test ends.
func Store(t testing.TB) *evidence.Store {
	t.Helper()
	store, err := evidence.Open(filepath.Join(t.TempDir(), "evidence.db"), nil)
	if err != nil {
		t.Fatalf("open the evidence store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// Clock is a fake clock that a test advances by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time (a func value fits executor.Config.Now).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Eventually calls check until it returns "" or 15 s pass, and then fails
// the test with check's last complaint.
func Eventually(t testing.TB, check func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SyncBuffer is a log sink that goroutines write to while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// PageContent is the text of a reply between its PAGE CONTENT markers
// (the whole reply when it has none).
func PageContent(reply string) string {
	open := strings.Index(reply, "]\n")
	end := strings.LastIndex(reply, "\n[END PAGE CONTENT")
	if open < 0 || end < open {
		return reply
	}
	return reply[open+2 : end]
}

// SecretManifest loads a manifest with one secret, PW, of the given value
// (read from a file beside it), typed only on login.example.com and
// *.auth.example.com, in a scope of *.example.com.
func SecretManifest(t testing.TB, value string) *toolclad.Manifest {
	t.Helper()
	dir := t.TempDir()
	WriteFile(t, dir, "pw", value)
	path := WriteFile(t, dir, "m.toml", `
[tool]
name = "s"
[browser.scope]
allowed_domains = ["*.example.com"]
[secrets.PW]
file = "pw"
domains = ["login.example.com", "*.auth.example.com"]
[browser.commands.type_text]
`)
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
