package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// scriptManifest declares execute_js with its opt-in ref and frame.
const scriptManifest = `
[tool]
name = "s"
[browser.scope]
allowed_domains = ["*.example.com", "example.com"]
[browser.commands.execute_js]
args.expression = {}
args.ref = {}
args.frame = {}
`

// TestDecideScriptDocument: execute_js with ref or frame runs in the
// document the executor found for it, which must be inside the scope
// (about:blank and about:srcdoc are their parent's); an element or frame
// that could not be found is refused with the executor's reason; a
// document where a typed secret is held is the no-oracle rule's; and what
// passes is still held for a human by the shipped policies.
func TestDecideScriptDocument(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, scriptManifest)
	home := "https://www.example.com/"
	pw := f.m.Secrets[0] // PW
	frame := map[string]any{"frame": "iframe#pay", "expression": "document.title"}
	for _, tc := range []struct {
		name  string
		args  map[string]any
		el    *gate.Element
		held  []*toolclad.Secret
		stage evidence.Stage // "" = held for a human
		want  string
	}{
		{"frame in scope", frame, &gate.Element{Named: true, Label: "frame", Document: "https://pay.example.com/form"}, nil, "", ""},
		{"element in the tab's own page", map[string]any{"ref": "e3", "expression": "(el) => el.id"}, &gate.Element{Named: true, Label: "ref e3"}, nil, "", ""},
		{"blank frame", frame, &gate.Element{Named: true, Label: "frame", Document: "about:blank"}, nil, "", ""},
		{"srcdoc frame", frame, &gate.Element{Named: true, Label: "frame", Document: "about:srcdoc"}, nil, "", ""},
		{"no ref, no frame", map[string]any{"expression": "1"}, nil, nil, "", ""},
		{"data: frame", frame, &gate.Element{Named: true, Label: "frame", Document: "data:text/html,<p>x"}, nil, evidence.StageScope, "outside the scope"},
		{"frame of another site", frame, &gate.Element{Named: true, Label: "frame", Document: "https://tracker.test/"}, nil, evidence.StageScope, "not the agent's to script"},
		{"element in a frame out of scope", map[string]any{"ref": "e9", "expression": "(el) => el.value"}, &gate.Element{Named: true, Label: "ref e9", Document: "https://other.test/f"}, nil, evidence.StageScope, "outside the scope"},
		{"frame not found", frame, &gate.Element{Named: true, Label: "frame", Err: errNoSuchRef}, nil, evidence.StageArgs, "unknown element ref"},
		{"frame where a typed secret is held", frame, &gate.Element{Named: true, Label: "frame", Document: "https://login.example.com/"}, []*toolclad.Secret{pw}, evidence.StageSecrets, "secret was typed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := withElement(on(home), tc.el)
			fs.Held = tc.held
			q := f.ask(t, m, "execute_js", tc.args, fs, nil)
			v := gate.Decide(q)
			switch {
			case tc.stage == "" && (v.Deny != nil || len(v.Approval) == 0):
				t.Fatalf("refused %+v / approval %v; want it held for a human", v.Deny, v.Approval)
			case tc.stage != "" && v.Deny == nil:
				t.Fatalf("allowed, want a refusal at %s", tc.stage)
			case tc.stage != "" && (v.Deny.Stage != tc.stage || !strings.Contains(v.Deny.Reason, tc.want)):
				t.Fatalf("refused at %s: %s; want %s saying %q", v.Deny.Stage, v.Deny.Reason, tc.stage, tc.want)
			}
		})
	}
}
