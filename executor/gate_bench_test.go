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

// BenchmarkGateDecision measures the whole gate decision for a navigate
// call, with no browser round trip: argument validation, the URL scope and
// the Cedar policies of the shipped policy directory.
func BenchmarkGateDecision(b *testing.B) {
	dir := b.TempDir()
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
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := e.session("bench", m)
	cmd := m.Command("navigate")
	raw := map[string]any{"url": "https://docs.example.com/guide?page=2"}
	before := PageState{URL: "https://www.example.com/", Domain: "www.example.com", PageLoaded: true, TabCount: 1}
	for b.Loop() {
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		t := &turn{args: args, start: time.Now(), count: 1}
		if deny := e.gate(b.Context(), s, t, cmd, before); deny != nil {
			b.Fatal(deny)
		}
	}
}
