package gate_test

import (
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
)

// contextsManifest declares the context commands, with a secret.
const contextsManifest = `
[tool]
name = "d"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.new_context]
[browser.commands.switch_context]
[secrets.PW]
env = "CONTEXTS_TEST_PW"
domains = ["login.example.com"]
`

// TestContextChangesRefusedWhileASecretIsHere: new_context and
// switch_context change the tab the session acts in, so, like new_tab,
// they wait until the tab has left a site a secret was typed on; away
// from it, they are allowed.
func TestContextChangesRefusedWhileASecretIsHere(t *testing.T) {
	t.Setenv("CONTEXTS_TEST_PW", "correct horse battery")
	m := testkit.Manifest(t, contextsManifest)
	f := &decideFixture{m: m, engine: testkit.Policies(t)}
	for _, call := range []struct {
		command string
		args    map[string]any
	}{{"new_context", nil}, {"switch_context", map[string]any{"context": "c2"}}} {
		fs := on("https://login.example.com/")
		fs.Held = m.Secrets
		v := gate.Decide(f.ask(t, m, call.command, call.args, fs, nil))
		if v.Deny == nil || v.Deny.Stage != evidence.StageSecrets || v.Deny.Rule != "secret tab" {
			t.Errorf("%s while a secret is held here: %+v, want the secret tab rule", call.command, v.Deny)
		}
		if v := gate.Decide(f.ask(t, m, call.command, call.args, on("https://www.example.com/"), nil)); v.Deny != nil {
			t.Errorf("%s away from the secret: %+v, want allowed", call.command, v.Deny)
		}
	}
}
