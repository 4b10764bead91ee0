package gate_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/internal/testkit/commandtable"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// The decide step is a pure function: these tests give it facts by hand
// (no browser) and check each stage, each shipped policy and what it asks
// enforce to do.

const decideManifest = `
[tool]
name = "d"
[browser]
max_interactions = 5
idle_timeout_seconds = 60
session_timeout_seconds = 600
[browser.scope]
allowed_domains = ["*.example.com", "example.com"]
blocked_domains = ["admin.example.com"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.go_back]
[browser.commands.execute_js]
[browser.commands.screenshot]
risk_tier = "critical"
[browser.commands.scroll]
human_approval = true
[browser.commands.press_key]
[browser.commands.select_option]
[browser.commands.hover]
[browser.commands.go_forward]
[browser.commands.reload]
[browser.commands.handle_dialog]
[browser.commands.new_tab]
[browser.commands.drag]
[browser.commands.fill_form]
[secrets.PW]
env = "DECIDE_TEST_PW"
domains = ["login.example.com"]
[secrets.TOKEN]
env = "DECIDE_TEST_TOKEN"
domains = ["login.example.com"]
fields = "text"
`

// noSubmitManifest declares click without submit_form.
const noSubmitManifest = `
[tool]
name = "n"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.click]
[browser.commands.press_key]
`

type decideFixture struct {
	m, noSubmit *toolclad.Manifest
	engine      *cedar.Engine
	secrets     *gate.Secrets
}

func newDecideFixture(t *testing.T) *decideFixture {
	t.Helper()
	t.Setenv("DECIDE_TEST_PW", "correct horse battery")
	t.Setenv("DECIDE_TEST_TOKEN", "tok-0123456789")
	f := &decideFixture{m: testkit.Manifest(t, decideManifest), noSubmit: testkit.Manifest(t, noSubmitManifest), engine: testkit.Policies(t)}
	var err error
	if f.secrets, err = gate.NewSecrets(f.m); err != nil {
		t.Fatal(err)
	}
	return f
}

var decideNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// The executor's names for what these tests give the gate by hand:
// executor.ErrNoSuchRef, and the rule its acting guard stops an unjudged
// form submission by.
var errNoSuchRef = errors.New("unknown element ref")

const ruleUnjudgedSubmission = "form submission not judged"

// ask builds the question for a call of command on manifest m with the
// given arguments, facts and limits.
func (f *decideFixture) ask(t *testing.T, m *toolclad.Manifest, command string, raw map[string]any, fs *gate.Facts, l *gate.Limits) *gate.Question {
	t.Helper()
	cmd := m.Command(command)
	if cmd == nil {
		t.Fatalf("manifest declares no %s", command)
	}
	args, argErr := cmd.Validate(raw)
	sc := m.Scope()
	if l == nil {
		nl := gate.NewLimits(decideNow.Add(-time.Second))
		l = &nl
	}
	return &gate.Question{Call: &toolclad.Call{Manifest: m, Command: cmd, Tool: "d." + command, Args: args, RawArgs: raw, ArgErr: argErr},
		Facts: fs, Observes: commandtable.Observations[command], ChangesTab: commandtable.TabCommands[command], Scope: sc, Policies: f.engine, Secrets: f.secrets, Principal: "local", Session: "s1", Limits: l, Now: decideNow}
}

func on(url string) *gate.Facts {
	return &gate.Facts{State: gate.PageState{URL: url, PageLoaded: true, TabCount: 1}, Forms: 0}
}

func authenticated(url string) *gate.Facts {
	f := on(url)
	f.State.IsAuthenticated, f.State.HasForms = true, true
	return f
}

func withElement(f *gate.Facts, el *gate.Element) *gate.Facts { f.Element = el; return f }

func link(to string) *gate.Element {
	return &gate.Element{Named: true, Label: "ref e1", Dest: gate.Destination{URL: to}}
}

