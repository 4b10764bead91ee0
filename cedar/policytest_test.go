package cedar_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// TestRunTestsShipped runs the shipped policy-tests.json: every case
// passes, and together they exercise every shipped policy.
func TestRunTestsShipped(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	results, err := e.RunTests(filepath.Join(shippedDir, cedar.PolicyTestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 10 {
		t.Errorf("only %d shipped cases", len(results))
	}
	allowedBy, deniedBy := map[string]bool{}, map[string]bool{}
	for _, r := range results {
		if !r.Passed || r.Problem != "" {
			t.Errorf("case %q (line %d) failed: %s", r.Name, r.Line, r.Problem)
		}
		for _, id := range r.Got.PolicyIDs {
			if r.Got.Allowed {
				allowedBy[id] = true
			} else {
				deniedBy[id] = true
			}
		}
	}
	for _, p := range e.Policies() {
		if p.Effect == "permit" && !allowedBy[p.ID] {
			t.Errorf("no shipped case is allowed by %q", p.ID)
		}
		if p.Effect == "forbid" && !deniedBy[p.ID] {
			t.Errorf("no shipped case is denied by %q", p.ID)
		}
	}
}

// writeTests writes a policy-tests.json and returns its path.
func writeTests(t *testing.T, body string) string {
	t.Helper()
	return filepath.Join(writeDir(t, map[string]string{cedar.PolicyTestsFile: body}), cedar.PolicyTestsFile)
}

// TestRunTestsReportsFailures checks each way a case can fail is reported
// as a failed result with a readable problem, and passing cases pass.
func TestRunTestsReportsFailures(t *testing.T) {
	t.Parallel()
	path := writeTests(t, `[
 {"name": "passes", "request": {"command": "click"}, "expect": "allow"},
 {"name": "wrong verdict", "request": {"command": "execute_js"}, "expect": "allow"},
 {"name": "wrong policies", "request": {"command": "click"}, "expect": "allow", "policies": ["navigate-allowed-domains"]},
 {"name": "wrong approval hint", "request": {"command": "execute_js"}, "expect": "deny", "needs_approval": false},
 {"name": "default deny expected", "request": {"command": "execute_js"}, "expect": "deny", "policies": []},
 {"name": "request off the schema", "request": {"command": "click", "args": {"selecter": "#q"}}, "expect": "allow"}
]`)
	results, err := loadShipped(t).RunTests(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name    string
		line    int
		passed  bool
		problem string
	}{
		{"passes", 2, true, ""},
		{"wrong verdict", 3, false, `want allow, got deny: forbidden by policy "execute-js-needs-approval" (../policies/execute_js.cedar:4)`},
		{"wrong policies", 4, false, `determining policies are ["permit-non-navigation"], want ["navigate-allowed-domains"]`},
		{"wrong approval hint", 5, false, "needs_approval is true, want false"},
		{"default deny expected", 6, false, `determining policies are ["execute-js-needs-approval"], want []`},
		{"request off the schema", 7, false, `entity Web::BrowserSession::"test": attribute "args": unexpected attribute "selecter"`},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(results), len(want), results)
	}
	for i, w := range want {
		r := results[i]
		if r.Name != w.name || r.Line != w.line || r.Passed != w.passed || !strings.Contains(r.Problem, w.problem) ||
			(w.problem == "") != (r.Problem == "") {
			t.Errorf("result %d = {%q line %d passed %v problem %q}, want {%q line %d passed %v problem containing %q}",
				i, r.Name, r.Line, r.Passed, r.Problem, w.name, w.line, w.passed, w.problem)
		}
	}
	if got := results[1].Got; got.Allowed || !got.NeedsApproval {
		t.Errorf("Got = %+v, want the denial with its approval hint", got)
	}
}

// TestRunTestsFileErrors checks an unusable file is an error naming the
// file, the position and the case.
func TestRunTestsFileErrors(t *testing.T) {
	t.Parallel()
	const ok = `{"name": "ok", "request": {"command": "click"}, "expect": "allow"}`
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"syntax error", "[\n " + ok + ",\n {\"name\": \"x\",, }\n]", []string{"line 3 col 15 (offset 85)", "case 2"}},
		{"truncated", "[\n " + ok, []string{"unexpected end of JSON"}},
		{"not an array", ok, []string{"want a JSON array of test cases"}},
		{"case not an object", "[\n " + ok + ",\n 3]", []string{"3:2: case 2: want an object, got number 3"}},
		{"unknown case key", "[\n " + ok + ",\n  {\"name\": \"typo\", \"request\": {}, \"expekt\": \"deny\"}]",
			[]string{`3:3: case 2 "typo": `, `key "expekt": unknown key`, `key "expect" is missing`}},
		{"bad expect", `[{"name": "n", "request": {}, "expect": "permit"}]`, []string{`1:2: case 1 "n": key "expect": want "allow" or "deny", got "permit"`}},
		{"wrong type in case", `[{"name": "n", "request": {}, "expect": "deny", "needs_approval": "yes"}]`,
			[]string{`key "needs_approval": want a boolean, got string "yes"`}},
		{"unknown request key", `[{"name": "n", "request": {"comand": "click"}, "expect": "deny"}]`,
			[]string{`case 1 "n": request: key "comand": unknown key`}},
		{"wrong request type", `[{"name": "n", "request": {"human_approved": "true"}, "expect": "deny"}]`,
			[]string{`request: key "human_approved": want a boolean, got string "true"`}},
		{"empty name", `[{"name": " ", "request": {}, "expect": "deny"}]`, []string{`key "name": empty name`}},
		{"duplicate name", "[" + ok + ",\n" + ok + "]", []string{`2:1: case 2 "ok": duplicate name (case 1 has it too)`}},
		{"data after the array", "[" + ok + "] []", []string{"data after the array"}},
	}
	e := loadShipped(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeTests(t, tc.body)
			res, err := e.RunTests(path)
			if err == nil {
				t.Fatalf("RunTests succeeded with %+v, want an error", res)
			}
			if !errors.Is(err, cedar.ErrPolicyTests) {
				t.Errorf("error %v is not ErrPolicyTests", err)
			}
			for _, w := range append([]string{path + ": "}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRunTestsMissingFile(t *testing.T) {
	t.Parallel()
	_, err := loadShipped(t).RunTests(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, cedar.ErrPolicyTests) {
		t.Errorf("error %v, want ErrPolicyTests and os.ErrNotExist", err)
	}
	var e *cedar.Engine
	if _, err := e.RunTests(filepath.Join(shippedDir, cedar.PolicyTestsFile)); !errors.Is(err, cedar.ErrPolicyTests) {
		t.Errorf("nil engine: error %v, want ErrPolicyTests", err)
	}
}

// TestParseRequestJSONDefaults checks a minimal request gets the
// documented defaults and conforms to the shipped schema.
func TestParseRequestJSONDefaults(t *testing.T) {
	t.Parallel()
	r, err := cedar.ParseRequestJSON([]byte(`{"command": "click"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Principal != "test" || r.Session != "test" || r.Tool != "test" || r.RiskTier != "low" ||
		r.Command != "click" || r.Action != "" || r.ResourceType != "" || r.HumanApproved || !r.Time.IsZero() {
		t.Errorf("Request = %+v", r)
	}
	wantState := map[string]any{"url": "", "title": "", "domain": "", "has_forms": false,
		"is_authenticated": false, "page_loaded": false, "tab_count": 0}
	if len(r.PageState) != len(wantState) {
		t.Errorf("PageState = %v, want %v", r.PageState, wantState)
	}
	for k, v := range wantState {
		if r.PageState[k] != v {
			t.Errorf("PageState[%q] = %#v, want %#v", k, r.PageState[k], v)
		}
	}
	if len(r.Counters) != len(commands)+1 {
		t.Errorf("Counters = %v, want session_submit_count and one per command", r.Counters)
	}
	for k, v := range zeroCounters() {
		if n, ok := r.Counters[k]; !ok || n != v {
			t.Errorf("Counters[%q] = %d, %v, want 0", k, n, ok)
		}
	}
	if err := loadShipped(t).ValidateRequest(r); err != nil {
		t.Errorf("default request does not conform: %v", err)
	}
}

// TestParseRequestJSONFields checks every key reaches its field.
func TestParseRequestJSONFields(t *testing.T) {
	t.Parallel()
	r, err := cedar.ParseRequestJSON([]byte(`{
		"principal": "agent-1", "action": "browse", "resource_type": "Web::BrowserSession", "session": "s1",
		"tool": "chrome_live", "command": "navigate", "args": {"url": "https://a.example/", "timeout_ms": 5000, "gone": null},
		"url": "https://a.example/", "url_domain": "a.example", "domain_sets": ["allowed", "intranet"],
		"page_state": {"title": "A", "is_authenticated": true, "tab_count": 2}, "risk_tier": "high",
		"human_approved": true, "interaction_count": 7, "counters": {"session_submit_count": 3},
		"time": "2025-01-02T03:04:05Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Principal != "agent-1" || r.Action != "browse" || r.ResourceType != "Web::BrowserSession" || r.Session != "s1" ||
		r.Tool != "chrome_live" || r.Command != "navigate" || r.URL != "https://a.example/" || r.URLDomain != "a.example" ||
		!slices.Equal(r.DomainSets, []string{"allowed", "intranet"}) || r.RiskTier != "high" || !r.HumanApproved ||
		r.InteractionCount != 7 || !r.Time.Equal(fixedTime) {
		t.Errorf("Request = %+v", r)
	}
	if r.PageState["title"] != "A" || r.PageState["is_authenticated"] != true || r.PageState["tab_count"] != 2 ||
		r.PageState["url"] != "" || r.PageState["has_forms"] != false {
		t.Errorf("PageState = %v", r.PageState)
	}
	if r.Counters["session_submit_count"] != 3 || r.Counters["session_click_count"] != 0 {
		t.Errorf("Counters = %v", r.Counters)
	}
	if r.Args["url"] != "https://a.example/" || r.Args["gone"] != nil {
		t.Errorf("Args = %v", r.Args)
	}
	e := loadShipped(t)
	if err := e.ValidateRequest(r); err != nil {
		t.Errorf("request does not conform: %v", err)
	}
	// timeout_ms arrives as a JSON number and must reach Cedar as a Long.
	p := loadFiles(t, map[string]string{"p.cedar": `@id("p") permit (principal, action, resource)
		when { resource.args has timeout_ms && resource.args.timeout_ms == 5000 && context.time == 1735787045000 };`})
	if d := p.Decide(r); !d.Allowed {
		t.Errorf("Decision = %+v, want allowed", d)
	}
}

func TestParseRequestJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want []string
	}{
		{"not JSON", `{"command": }`, []string{"line 1 col 13"}},
		{"not an object", `["click"]`, []string{"want an object, got array"}},
		{"null", `null`, []string{"want an object, got null"}},
		{"trailing data", `{} {}`, []string{"data after the object"}},
		{"unknown key", `{"comand": "click"}`, []string{`key "comand": unknown key`}},
		{"every bad key", `{"principal": 1, "human_approved": "yes", "interaction_count": 1.5, "domain_sets": "allowed"}`,
			[]string{`key "principal": want a string, got number 1`, `key "human_approved": want a boolean, got string "yes"`,
				`key "interaction_count": want an integer, got number 1.5`, `key "domain_sets": want an array of strings, got string "allowed"`}},
		{"domain set not a string", `{"domain_sets": ["allowed", 2]}`, []string{`key "domain_sets": item 1: want a string, got number 2`}},
		{"quoted integer", `{"interaction_count": "3"}`, []string{`key "interaction_count": want an integer, got string "3"`}},
		{"null string", `{"command": null}`, []string{`key "command": want a string, got null`}},
		{"unknown page state field", `{"page_state": {"logged_in": true}}`, []string{`key "page_state": "logged_in": unknown page_state field`}},
		{"page state field of the wrong type", `{"page_state": {"tab_count": "2"}}`, []string{`key "page_state": "tab_count": want an integer`}},
		{"counter not an integer", `{"counters": {"session_submit_count": true}}`, []string{`key "counters": "session_submit_count": want an integer, got boolean true`}},
		{"args not an object", `{"args": ["x"]}`, []string{`key "args": want an object, got array`}},
		{"bad time", `{"time": "yesterday"}`, []string{`key "time": want an RFC 3339 time`, `"yesterday"`}},
		{"time not a string", `{"time": 1735787045000}`, []string{`key "time": want a string, got number 1735787045000`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := cedar.ParseRequestJSON([]byte(tc.json))
			if err == nil {
				t.Fatalf("ParseRequestJSON = %+v, want an error", r)
			}
			if r != nil {
				t.Error("a request returned with an error")
			}
			if !errors.Is(err, cedar.ErrRequestJSON) {
				t.Errorf("error %v is not ErrRequestJSON", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// FuzzParseRequestJSON: any input gives a request or an error, never a
// panic, and a request decides with a reason and never allows with errors.
func FuzzParseRequestJSON(f *testing.F) {
	f.Add(`{"command": "click"}`)
	f.Add(`{"command": "navigate", "args": {"url": "https://a/", "n": 1e400, "x": [1, {"y": null}]}, "domain_sets": ["allowed"]}`)
	f.Add(`{"page_state": {"tab_count": 9223372036854775808}, "counters": {"a": -1}, "time": "2025-01-02T03:04:05.5+02:00"}`)
	f.Add(`{"human_approved": null, "interaction_count": 1e3}`)
	e := loadShipped(f)
	f.Fuzz(func(t *testing.T, src string) {
		r, err := cedar.ParseRequestJSON([]byte(src))
		if err != nil {
			if r != nil {
				t.Fatal("request returned with an error")
			}
			return
		}
		d := e.Decide(r)
		if len(d.Reasons) == 0 || (d.Allowed && len(d.Errors) > 0) {
			t.Fatalf("Decision = %+v", d)
		}
		_ = e.ValidateRequest(r)
	})
}
