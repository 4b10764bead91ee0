package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// offersManifest declares the commands the refusals below run for, with
// wait_for narrowed to text and none of the commands their hints name.
const offersManifest = `
[tool]
name = "o"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.switch_tab]
[browser.commands.new_tab]
[browser.commands.wait_for]
args.text = { type = "string" }
[secrets.PW]
env = "DECIDE_TEST_PW"
domains = ["login.example.com"]
`

// TestRefusalsOfferOnlyDeclaredCalls proves that a refusal's hint names a
// command (and its argument) only when the manifest declares it: with
// decideManifest's list_tabs, navigate and wait_for the hints are there;
// without them they are left out, and the refusal still says why.
func TestRefusalsOfferOnlyDeclaredCalls(t *testing.T) {
	f := newDecideFixture(t)
	bare := testkit.Manifest(t, offersManifest)
	secretHere := func() *gate.Facts {
		fs := on("https://login.example.com/")
		fs.Typed = f.m.Secrets
		return fs
	}
	full := testkit.Manifest(t, decideManifest+`
[browser.commands.list_tabs]
[browser.commands.switch_tab]
[browser.commands.wait_for]
`)
	for _, tc := range []struct {
		name, command string
		args          map[string]any
		facts         func() *gate.Facts
		why, hint     string
	}{
		{"unknown tab", "switch_tab", map[string]any{"tab": "t9"}, func() *gate.Facts { return on("https://www.example.com/") },
			"among the tabs this session may use", "(list_tabs lists them)"},
		{"tab change on a secret's page", "new_tab", map[string]any{"url": "https://www.example.com/"}, secretHere,
			"may not run until the tab has left it", "(navigate away first)"},
		{"wait_for text on a secret's page", "wait_for", map[string]any{"text": "abc"}, secretHere,
			"could read the secret a piece at a time", "wait for a selector instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, on := range []struct {
				name   string
				m      *toolclad.Manifest
				offers bool
			}{{"declared", full, true}, {"not declared", bare, false}} {
				d := gate.Decide(f.ask(t, on.m, tc.command, tc.args, tc.facts(), nil)).Deny
				if d == nil {
					t.Fatalf("%s: %s %v allowed, want a refusal", on.name, tc.command, tc.args)
				}
				if !strings.Contains(d.Reason, tc.why) {
					t.Errorf("%s: refusal %q does not say %q", on.name, d.Reason, tc.why)
				}
				if strings.Contains(d.Reason, tc.hint) != on.offers {
					t.Errorf("%s: refusal %q: hint %q shown = %v, want %v", on.name, d.Reason, tc.hint, !on.offers, on.offers)
				}
			}
		})
	}
}
