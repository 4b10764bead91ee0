package executor

import (
	"slices"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

const requestManifest = `
[tool]
name = "req"
[browser.scope]
allowed_domains = ["*.example.com"]
blocked_domains = ["admin.example.com"]
[browser.scope.domain_sets]
payments = ["pay.example.com"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.screenshot]
[browser.commands.go_back]
[browser.commands.wait_for]
[browser.commands.extract_html]
[browser.commands.list_tabs]
[browser.commands.execute_js]
[browser.commands.scroll]
[browser.commands.network_timing]
`

// sampleArgs gives every argument a command takes, so that the request
// carries each args attribute the schema declares.
var sampleArgs = map[string]map[string]any{
	"navigate":     {"url": "https://pay.example.com/checkout"},
	"snapshot":     {"selector": "main"},
	"click":        {"ref": "e3"},
	"type_text":    {"selector": "#q", "text": "hello"},
	"submit_form":  {"ref": "e9"},
	"screenshot":   {"full_page": true},
	"wait_for":     {"text": "done", "timeout_ms": 900},
	"extract_html": {"selector": "main"},
	"execute_js":   {"expression": "1+1"},
	"scroll":       {"direction": "up", "amount": 2},
}

// TestCedarRequestsMatchTheSchema builds the Cedar request the gate sends
// for every built-in command and checks it against the shipped schema, so
// the schema policies are validated against is the one requests obey.
// A manifest's named domain set reaches Cedar as a parent of url_domain.
func TestCedarRequestsMatchTheSchema(t *testing.T) {
	m := testkit.Manifest(t, requestManifest)
	// The built-in schema (the directory has none) and a policy that
	// holds payments hosts for approval.
	policies := t.TempDir()
	testkit.WriteFile(t, policies, "p.cedar", `@id("all") permit (principal, action, resource);
@id("payments-need-approval") forbid (principal, action == Web::Action::"browse", resource)
when { resource.url_domain in Web::DomainSet::"payments" } unless { resource.human_approved == true };
`)
	engine, err := LoadPolicies(policies, []*toolclad.Manifest{m})
	if err != nil {
		t.Fatal(err)
	}
	store := testkit.Store(t)
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.session(&toolclad.Call{SessionID: "t", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	s.limits.Counts["submit_form"] = 2
	s.limits.Interactions = 2
	before := PageState{URL: "https://www.example.com/", Title: "Home", Domain: "www.example.com", HasForms: true, IsAuthenticated: true, PageLoaded: true, TabCount: 1}
	for _, c := range m.Commands {
		args, err := c.Validate(sampleArgs[c.Name])
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		turn := &turn{call: &toolclad.Call{Manifest: m, Command: c, Args: args}, start: time.Now()}
		req := e.question(s, turn, &facts{State: before}, false).CedarRequest(c, "https://pay.example.com/checkout")
		if err := engine.ValidateRequest(req); err != nil {
			t.Errorf("%s: the request does not match the schema: %v", c.Name, err)
		}
		if !slices.Equal(req.DomainSets, []string{"allowed", "payments"}) {
			t.Errorf("%s: url_domain parents %v, want [allowed payments]", c.Name, req.DomainSets)
		}
		if d := engine.Decide(req); d.Allowed || !d.NeedsApproval {
			t.Errorf("%s on a payments host: %+v, want held for approval by payments-need-approval", c.Name, d)
		}
		if req.Counters["session_submit_count"] != 2 || req.Counters["session_submit_form_count"] != 2 || len(req.Counters) != len(toolclad.BuiltinCommands())+1 {
			t.Errorf("%s: counters %v", c.Name, req.Counters)
		}
	}
}
