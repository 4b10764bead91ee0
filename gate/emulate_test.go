package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
)

// TestProcessWideEmulationIsRefusedAtTheGateInTheUsersContext: in the
// user's context emulate's timezone, locale and cpu (which Chromium sets
// for a whole renderer process) are refused by Preflight, before Cedar,
// before a human is asked to approve a call that cannot run, and before
// the call counts; elsewhere, and the other settings, pass it.
func TestProcessWideEmulationIsRefusedAtTheGateInTheUsersContext(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, decideManifest+`
[browser.commands.emulate]
human_approval = true
`)
	for _, args := range []map[string]any{
		{"timezone": "Pacific/Auckland"},
		{"locale": "fr-FR"},
		{"cpu": 4},
	} {
		q := f.ask(t, m, "emulate", args, on("https://www.example.com/"), nil)
		q.UserContext = true
		if p := gate.Preflight(q); p.Deny == nil || p.Deny.Rule != "process-wide emulation" {
			t.Errorf("emulate %v in the user's context passes Preflight: %v", args, p.Deny)
		}
		v := gate.Decide(q)
		if v.Deny == nil {
			t.Errorf("emulate %v in the user's context is not refused at the gate (approval asked: %q)", args, strings.Join(v.Approval, "; "))
		}
	}
	for _, c := range []struct {
		args map[string]any
		user bool
	}{{map[string]any{"timezone": "Pacific/Auckland"}, false}, {map[string]any{"viewport": "800x600"}, true}} {
		q := f.ask(t, m, "emulate", c.args, on("https://www.example.com/"), nil)
		q.UserContext = c.user
		if p := gate.Preflight(q); p.Deny != nil {
			t.Errorf("emulate %v (user's context: %v) refused by Preflight: %v", c.args, c.user, p.Deny)
		}
	}
}
