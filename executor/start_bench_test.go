package executor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkStart measures a governed session's start on Debian's Chromium,
// stage by stage:
//
//   - launch: the browser started (its browser-wide egress proxy, the
//     process, its DevTools port, the first tab), as serve does at start;
//   - first-navigate: a new MCP session's first call, navigate, on a
//     running browser (the session, its browser context with its own
//     egress proxy, its tab, the guard attached, then observe, decide,
//     act and record);
//   - navigate: the same navigate on a session that has its tab.
//
// first-navigate less navigate is what a session's context and tab cost.
func BenchmarkStart(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Start</title><p><a href=/next>Continue</a></p>")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	page := "http://" + ln.Addr().String() + "/"
	dir := b.TempDir()
	m, err := toolclad.Load(testkit.WriteFile(b, dir, "m.toml", `[tool]
name = "bench"
[browser]
max_interactions = 100000
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`))
	if err != nil {
		b.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	newExecutor := func() *Executor {
		e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(b), Evidence: store})
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	start := func(e *Executor) {
		e.mu.Lock()
		bk := e.backendLocked(m)
		e.mu.Unlock()
		if err := bk.warm(); err != nil {
			b.Fatal(err)
		}
	}
	navigate := func(e *Executor, session string) {
		args, err := m.Command("navigate").Validate(map[string]any{"url": page})
		if err != nil {
			b.Fatal(err)
		}
		r := e.Run(context.Background(), &toolclad.Call{SessionID: session, Manifest: m, Command: m.Command("navigate"),
			Tool: "bench.navigate", Args: args, RawArgs: map[string]any{"url": page}})
		if r.IsError {
			b.Fatalf("navigate: %s", r.Text)
		}
	}

	b.Run("launch", func(b *testing.B) {
		for b.Loop() {
			e := newExecutor()
			start(e)
			b.StopTimer()
			e.Close()
			b.StartTimer()
		}
	})
	e := newExecutor()
	defer e.Close()
	start(e)
	b.Run("first-navigate", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			id := fmt.Sprintf("first-%d", i)
			navigate(e, id)
			b.StopTimer()
			e.EndSession(id)
			b.StartTimer()
		}
	})
	b.Run("navigate", func(b *testing.B) {
		for b.Loop() {
			navigate(e, "warm")
		}
	})
}
