package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/internal/testkit"
)

// fillOnlyManifest declares fill_form without select_option or click.
const fillOnlyManifest = `
[tool]
name = "f"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.fill_form]
`

// narrowClickManifest declares click only on selectors of the #ok-
// family, and select_option.
const narrowClickManifest = `
[tool]
name = "n"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.fill_form]
[browser.commands.select_option]
[browser.commands.click]
args.selector = { pattern = "^#ok-" }
`

// TestFillFormJudgesEachFieldAsItsCommand: a field of fill_form that
// chooses an option is judged as select_option, one that sets a checkbox
// or radio as a click on it: where it leads (out of the scope: refused,
// the field named), a form it submits (a submission, as a click's), and
// whether it may lead anywhere before other fields are filled (it must be
// the last). Each needs its command declared, and its arguments must pass
// that command's declared signature; a secret's placeholder goes only into
// text. Text fields need fill_form only.
func TestFillFormJudgesEachFieldAsItsCommand(t *testing.T) {
	f := newDecideFixture(t)
	fillOnly := testkit.Manifest(t, fillOnlyManifest)
	narrow := testkit.Manifest(t, narrowClickManifest)
	home := "https://www.example.com/"
	text := func(ref, s string) map[string]any { return map[string]any{"ref": ref, "text": s} }
	option := func(sel, v string) map[string]any { return map[string]any{"selector": sel, "value": v} }
	check := func(sel string, on bool) map[string]any { return map[string]any{"selector": sel, "checked": on} }
	box := func(label string, d gate.Destination) *gate.Element {
		return &gate.Element{Named: true, Label: label, Dest: d}
	}
	tests := []struct {
		name    string
		fill    bool // the fill-only manifest
		narrow  bool // the narrow-click manifest
		fields  []any
		els     []*gate.Element
		stage   evidence.Stage
		rule    string
		want    string // in the reason
		submits bool
	}{
		{name: "text, an option and a checkbox in the scope", fields: []any{text("e2", "ada"), option("#plan", "pro"), check("#terms", true)},
			els: []*gate.Element{textField(home, false), box("selector #plan", gate.Destination{}), box("selector #terms", gate.Destination{})}},
		{name: "a checkbox whose click leads out of the scope", fields: []any{text("e2", "ada"), check("#terms", true)},
			els:   []*gate.Element{textField(home, false), box("selector #terms", gate.Destination{URL: "https://admin.example.com/x"})},
			stage: evidence.StageScope, want: "field 2: the click on selector #terms leads to https://admin.example.com/x"},
		{name: "a listbox option leading out of the scope", fields: []any{option("#plan", "pro")},
			els:   []*gate.Element{box(`option "pro" of selector #plan`, gate.Destination{URL: "https://other.test/"})},
			stage: evidence.StageScope, want: "field 1: the select_option on"},
		{name: "a checkbox whose click submits, last", fields: []any{text("e2", "ada"), check("#terms", true)},
			els:     []*gate.Element{textField(home, false), box("selector #terms", gate.Destination{URL: "https://www.example.com/sent", Submits: true, InForm: true})},
			submits: true},
		{name: "a checkbox whose click leads on, not last", fields: []any{check("#terms", true), text("e2", "ada")},
			els:   []*gate.Element{box("selector #terms", gate.Destination{URL: "https://www.example.com/next"}), textField(home, false)},
			stage: evidence.StageArgs, want: "field 1: the click on selector #terms leads to https://www.example.com/next, so it must be the last field"},
		{name: "a secret's placeholder as an option", fields: []any{option("#plan", "<PW>")},
			els:   []*gate.Element{box("selector #plan", gate.Destination{})},
			stage: evidence.StageSecrets, rule: "secret field", want: "field 1:"},
		{name: "a checkbox without click declared", fill: true, fields: []any{text("e2", "ada"), check("#terms", true)},
			els:   []*gate.Element{textField(home, false), box("selector #terms", gate.Destination{})},
			stage: evidence.StageManifest, rule: "click not declared", want: "field 2:"},
		{name: "an option without select_option declared", fill: true, fields: []any{option("#plan", "pro")},
			els:   []*gate.Element{box("selector #plan", gate.Destination{})},
			stage: evidence.StageManifest, rule: "select_option not declared", want: "field 1:"},
		{name: "text only, with fill_form alone declared", fill: true, fields: []any{text("e2", "ada")},
			els: []*gate.Element{textField(home, false)}},
		{name: "a checkbox outside click's declared selectors", narrow: true, fields: []any{check("#ok-terms", true), check("#newsletter", true)},
			els:   []*gate.Element{box("selector #ok-terms", gate.Destination{}), box("selector #newsletter", gate.Destination{})},
			stage: evidence.StageArgs, want: "field 2, as click:"},
		{name: "checkboxes inside click's declared selectors", narrow: true, fields: []any{check("#ok-terms", true), check("#ok-news", false)},
			els: []*gate.Element{box("selector #ok-terms", gate.Destination{}), box("selector #ok-news", gate.Destination{})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := f.m
			switch {
			case tc.fill:
				m = fillOnly
			case tc.narrow:
				m = narrow
			}
			fs := on(home)
			fs.Fields = tc.els
			v := gate.Decide(f.ask(t, m, "fill_form", map[string]any{"fields": tc.fields}, fs, nil))
			switch {
			case tc.stage == "" && v.Deny != nil:
				t.Fatalf("refused at %s (%s): %s", v.Deny.Stage, v.Deny.Rule, v.Deny.Reason)
			case tc.stage != "" && v.Deny == nil:
				t.Fatalf("allowed, want a refusal at %s", tc.stage)
			case tc.stage != "" && (v.Deny.Stage != tc.stage || !strings.Contains(v.Deny.Rule, tc.rule) || !strings.Contains(pagetext.Unmarked(v.Deny.Reason), tc.want)):
				t.Fatalf("refused at %s rule %q (%s), want %s rule ~%q reason ~%q", v.Deny.Stage, v.Deny.Rule, v.Deny.Reason, tc.stage, tc.rule, tc.want)
			}
			if v.Submits != tc.submits {
				t.Errorf("submits %v, want %v", v.Submits, tc.submits)
			}
		})
	}
}