func submitButton(to string) *gate.Element {
	return &gate.Element{Named: true, Label: "ref e2", Dest: gate.Destination{URL: to, Submits: true, InForm: true}}
}

func textField(page string, password bool) *gate.Element {
	return &gate.Element{Named: true, Label: "ref e3", Field: gate.Field{URL: page, Field: true, Tag: "input", Password: password, MaxLength: -1}}
}

func TestDecide(t *testing.T) {
	f := newDecideFixture(t)
	home := "https://www.example.com/"
	tests := []struct {
		name     string
		m        *toolclad.Manifest // default f.m
		command  string
		args     map[string]any
		facts    *gate.Facts
		limits   *gate.Limits
		approved bool
		// want
		stage    evidence.Stage // "" = allowed
		rule     string         // substring of the rule
		approval bool           // held for a human
		policies []string       // permits that decided (allowed calls)
		reset    bool
		close    int
		submits  bool
		masked   bool
		target   string
	}{
		{name: "navigate in scope", command: "navigate", args: map[string]any{"url": "https://docs.example.com/a"}, facts: on(home),
			policies: []string{"navigate-allowed-domains"}, target: "https://docs.example.com/a"},
		{name: "navigate from a blank tab", command: "navigate", args: map[string]any{"url": "https://example.com/"}, facts: on("about:blank"),
			policies: []string{"navigate-allowed-domains"}},
		{name: "navigate to a blocked domain", command: "navigate", args: map[string]any{"url": "https://admin.example.com/"}, facts: on(home),
			stage: evidence.StageScope, rule: "admin.example.com"},
		{name: "navigate out of scope", command: "navigate", args: map[string]any{"url": "https://other.test/"}, facts: on(home),
			stage: evidence.StageScope},
		{name: "navigate to a private address", command: "navigate", args: map[string]any{"url": "http://127.0.0.1/"}, facts: on(home),
			stage: evidence.StageScope, rule: "loopback"},
		{name: "bad arguments", command: "navigate", args: map[string]any{"url": 7}, facts: on(home),
			stage: evidence.StageArgs, rule: "argument url"},
		{name: "unreadable page", command: "snapshot", facts: on(""), stage: evidence.StageObserve, rule: "page state"},
		{name: "tab left the scope by itself", command: "snapshot", facts: on("https://other.test/x"),
			stage: evidence.StageScope, reset: true},
		{name: "popup out of scope", command: "snapshot",
			facts: &gate.Facts{State: on(home).State, Pages: []gate.Page{{ID: "p1", URL: "https://other.test/"}, {ID: "p2", URL: "https://docs.example.com/"}}},
			stage: evidence.StageScope, rule: "popup", close: 1},
		{name: "popup whose navigation was refused", command: "snapshot",
			facts: &gate.Facts{State: on(home).State, Pages: []gate.Page{{ID: "p1", URL: "about:blank", RefusedNav: "http://127.0.0.2/"}}},
			stage: evidence.StageScope, rule: "popup", close: 1},
		{name: "popup still loading is left alone", command: "snapshot",
			facts:    &gate.Facts{State: on(home).State, Pages: []gate.Page{{ID: "p1", URL: "about:blank"}}},
			policies: []string{"permit-non-navigation"}},
		{name: "tabs unreadable", command: "snapshot", facts: &gate.Facts{State: on(home).State, PagesErr: errors.New("gone")},
			stage: evidence.StageScope, rule: "popup"},
		{name: "click on a link in scope", command: "click", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), link("https://docs.example.com/b")), policies: []string{"permit-non-navigation"}, target: "https://docs.example.com/b"},
		{name: "click on a link out of scope", command: "click", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), link("http://169.254.169.254/latest")), stage: evidence.StageScope},
		{name: "click on a javascript: link", command: "click", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), link("javascript:void(0)")), policies: []string{"permit-non-navigation"}},
		{name: "click on a ref that is gone", command: "click", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), &gate.Element{Named: true, Err: errNoSuchRef}), stage: evidence.StageArgs, rule: "element"},
		{name: "click whose destination cannot be read", command: "click", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "ref e1", DestErr: errors.New("detached")}), stage: evidence.StageScope, rule: "element"},
		{name: "click that submits is a submit_form", command: "click", args: map[string]any{"ref": "e2"},
			facts: withElement(on(home), submitButton("https://www.example.com/save")), submits: true, policies: []string{"permit-non-navigation"}},
		{name: "click that submits on an authenticated page", command: "click", args: map[string]any{"ref": "e2"},
			facts: withElement(authenticated(home), submitButton("https://www.example.com/save")), submits: true, approval: true},
		{name: "click that submits needs submit_form declared", m: f.noSubmit, command: "click", args: map[string]any{"ref": "e2"},
			facts: withElement(on(home), submitButton("https://www.example.com/save")), submits: true, stage: evidence.StageManifest, rule: "submit_form"},
		{name: "submit_form posts out of scope", command: "submit_form", args: map[string]any{"selector": "form"},
			facts: withElement(on(home), submitButton("https://evil.test/collect")), stage: evidence.StageScope},
		{name: "submit_form on something not in a form", command: "submit_form", args: map[string]any{"selector": "p"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "selector \"p\""}), stage: evidence.StageArgs, rule: "element"},
		{name: "submit_form on an authenticated page is held", command: "submit_form", args: map[string]any{"selector": "form"},
			facts: withElement(authenticated(home), submitButton(home+"save")), approval: true},
		{name: "submit_form on an authenticated page, approved", command: "submit_form", args: map[string]any{"selector": "form"},
			facts: withElement(authenticated(home), submitButton(home+"save")), approved: true, policies: []string{"permit-non-navigation"}},
		{name: "submit rate limit", command: "submit_form", args: map[string]any{"selector": "form"},
			facts: withElement(on(home), submitButton(home+"save")), limits: &gate.Limits{Created: decideNow, LastCall: decideNow, Counts: map[string]int{"submit_form": 5}},
			stage: evidence.StageCedar, rule: "submit-rate-limit"},
		{name: "submit rate limit is not lifted by approval", command: "submit_form", args: map[string]any{"selector": "form"}, approved: true,
			facts: withElement(on(home), submitButton(home+"save")), limits: &gate.Limits{Created: decideNow, LastCall: decideNow, Counts: map[string]int{"submit_form": 5}},
			stage: evidence.StageCedar, rule: "submit-rate-limit"},
		{name: "execute_js is held", command: "execute_js", args: map[string]any{"expression": "1"}, facts: on(home), approval: true},
		{name: "execute_js approved", command: "execute_js", args: map[string]any{"expression": "1"}, facts: on(home), approved: true,
			policies: []string{"permit-non-navigation"}},
		{name: "critical tier is held", command: "screenshot", facts: on(home), approval: true},
		{name: "manifest human_approval is held", command: "scroll", facts: on(home), approval: true},
		{name: "manifest human_approval, approved", command: "scroll", facts: on(home), approved: true, policies: []string{"permit-non-navigation"}},
		{name: "go_back in scope", command: "go_back", facts: &gate.Facts{State: on(home).State, History: &gate.History{To: "https://docs.example.com/"}},
			policies: []string{"permit-non-navigation"}, target: "https://docs.example.com/"},
		{name: "go_back out of scope", command: "go_back", facts: &gate.Facts{State: on(home).State, History: &gate.History{To: "https://other.test/"}},
			stage: evidence.StageScope},
		{name: "go_back history unreadable", command: "go_back", facts: &gate.Facts{State: on(home).State, History: &gate.History{Err: errors.New("closed")}},
			stage: evidence.StageObserve, rule: "history"},
		{name: "type into a password field is masked", command: "type_text", args: map[string]any{"ref": "e3", "text": "hunter2"},
			facts: withElement(on(home), textField(home, true)), masked: true, policies: []string{"permit-non-navigation"}},
		{name: "type into a field that cannot be read is masked", command: "type_text", args: map[string]any{"ref": "e3", "text": "hunter2"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "ref e3", FieldErr: errors.New("gone")}), masked: true, policies: []string{"permit-non-navigation"}},
		{name: "secret on its domain", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), textField("https://login.example.com/", true)), policies: []string{"permit-non-navigation"}},
		{name: "secret into a text field (password fields only by default)", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), textField("https://login.example.com/", false)), stage: evidence.StageSecrets},
		{name: "secret allowed into text fields", command: "type_text", args: map[string]any{"ref": "e3", "text": "<TOKEN>"},
			facts: withElement(on("https://login.example.com/"), textField("https://login.example.com/", false)), policies: []string{"permit-non-navigation"}},
		{name: "secret into a field too short for it", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), &gate.Element{Named: true, Label: "ref e3",
				Field: gate.Field{URL: "https://login.example.com/", Field: true, Tag: "input", Password: true, MaxLength: 8}}), stage: evidence.StageSecrets},
		{name: "attribute-value selector while a secret is in the page", command: "click", args: map[string]any{"selector": `#r[value^="ab"]`},
			facts: func() *gate.Facts {
				fs := withElement(on("https://login.example.com/"), link(""))
				fs.Typed = f.m.Secrets
				return fs
			}(), stage: evidence.StageSecrets, rule: "secret oracle"},
		{name: "drag by an attribute-value selector while a secret is in the page", command: "drag", args: map[string]any{"from": "e2", "to": `input[value^="ab"]`},
			facts: func() *gate.Facts {
				fs := withElement(on("https://login.example.com/"), link(""))
				fs.Typed = f.m.Secrets
				return fs
			}(), stage: evidence.StageSecrets, rule: "secret oracle"},
		{name: "fill_form by an attribute-value selector while a secret is in the page", command: "fill_form",
			args: map[string]any{"fields": []any{map[string]any{"ref": "e2", "text": "a"}, map[string]any{"selector": `#r[value^="ab"]`, "text": "b"}}},
			facts: func() *gate.Facts {
				fs := on("https://login.example.com/")
				fs.Typed = f.m.Secrets
				return fs
			}(), stage: evidence.StageSecrets, rule: "secret oracle"},
		{name: "fill_form with a secret into a text field is refused whole", command: "fill_form",
			args: map[string]any{"fields": []any{map[string]any{"ref": "e2", "text": "ada"}, map[string]any{"ref": "e3", "text": "<PW>"}}},
			facts: func() *gate.Facts {
				fs := on("https://login.example.com/")
				fs.Fields = []*gate.Element{textField("https://login.example.com/", false), textField("https://login.example.com/", false)}
				return fs
			}(), stage: evidence.StageSecrets},
		{name: "fill_form with a secret into a password field on its domain", command: "fill_form",
			args: map[string]any{"fields": []any{map[string]any{"ref": "e2", "text": "ada"}, map[string]any{"ref": "e3", "text": "<PW>"}}},
			facts: func() *gate.Facts {
				fs := on("https://login.example.com/")
				fs.Fields = []*gate.Element{textField("https://login.example.com/", false), textField("https://login.example.com/", true)}
				return fs
			}(), policies: []string{"permit-non-navigation"}},
		{name: "new_tab while the tab is on a page a secret was typed on", command: "new_tab", args: map[string]any{"url": "https://www.example.com/"},
			facts: func() *gate.Facts {
				fs := on("https://login.example.com/")
				fs.Held = f.m.Secrets
				return fs
			}(), stage: evidence.StageSecrets, rule: "secret tab"},
		{name: "attribute-value selector on a page without secrets", command: "click", args: map[string]any{"selector": `a[href$=".pdf"]`},
			facts: withElement(on(home), link("https://www.example.com/a.pdf")), policies: []string{"permit-non-navigation"}},
		{name: "secret off its domain", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on(home), textField(home, false)), stage: evidence.StageSecrets},
		{name: "secret into an iframe's document", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), textField("https://www.example.com/frame", false)), stage: evidence.StageSecrets},
		{name: "secret into something not a text field", command: "type_text", args: map[string]any{"ref": "e3", "text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), &gate.Element{Named: true, Label: "ref e3", Field: gate.Field{URL: "https://login.example.com/", Tag: "iframe"}}),
			stage: evidence.StageSecrets},
		{name: "secret into the focused element", command: "type_text", args: map[string]any{"text": "<PW>"},
			facts: withElement(on("https://login.example.com/"), &gate.Element{Label: "the focused element", Field: gate.Field{URL: "https://login.example.com/", Field: true}}),
			stage: evidence.StageSecrets},
		{name: "form sends a typed secret elsewhere", command: "submit_form", args: map[string]any{"selector": "form"},
			facts: func() *gate.Facts {
				fs := withElement(on("https://login.example.com/"), submitButton("https://www.example.com/steal"))
				fs.Typed = f.m.Secrets
				return fs
			}(), stage: evidence.StageSecrets},
		{name: "Enter that submits is a submit_form", command: "press_key", args: map[string]any{"key": "Enter", "ref": "e2"},
			facts: withElement(on(home), submitButton("https://www.example.com/search")), submits: true, policies: []string{"permit-non-navigation"}},
		{name: "Enter that submits needs submit_form declared", m: f.noSubmit, command: "press_key", args: map[string]any{"key": "Enter"},
			facts: withElement(on(home), submitButton("https://www.example.com/search")), submits: true, stage: evidence.StageManifest, rule: "submit_form"},
		{name: "Enter that submits out of scope", command: "press_key", args: map[string]any{"key": "Enter"},
			facts: withElement(on(home), submitButton("https://evil.test/collect")), submits: true, stage: evidence.StageScope},
		{name: "Enter on a link out of scope", command: "press_key", args: map[string]any{"key": "Enter", "ref": "e1"},
			facts: withElement(on(home), link("http://169.254.169.254/latest")), stage: evidence.StageScope},
		{name: "a key into an embedded document", command: "press_key", args: map[string]any{"key": "Enter"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "the focused element", Dest: gate.Destination{Embeds: true}}), stage: evidence.StageArgs, rule: "element"},
		{name: "an unknown key", command: "press_key", args: map[string]any{"key": "Hyper"},
			facts: withElement(on(home), &gate.Element{Err: errors.New(`key "Hyper": unknown key`)}), stage: evidence.StageArgs, rule: "element"},
		{name: "Enter that submits a typed secret elsewhere", command: "press_key", args: map[string]any{"key": "Enter"},
			facts: func() *gate.Facts {
				fs := withElement(on("https://login.example.com/"), submitButton("https://www.example.com/steal"))
				fs.Typed = f.m.Secrets
				return fs
			}(), submits: true, stage: evidence.StageSecrets},
		{name: "hover over a link out of scope is only a hover", command: "hover", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "ref e1"}), policies: []string{"permit-non-navigation"}},
		{name: "hover over a ref that is gone", command: "hover", args: map[string]any{"ref": "e1"},
			facts: withElement(on(home), &gate.Element{Named: true, Err: errNoSuchRef}), stage: evidence.StageArgs, rule: "element"},
		{name: "select an option", command: "select_option", args: map[string]any{"ref": "e4", "value": "b"},
			facts: withElement(on(home), &gate.Element{Named: true, Label: "ref e4"}), policies: []string{"permit-non-navigation"}},
		{name: "select an option that does not exist", command: "select_option", args: map[string]any{"ref": "e4", "value": "z"},
			facts: withElement(on(home), &gate.Element{Named: true, Err: errors.New(`no option has the value "z"`)}), stage: evidence.StageArgs, rule: "element"},
		{name: "a listbox option that is a link out of scope", command: "select_option", args: map[string]any{"ref": "e4", "label": "Evil"},
			facts: withElement(on(home), link("https://evil.test/")), stage: evidence.StageScope},
		{name: "go_forward out of scope", command: "go_forward", facts: &gate.Facts{State: on(home).State, History: &gate.History{To: "https://other.test/"}},
			stage: evidence.StageScope},
		{name: "go_forward in scope", command: "go_forward", facts: &gate.Facts{State: on(home).State, History: &gate.History{To: "https://docs.example.com/"}},
			policies: []string{"permit-non-navigation"}, target: "https://docs.example.com/"},
		{name: "reload a page that left the scope", command: "reload", facts: on("https://other.test/x"),
			stage: evidence.StageScope, reset: true},
		{name: "reload", command: "reload", facts: on(home), policies: []string{"permit-non-navigation"}, target: home},
		{name: "a dialog is waiting", command: "snapshot", facts: func() *gate.Facts { fs := on(home); fs.Dialog = &gate.Dialog{Type: "confirm"}; return fs }(),
			stage: evidence.StageObserve, rule: "dialog waiting"},
		{name: "handle_dialog answers it", command: "handle_dialog", args: map[string]any{"accept": true},
			facts: func() *gate.Facts { fs := on(home); fs.Dialog = &gate.Dialog{Type: "confirm"}; return fs }(), policies: []string{"permit-non-navigation"}},
		{name: "handle_dialog with no dialog", command: "handle_dialog", args: map[string]any{"accept": true}, facts: on(home),
			stage: evidence.StageArgs, rule: "no dialog"},
		{name: "text for a confirm", command: "handle_dialog", args: map[string]any{"accept": true, "text": "yes"},
			facts: func() *gate.Facts { fs := on(home); fs.Dialog = &gate.Dialog{Type: "confirm"}; return fs }(), stage: evidence.StageArgs, rule: "argument text"},
		{name: "text for a prompt dismissed", command: "handle_dialog", args: map[string]any{"accept": false, "text": "yes"},
			facts: func() *gate.Facts { fs := on(home); fs.Dialog = &gate.Dialog{Type: "prompt"}; return fs }(), stage: evidence.StageArgs, rule: "argument text"},
		{name: "text for a prompt", command: "handle_dialog", args: map[string]any{"accept": true, "text": "yes"},
			facts: func() *gate.Facts { fs := on(home); fs.Dialog = &gate.Dialog{Type: "prompt"}; return fs }(), policies: []string{"permit-non-navigation"}},
		{name: "session lifetime over", command: "snapshot", facts: on(home),
			limits: &gate.Limits{Created: decideNow.Add(-601 * time.Second), LastCall: decideNow, Counts: map[string]int{}}, stage: evidence.StageLimits, rule: "session_timeout_seconds"},
		{name: "idle too long", command: "snapshot", facts: on(home),
			limits: &gate.Limits{Created: decideNow, LastCall: decideNow.Add(-61 * time.Second), Counts: map[string]int{}}, stage: evidence.StageLimits, rule: "idle_timeout_seconds"},
		{name: "budget used", command: "snapshot", facts: on(home),
			limits: &gate.Limits{Created: decideNow, LastCall: decideNow, Interactions: 5, Counts: map[string]int{}}, stage: evidence.StageLimits, rule: "max_interactions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if m == nil {
				m = f.m
			}
			q := f.ask(t, m, tc.command, tc.args, tc.facts, tc.limits)
			q.Approved = tc.approved
			v := gate.Decide(q)
			switch {
			case tc.stage == "" && v.Deny != nil:
				t.Fatalf("refused at %s (%s): %s", v.Deny.Stage, v.Deny.Rule, v.Deny.Reason)
			case tc.stage != "" && v.Deny == nil:
				t.Fatalf("allowed (approval %v), want a refusal at %s", v.Approval, tc.stage)
			case tc.stage != "" && (v.Deny.Stage != tc.stage || !strings.Contains(v.Deny.Rule, tc.rule)):
				t.Fatalf("refused at %s rule %q (%s), want %s rule ~%q", v.Deny.Stage, v.Deny.Rule, v.Deny.Reason, tc.stage, tc.rule)
			}
			if got := len(v.Approval) > 0; got != tc.approval {
				t.Errorf("held for approval: %v (%v), want %v", got, v.Approval, tc.approval)
			}
			if tc.policies != nil && !slices.Equal(v.PolicyIDs, tc.policies) {
				t.Errorf("policies %v, want %v", v.PolicyIDs, tc.policies)
			}
			if v.Reset != tc.reset || len(v.Close) != tc.close {
				t.Errorf("enforce: reset %v close %v, want reset %v close %d", v.Reset, v.Close, tc.reset, tc.close)
			}
			if v.Submits != tc.submits || v.Masked != tc.masked {
				t.Errorf("submits %v masked %v, want %v %v", v.Submits, v.Masked, tc.submits, tc.masked)
			}
			if tc.target != "" && v.Target != tc.target {
				t.Errorf("target %q, want %q", v.Target, tc.target)
			}
			if tc.stage == "" && !tc.approval {
				for _, r := range v.Requests {
					if err := f.engine.ValidateRequest(r); err != nil {
						t.Errorf("request does not fit the schema: %v", err)
					}
				}
			}
		})
	}
}

