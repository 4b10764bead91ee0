package executor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkSnapshotLongPage measures snapshot calls through the whole loop
// (observe, decide, act, record with durable evidence) on the Go
// specification (a 293 KB reference page, from GOROOT), and, as
// sub-benchmarks, the two reads it makes of the browser and the rendering
// alone, to show where a long page's snapshot spends its time.
func BenchmarkSnapshotLongPage(b *testing.B) {
	spec, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html"))
	if err != nil {
		b.Skip("no Go specification in GOROOT:", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>The Go Programming Language Specification</title>")
		w.Write(spec)
	})}
	go srv.Serve(ln)
	defer srv.Close()
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
[browser.commands.snapshot]
`))
	if err != nil {
		b.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(b), Evidence: store})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	call := func(command string, raw map[string]any) *toolclad.Reply {
		cmd := m.Command(command)
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		r := e.Run(context.Background(), &toolclad.Call{SessionID: "bench", Manifest: m, Command: cmd, Tool: "bench." + command, Args: args, RawArgs: raw})
		if r.IsError {
			b.Fatalf("%s: %s", command, r.Text)
		}
		return r
	}
	call("navigate", map[string]any{"url": "http://" + ln.Addr().String() + "/"})
	s, _ := e.session(&toolclad.Call{SessionID: "bench", Manifest: m})
	b.Run("call", func(b *testing.B) {
		for b.Loop() {
			call("snapshot", map[string]any{"max_chars": int64(1000000)})
		}
	})
	b.Run("capture", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.capture(s.tab.ctx, s.tab.ctx, "", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	fc, err := s.capture(s.tab.ctx, s.tab.ctx, "", 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("render", func(b *testing.B) {
		for b.Loop() {
			r := &renderer{snap: fc.snap, ax: fc.ax, cur: fc, refs: map[string]refTarget{}}
			v := newDocView(fc.snap.Documents[0])
			r.top, r.curTop = v, v
			r.render(v, 0)
			_ = r.output()
		}
	})
}
