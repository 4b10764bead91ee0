package executor_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// These tests drive the executor directly, with real Chromium, real Cedar
// policies and a real bbolt file; only the clock is fake where time matters.

const loopManifest = `
[tool]
name = "loop"
[tool.evidence]
screenshots = %v
[browser]
startup_timeout_seconds = 30
max_interactions = %d
idle_timeout_seconds = 60
session_timeout_seconds = 100
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
`

// clock is a fake clock tests advance by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type harness struct {
	ex    *executor.Executor
	m     *toolclad.Manifest
	store *evidence.Store
	clock *clock
	site  string
}

func newHarness(t *testing.T, maxInteractions int, screenshots bool) *harness {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.toml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(loopManifest, screenshots, maxInteractions)), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := cedar.LoadDir("../policies")
	if err != nil {
		t.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "evidence.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := &clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	ex, err := executor.New(executor.Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	site := demosite.New(demosite.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: site}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &harness{ex: ex, m: m, store: store, clock: c, site: "http://" + ln.Addr().String()}
}

func (h *harness) call(t *testing.T, session, command string, raw map[string]any) *toolclad.Reply {
	t.Helper()
	cmd := h.m.Command(command)
	if cmd == nil {
		t.Fatalf("manifest has no command %s", command)
	}
	args, err := cmd.Validate(raw)
	r := h.ex.Run(context.Background(), &toolclad.Call{Manifest: h.m, Command: cmd, Tool: "loop." + command,
		SessionID: session, RawArgs: raw, Args: args, ArgErr: err, Progress: func(string) {}})
	return r
}

func (h *harness) records(t *testing.T) []*evidence.Envelope {
	t.Helper()
	sessions, err := h.store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var all []*evidence.Envelope
	for _, s := range sessions {
		recs, err := h.store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	return all
}

func TestMaxInteractionsIsEnforced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2, false)
	for i := 0; i < 2; i++ {
		if r := h.call(t, "s1", "snapshot", nil); r.IsError {
			t.Fatalf("call %d refused: %s", i+1, r.Text)
		}
	}
	r := h.call(t, "s1", "snapshot", nil)
	if !r.IsError || !strings.Contains(r.Text, "max_interactions") {
		t.Fatalf("third call with max_interactions = 2: %+v", r)
	}
	recs := h.records(t)
	if len(recs) != 3 || recs[2].Decision.Allowed || recs[2].Decision.Stage != "limits" {
		t.Fatalf("evidence: %d records, last %+v", len(recs), recs[len(recs)-1].Decision)
	}
}

func TestIdleAndSessionTimeoutsAreEnforced(t *testing.T) {
	t.Parallel()
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 50, false)
		if r := h.call(t, "s1", "snapshot", nil); r.IsError {
			t.Fatal(r.Text)
		}
		h.clock.Advance(61 * time.Second)
		for i := 0; i < 2; i++ { // expired for good, not just for one call
			if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "idle_timeout_seconds") {
				t.Fatalf("call after 61s idle (limit 60s): %+v", r)
			}
		}
		if r := h.call(t, "s2", "snapshot", nil); r.IsError {
			t.Fatalf("another MCP session is unaffected: %s", r.Text)
		}
	})
	t.Run("session lifetime", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 50, false)
		for i := 0; i < 3; i++ {
			if r := h.call(t, "s1", "snapshot", nil); r.IsError {
				t.Fatalf("call at +%ds: %s", i*50, r.Text)
			}
			h.clock.Advance(50 * time.Second)
		}
		// Now 150s after the start: past session_timeout_seconds = 100,
		// although no gap was longer than the idle timeout.
		if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "session_timeout_seconds") {
			t.Fatalf("call 150s into a 100s session: %+v", r)
		}
	})
}

func TestSessionsHaveIsolatedBrowserContexts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	h.call(t, "alice", "navigate", map[string]any{"url": h.site + "/login"})
	h.call(t, "alice", "type_text", map[string]any{"selector": "input[name=username]", "text": "alice"})
	h.call(t, "alice", "type_text", map[string]any{"selector": "input[name=password]", "text": "pw"})
	if r := h.call(t, "alice", "click", map[string]any{"selector": "button[type=submit]"}); !strings.Contains(r.Text, `title="Dashboard"`) {
		t.Fatalf("alice did not sign in: %s", r.Text)
	}
	// Bob's session has its own browser context: no cookie, so the
	// dashboard sends him to the sign-in page.
	r := h.call(t, "bob", "navigate", map[string]any{"url": h.site + "/dashboard"})
	if r.IsError || !strings.Contains(r.Text, `title="Sign in"`) || strings.Contains(r.Text, "is_authenticated=true") {
		t.Fatalf("bob's session saw alice's login: %s", r.Text)
	}
}

func TestFinalURLOutsideScopeIsRefusedAndReset(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, true)
	// A page on 127.0.0.3 stands in for a forbidden site. (Request
	// interception, which stops the request itself, is a later layer; this
	// test is about the check on the final URL.)
	ln, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<title>out</title>")) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	out := "http://" + ln.Addr().String() + "/"

	if r := h.call(t, "s", "navigate", map[string]any{"url": h.site + "/jump?to=" + out}); r.IsError {
		t.Fatal(r.Text)
	}
	r := h.call(t, "s", "click", map[string]any{"selector": "#go"})
	if !r.IsError || !strings.Contains(r.Text, "DENIED at scope") || !strings.Contains(r.Text, "about:blank") {
		t.Fatalf("script navigation out of scope: %+v", r)
	}
	recs := h.records(t)
	last := recs[len(recs)-1]
	if last.Decision.Allowed || last.After["url"] != "about:blank" {
		t.Fatalf("evidence of the reset: decision %+v after %v", last.Decision, last.After)
	}
	// screenshots = true: every interaction's image is stored by hash.
	for _, rec := range recs {
		if rec.ScreenshotSHA256 == "" {
			t.Fatalf("record %d has no screenshot hash", rec.Seq)
		}
		png, err := h.store.Screenshot(rec.ScreenshotSHA256)
		if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
			t.Fatalf("record %d screenshot: %v (%d bytes)", rec.Seq, err, len(png))
		}
	}
}

func TestSnapshotFollowsExtractMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want, notWant string }{
		{"accessibility_tree", `heading "Documentation" [level=1]`, "<h1>"},
		{"html", "<h1>Documentation</h1>", "[level=1]"},
		{"text", "Documentation\n", "<h1>"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 50, false)
			h.m.Browser.ExtractMode = tc.mode
			h.call(t, "s", "navigate", map[string]any{"url": h.site + "/docs"})
			r := h.call(t, "s", "snapshot", nil)
			if r.IsError || !strings.Contains(r.Text, tc.want) || strings.Contains(r.Text, tc.notWant) {
				t.Fatalf("snapshot in %s mode:\n%s", tc.mode, r.Text)
			}
		})
	}
}