// TestDecideUndeclaredTool: a call to a tool no manifest declares is
// refused at stage manifest, before anything else is looked at.
func TestDecideUndeclaredTool(t *testing.T) {
	f := newDecideFixture(t)
	l := gate.NewLimits(decideNow)
	q := &gate.Question{Call: &toolclad.Call{Manifest: f.m, Tool: "d.upload_file"}, Limits: &l, Now: decideNow}
	v := gate.Decide(q)
	if v.Deny == nil || v.Deny.Stage != evidence.StageManifest || !strings.Contains(v.Deny.Reason, "d.upload_file") {
		t.Fatalf("undeclared tool: %+v", v.Deny)
	}
}

// TestDecideBudgetIsNotAnExpiry: a session over max_interactions is
// refused, and the budget does not count as an expiry (which would let
// the next call start a new session with fresh counters).
func TestDecideBudgetIsNotAnExpiry(t *testing.T) {
	f := newDecideFixture(t)
	l := gate.Limits{Created: decideNow, LastCall: decideNow, Interactions: 5, Counts: map[string]int{}}
	v := gate.Decide(f.ask(t, f.m, "snapshot", nil, on("about:blank"), &l))
	if v.Deny == nil || v.Deny.Rule != "max_interactions" {
		t.Fatalf("over budget: %+v", v.Deny)
	}
	if why := l.Expiry(&f.m.Browser, decideNow); why != "" {
		t.Fatalf("a used-up budget counts as an expiry: %q", why)
	}
}

