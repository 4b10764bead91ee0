package executor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkGateDecision measures observe and decide for a navigate call on
// a real (blank) tab: argument validation, the page state and the
// session's tabs (CDP round trips sent together), the URL scope and the
// Cedar policies of the shipped directory.
func BenchmarkGateDecision(b *testing.B) {
	dir := b.TempDir()
	m, engine := benchSetup(b, dir)
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, _ := e.session(&toolclad.Call{SessionID: "bench", Manifest: m})
	if err := s.ensureTab(); err != nil {
		b.Fatal(err)
	}
	cmd := m.Command("navigate")
	raw := map[string]any{"url": "https://docs.example.com/guide?page=2"}
	for b.Loop() {
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		t := &turn{call: &toolclad.Call{Manifest: m, Command: cmd, Args: args}, start: time.Now()}
		f := s.observe(s.tab.ctx, cmd, args)
		if v := gate.Decide(e.question(s, t, f, false)); v.Deny != nil {
			b.Fatal(v.Deny)
		}
	}
}

// BenchmarkGovernedCall is what governance costs one call on a real tab,
// through the whole loop (Executor.Run) for a command whose action is
// next to nothing (console_messages reads the session's own log): observe
// (the page's state, cookies, history and tabs), decide (scope and the
// shipped Cedar policies), the read after the action (the state again and
// the session's other tabs), the evidence appended and fsynced to a bbolt
// file, and the reply. An MCP client's call adds its stdio round trip.
func BenchmarkGovernedCall(b *testing.B) {
	rig := newBenchRig(b, []byte("<!doctype html><title>Orders</title><form><select><option>Open</option></select><button>Apply</button></form>"))
	e := rig.newExecutor()
	defer e.Close()
	rig.call(b, e, "bench", "navigate", map[string]any{"url": rig.url})
	for b.Loop() {
		rig.call(b, e, "bench", "console_messages", map[string]any{})
	}
}

// BenchmarkObserveClick measures observe for a click by ref on a real tab:
// the page's state and the element (found by its ref, and where clicking
// it leads, read in the isolated world), which observe reads side by side.
func BenchmarkObserveClick(b *testing.B) {
	rig := newBenchRig(b, []byte("<!doctype html><title>Orders</title><form action=/results><label><input type=checkbox name=late> Only late orders</label><button>Apply</button></form>"))
	e := rig.newExecutor()
	defer e.Close()
	rig.call(b, e, "bench", "navigate", map[string]any{"url": rig.url})
	rig.call(b, e, "bench", "snapshot", map[string]any{})
	s, _ := e.session(&toolclad.Call{SessionID: "bench", Manifest: rig.m})
	ref := ""
	for r := range s.tab.refs { // any of the page's controls will do
		if ref == "" || r < ref {
			ref = r
		}
	}
	if ref == "" {
		b.Fatal("the snapshot gave no ref")
	}
	cmd := rig.m.Command("click")
	args, err := cmd.Validate(map[string]any{"ref": ref})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if f := s.observe(s.tab.ctx, cmd, args); f.Element == nil || f.Element.Err != nil {
			b.Fatalf("observe: %+v", f.Element)
		}
	}
}

// benchSetup loads the benchmarks' manifest and the shipped policies.
func benchSetup(b *testing.B, dir string) (*toolclad.Manifest, *cedar.Engine) {
	b.Helper()
	path := testkit.WriteFile(b, dir, "m.toml", `[tool]
name = "bench"
[browser.scope]
allowed_domains = ["*.example.com"]
blocked_domains = ["admin.*"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], scope_check = true }
`)
	m, err := toolclad.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return m, testkit.Policies(b)
}
