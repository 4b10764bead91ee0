package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
)

// TestWaitForTextGoneIsRefusedWhereASecretWasTyped: on a page a secret was
// typed on, wait_for's text_gone is refused as its text is (waiting for a
// guess to disappear answers yes or no about it as waiting for it to
// appear does); a fixed wait, time_ms, tests nothing and is allowed.
func TestWaitForTextGoneIsRefusedWhereASecretWasTyped(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, decideManifest+`
[browser.commands.wait_for]
args.text_gone = {}
args.time_ms = {}
`)
	secretHere := on("https://login.example.com/")
	secretHere.Typed = f.m.Secrets
	d := gate.Decide(f.ask(t, m, "wait_for", map[string]any{"text_gone": "abc"}, secretHere, nil)).Deny
	if d == nil || d.Rule != "secret oracle" || !strings.Contains(d.Reason, "text_gone") {
		t.Errorf("wait_for {text_gone} on a secret's page: %+v, want the secret oracle refusal", d)
	}
	if d := gate.Decide(f.ask(t, m, "wait_for", map[string]any{"time_ms": int64(10)}, secretHere, nil)).Deny; d != nil {
		t.Errorf("wait_for {time_ms} on a secret's page refused: %+v", d)
	}
}