// TestAfter: where an action left the tabs.
func TestAfter(t *testing.T) {
	f := newDecideFixture(t)
	sc := f.m.Scope()
	tests := []struct {
		name     string
		after    gate.PageState
		pages    []gate.Page
		err      error
		unjudged *gate.Unjudged
		stage    evidence.Stage // default final_url
		rule     string         // "" = allowed
		reset    bool
		close    int
	}{
		{name: "in scope", after: gate.PageState{URL: "https://www.example.com/"}},
		{name: "blank", after: gate.PageState{URL: "about:blank"}},
		{name: "unreadable", after: gate.PageState{}, rule: "page state", reset: true},
		{name: "left the scope", after: gate.PageState{URL: "http://10.0.0.1/"}, rule: "private", reset: true},
		{name: "tabs unreadable", after: gate.PageState{URL: "https://www.example.com/"}, err: errors.New("x"), rule: "tabs", reset: true},
		{name: "popup out of scope", after: gate.PageState{URL: "https://www.example.com/"}, pages: []gate.Page{{ID: "p", URL: "https://x.test/"}}, rule: "popup", close: 1},
		{name: "a form submission not judged", after: gate.PageState{URL: "https://www.example.com/"},
			unjudged: &gate.Unjudged{Rule: ruleUnjudgedSubmission, Reason: "the page submitted a form"}, rule: ruleUnjudgedSubmission, reset: true, stage: evidence.StageDestination},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := gate.After(sc.Check, &gate.Outcome{Command: "click", State: tc.after, Pages: tc.pages, PagesErr: tc.err, Unjudged: tc.unjudged})
			if (v.Deny == nil) != (tc.rule == "") {
				t.Fatalf("deny %+v, want rule %q", v.Deny, tc.rule)
			}
			want := tc.stage
			if want == "" {
				want = evidence.StageFinalURL
			}
			if v.Deny != nil && (v.Deny.Stage != want || !strings.Contains(v.Deny.Rule, tc.rule)) {
				t.Fatalf("deny %+v, want %s rule ~%q", v.Deny, want, tc.rule)
			}
			if v.Reset != tc.reset || len(v.Close) != tc.close {
				t.Errorf("enforce: reset %v close %d, want %v %d", v.Reset, len(v.Close), tc.reset, tc.close)
			}
		})
	}
}

