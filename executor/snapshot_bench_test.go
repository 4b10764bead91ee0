package executor

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkSnapshotLongPage measures snapshot calls through the whole loop
// (observe, decide, act, record with durable evidence) on the Go
// specification (a 293 KB reference page, from GOROOT): a navigate and
// the snapshot of the new document, snapshots of the same document again,
// and, as sub-benchmarks, each of the two reads a snapshot makes of the
// browser, both
// together as a snapshot sends them (capture), and the rendering alone, to
// show where a long page's snapshot spends its time; and the read of the
// page's state that every call makes twice (read-page).
func BenchmarkSnapshotLongPage(b *testing.B) {
	spec, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html"))
	if err != nil {
		b.Skip("no Go specification in GOROOT:", err)
	}
	rig := newBenchRig(b, append([]byte("<!doctype html><title>The Go Programming Language Specification</title>"), spec...))
	e := rig.newExecutor()
	defer e.Close()
	call := func(command string, raw map[string]any) { rig.call(b, e, "bench", command, raw) }
	call("navigate", map[string]any{"url": rig.url})
	s, _ := e.session(&toolclad.Call{SessionID: "bench", Manifest: rig.m})
	b.Run("navigate-and-snapshot", func(b *testing.B) {
		for b.Loop() {
			call("navigate", map[string]any{"url": rig.url})
			call("snapshot", map[string]any{"max_chars": int64(1000000)})
		}
	})
	b.Run("call", func(b *testing.B) {
		for b.Loop() {
			call("snapshot", map[string]any{"max_chars": int64(1000000)})
		}
	})
	// The page's state, as observe reads it before each call and the
	// check after it reads it again.
	b.Run("read-page", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := s.readPage(s.tab.ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The two reads alone, one after the other: capture sends them
	// together, and both run on the page's renderer thread.
	b.Run("accessibility-tree", func(b *testing.B) {
		for b.Loop() {
			if _, err := chromedp.Call(s.tab.ctx, fullAXTree, accessibility.GetFullAXTreeParams{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			if _, err := readLayout(s.tab.ctx); err != nil {
				b.Fatal(err)
			}
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
	// The rendering alone: package snapshot's BenchmarkRender measures it
	// on the saved captures, this page's among them (go-spec).
	b.Run("render", func(b *testing.B) {
		for b.Loop() {
			if _, err := snapshot.Render(fc, snapshot.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchRig is what the executor's browser benchmarks (and a few tests)
// share: a page served
// on loopback, a manifest that allows it (navigate and snapshot), and
// executors with the shipped policies and durable evidence.
type benchRig struct {
	url   string
	m     *toolclad.Manifest
	store *evidence.Store
	b     testing.TB
}

func newBenchRig(b testing.TB, page []byte) *benchRig {
	site := serveLoopback(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
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
[browser.commands.console_messages]
[browser.commands.click]
`))
	if err != nil {
		b.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return &benchRig{url: site + "/", m: m, store: store, b: b}
}

// newExecutor is an executor of the rig's manifest; the caller closes it.
func (r *benchRig) newExecutor() *Executor {
	e, err := New(Config{Manifests: []*toolclad.Manifest{r.m}, Policies: testkit.Policies(r.b), Evidence: r.store})
	if err != nil {
		r.b.Fatal(err)
	}
	return e
}

// call runs command in session through e's whole loop; a refusal fails b.
func (r *benchRig) call(b testing.TB, e *Executor, session, command string, raw map[string]any) {
	cmd := r.m.Command(command)
	args, err := cmd.Validate(raw)
	if err != nil {
		b.Fatal(err)
	}
	if reply := e.Run(context.Background(), &toolclad.Call{SessionID: session, Manifest: r.m, Command: cmd, Tool: "bench." + command, Args: args, RawArgs: raw}); reply.IsError {
		b.Fatalf("%s: %s", command, reply.Text)
	}
}
