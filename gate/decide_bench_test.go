package gate_test

import (
	"testing"
	"time"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkPolicyDecision is the gate's decision without the browser:
// argument validation and Decide (limits, the URL scope, Cedar) on given
// facts, as for a navigate call. (executor's BenchmarkGateDecision adds
// observing a real tab.)
func BenchmarkPolicyDecision(b *testing.B) {
	m := testkit.Manifest(b, `[tool]
name = "bench"
[browser.scope]
allowed_domains = ["*.example.com"]
blocked_domains = ["admin.*"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], scope_check = true }
`)
	engine := testkit.Policies(b)
	cmd := m.Command("navigate")
	raw := map[string]any{"url": "https://docs.example.com/guide?page=2"}
	f := &gate.Facts{State: gate.PageState{URL: "https://www.example.com/", Domain: "www.example.com", PageLoaded: true, TabCount: 1}}
	l := gate.NewLimits(time.Now())
	for b.Loop() {
		args, err := cmd.Validate(raw)
		if err != nil {
			b.Fatal(err)
		}
		q := &gate.Question{Call: &toolclad.Call{Manifest: m, Command: cmd, Args: args}, Facts: f, Scope: m.Scope(),
			Policies: engine, Principal: "local", Session: "s", Limits: &l, Now: time.Now()}
		if v := gate.Decide(q); v.Deny != nil || len(v.Approval) > 0 {
			b.Fatal(v.Deny)
		}
	}
}