// TestDecideHidesWhereTheUserWent: where a user's adopted tab went by the
// user's hand, outside the scope, is not told to the agent (the session's
// own tab's is); a user's popup tab out of scope is let go unnamed.
func TestDecideHidesWhereTheUserWent(t *testing.T) {
	f := newDecideFixture(t)
	private := "https://mail.other.test/inbox/7f3a"
	user := on(private)
	user.UserTab = true
	v := gate.Decide(f.ask(t, f.m, "snapshot", nil, user, nil))
	if v.Deny == nil || !v.Reset || strings.Contains(v.Deny.Reason, "mail.other.test") || !strings.Contains(v.Deny.Reason, "the user's tab was on a page outside the scope") {
		t.Errorf("user's tab: %+v", v.Deny)
	}
	v = gate.Decide(f.ask(t, f.m, "snapshot", nil, on(private), nil))
	if v.Deny == nil || !strings.Contains(v.Deny.Reason, private) {
		t.Errorf("the session's own tab: %+v", v.Deny)
	}
	pages := &gate.Facts{State: on("https://www.example.com/").State, Pages: []gate.Page{{ID: "u1", URL: private, User: true}}}
	v = gate.Decide(f.ask(t, f.m, "snapshot", nil, pages, nil))
	if v.Deny == nil || len(v.Release) != 1 || strings.Contains(v.Deny.Reason, "mail.other.test") {
		t.Errorf("user's other tab: %+v release %v", v.Deny, v.Release)
	}
}

// TestAPopupsRefusedNavigationIsNotQuoted: a popup whose own navigation
// was refused is closed and named as a popup, not by where it was going
// nor where it is: the opener chose that URL (a guess of a secret in it),
// and the call's list of refused requests names it, masked for the
// document that made it, where this reason would be masked for the pages
// the call was on; the URL it shows may be the tab's own string.
func TestAPopupsRefusedNavigationIsNotQuoted(t *testing.T) {
	f := newDecideFixture(t)
	pages := &gate.Facts{State: on("https://www.example.com/").State, Pages: []gate.Page{{ID: "p1", URL: "https://www.example.com/show?g=guess", RefusedNav: "http://outside.test/?g=guess"}}}
	v := gate.Decide(f.ask(t, f.m, "snapshot", nil, pages, nil))
	if v.Deny == nil || len(v.Close) != 1 || strings.Contains(v.Deny.Reason, "g=guess") || !strings.Contains(v.Deny.Reason, "its own navigation was refused") {
		t.Errorf("popup whose navigation was refused: %+v close %v", v.Deny, v.Close)
	}
}
