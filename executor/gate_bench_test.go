package executor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkGateDecision measures the gate's decision for a navigate call
// on a real tab: argument validation, the session's tabs (one CDP round
// trip), the URL scope and the Cedar policies of the shipped directory.
// The page state it judges is given, as the loop reads it before the gate.
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
	s, _ := e.session("bench", m)
	if err := s.ensureTab(); err != nil {
		b.Fatal(err)
	}
	cmd := m.Command("navigate")
	raw := map[string]any{"url": "https://docs.example.com/guide?page=2"}
	before := PageState{URL: "about:blank", PageLoaded: true, TabCount: 1}
	for b.Loop() {
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		t := &turn{args: args, start: time.Now(), count: 1}
		if deny := e.gate(s.tab, s, t, cmd, before, &approvalHold{}); deny != nil {
			b.Fatal(deny)
		}
	}
}

// BenchmarkPolicyDecision is the gate's decision without the browser:
// argument validation, the URL scope and Cedar, as for a navigate call.
func BenchmarkPolicyDecision(b *testing.B) {
	m, engine := benchSetup(b, b.TempDir())
	scopes, err := Scopes([]*toolclad.Manifest{m})
	if err != nil {
		b.Fatal(err)
	}
	sc, cmd := scopes[m], m.Command("navigate")
	raw := map[string]any{"url": "https://docs.example.com/guide?page=2"}
	state := PageState{URL: "https://www.example.com/", Domain: "www.example.com", PageLoaded: true, TabCount: 1}.Map()
	for b.Loop() {
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		v := sc.Check(args["url"].(string))
		d := engine.Decide(&cedar.Request{Principal: "local", Action: "browse", ResourceType: "Web::BrowserSession",
			Session: "s", Tool: "bench", Command: "navigate", Args: args, URL: v.URL, URLDomain: v.Host,
			DomainSets: sc.DomainSets(v.Host), PageState: state, RiskTier: "low", InteractionCount: 1,
			Counters: map[string]int{"session_submit_count": 0}, Time: time.Now()})
		if !v.Allowed || !d.Allowed {
			b.Fatal(v, d)
		}
	}
}

// benchSetup loads the benchmarks' manifest and the shipped policies.
func benchSetup(b *testing.B, dir string) (*toolclad.Manifest, *cedar.Engine) {
	b.Helper()
	path := filepath.Join(dir, "m.toml")
	os.WriteFile(path, []byte(`[tool]
name = "bench"
[browser.scope]
allowed_domains = ["*.example.com"]
blocked_domains = ["admin.*"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], scope_check = true }
`), 0o644)
	m, err := toolclad.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	engine, err := cedar.LoadDir("../policies")
	if err != nil {
		b.Fatal(err)
	}
	return m, engine
}
