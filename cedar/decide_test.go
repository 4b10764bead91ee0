package cedar_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"
)

func TestDecideReasons(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)

	t.Run("forbid reason names id and location", func(t *testing.T) {
		t.Parallel()
		d := e.Decide(baseRequest("execute_js"))
		want := `forbidden by policy "execute-js-needs-approval" (../policies/execute_js.cedar:4)`
		if !slices.Equal(d.Reasons, []string{want}) {
			t.Errorf("Reasons = %q, want %q", d.Reasons, want)
		}
	})
	t.Run("permit reason names id", func(t *testing.T) {
		t.Parallel()
		d := e.Decide(baseRequest("click"))
		if len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], `permitted by policy "permit-non-navigation" (../policies/baseline.cedar:`) {
			t.Errorf("Reasons = %q", d.Reasons)
		}
	})
	t.Run("default deny names the command", func(t *testing.T) {
		t.Parallel()
		r := baseRequest("navigate")
		r.DomainSets = []string{"blocked"}
		d := e.Decide(r)
		want := []string{`no policy permits command "navigate" (default deny)`}
		if d.Allowed || !slices.Equal(d.Reasons, want) || len(d.PolicyIDs) != 0 {
			t.Errorf("Decision = %+v, want default deny %q", d, want)
		}
	})
}

// TestDecideFailsClosed proves an evaluation error denies even when another
// policy permits, though cedar-go alone would allow.
func TestDecideFailsClosed(t *testing.T) {
	t.Parallel()
	e := loadFiles(t, map[string]string{
		// The schema cannot rule out an overflow: the policy validates and
		// still fails at evaluation.
		"a.cedar": `@id("allow-all") permit (principal, action, resource);` + "\n" +
			`@id("broken") forbid (principal, action, resource) when { resource.interaction_count + 9223372036854775807 > 0 };`,
	})
	tests := []struct {
		name string
		edit func(*cedar.Request)
	}{
		{"missing attribute", nil},
		{"missing attribute with approval", func(r *cedar.Request) { r.HumanApproved = true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest("click")
			if tc.edit != nil {
				tc.edit(r)
			}
			d := e.Decide(r)
			if d.Allowed {
				t.Fatalf("allowed despite an evaluation error: %+v", d)
			}
			if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], `"broken"`) {
				t.Errorf("Errors = %q, want one naming \"broken\"", d.Errors)
			}
			if !slices.Equal(d.PolicyIDs, []string{"broken"}) {
				t.Errorf("PolicyIDs = %q, want [broken]", d.PolicyIDs)
			}
			if len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], `policy "broken" failed: `) ||
				!strings.HasSuffix(d.Reasons[0], "; denied (fail closed)") {
				t.Errorf("Reasons = %q", d.Reasons)
			}
		})
	}
}

func TestDecideMissingPageStateFailsClosed(t *testing.T) {
	t.Parallel()
	r := baseRequest("submit_form")
	delete(r.PageState, "is_authenticated")
	d := loadShipped(t).Decide(r)
	if d.Allowed || len(d.Errors) == 0 {
		t.Errorf("Decision = %+v, want a fail-closed denial", d)
	}
}

func TestDecideInvalidRequest(t *testing.T) {
	t.Parallel()
	e := loadShipped(t)
	deep := map[string]any{}
	cur := deep
	for range 40 {
		next := map[string]any{}
		cur["n"] = next
		cur = next
	}
	loop := map[string]any{}
	loop["self"] = loop
	tests := []struct {
		name string
		e    *cedar.Engine
		r    *cedar.Request
	}{
		{"nil request", e, nil},
		{"nil engine", nil, baseRequest("click")},
		{"zero engine", &cedar.Engine{}, baseRequest("click")},
		{"counter shadows approval", e, func() *cedar.Request {
			r := baseRequest("execute_js")
			r.Counters["human_approved"] = 1
			return r
		}()},
		{"args nested too deep", e, func() *cedar.Request {
			r := baseRequest("click")
			r.Args = deep
			return r
		}()},
		{"args referencing itself", e, func() *cedar.Request {
			r := baseRequest("click")
			r.Args = loop
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.e.Decide(tc.r)
			if d.Allowed || len(d.Errors) == 0 || len(d.Reasons) == 0 ||
				!strings.HasSuffix(d.Reasons[0], "denied (fail closed)") {
				t.Errorf("Decision = %+v, want a fail-closed denial", d)
			}
		})
	}
}

// attrsSchema declares the attributes TestDecideAttributes reads: the
// shipped ones, plus args of every Go type the mapping handles, a custom
// counter and a second resource type. Its args and page_state fields are
// optional, so that one request shape serves every case.
const attrsSchema = `namespace Web {
  entity Agent;
  entity DomainSet;
  entity Domain in [DomainSet];
  entity BrowserSession, OtherSession = {
    tool: String, command: String, url: String, url_domain: Domain, risk_tier: String,
    human_approved: Bool, interaction_count: Long, time_ms: Long,
    session_submit_count: Long, custom?: Long,
    page_state: { url?: String, title?: String, domain?: String, has_forms?: Bool,
                  is_authenticated?: Bool, page_loaded?: Bool, tab_count?: Long },
    args: { s?: String, i?: Long, i64?: Long, u?: Long, b?: Bool, f?: Long, n?: Long,
            frac?: String, big?: String, d?: String, m?: String, opt?: { depth: Long },
            tags?: Set<String>, mixed?: Set<Long>, gone?: String, here?: String },
  };
  action browse appliesTo { principal: Agent, resource: [BrowserSession, OtherSession], context: { time: Long } };
}`

// TestDecideAttributes checks how request fields reach the policies: each
// case is a permit that must match, alone in its engine.
func TestDecideAttributes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		when string
		edit func(*cedar.Request)
	}{
		{"principal is a Web::Agent", `principal == Web::Agent::"agent-1"`, nil},
		{"action", `action == Web::Action::"browse"`, nil},
		{"default action", `action == Web::Action::"browse"`, func(r *cedar.Request) { r.Action = "" }},
		{"resource type and id", `resource == Web::BrowserSession::"s1"`, nil},
		{"default resource type", `resource is Web::BrowserSession`, func(r *cedar.Request) { r.ResourceType = "" }},
		{"custom resource type", `resource is Web::OtherSession`, func(r *cedar.Request) { r.ResourceType = "Web::OtherSession" }},
		{"tool url risk tier", `resource.tool == "chrome_live" && resource.url like "https://docs.*" && resource.risk_tier == "medium"`, nil},
		{"url_domain entity", `resource.url_domain == Web::Domain::"docs.example.com"`, nil},
		{"empty url_domain", `resource.url_domain == Web::Domain::"" && !(resource.url_domain in Web::DomainSet::"allowed")`,
			func(r *cedar.Request) { r.URLDomain, r.DomainSets = "", nil }},
		{"domain in two sets", `resource.url_domain in Web::DomainSet::"blocked" && resource.url_domain in Web::DomainSet::"intranet"`,
			func(r *cedar.Request) { r.DomainSets = []string{"blocked", "intranet"} }},
		{"page state", `resource.page_state has title && resource.page_state.title == "Docs" &&
			resource.page_state has tab_count && resource.page_state.tab_count == 1 &&
			resource.page_state has page_loaded && resource.page_state.page_loaded`, nil},
		{"interaction count and counters", `resource.interaction_count == 3 && resource.session_submit_count == 0 &&
			resource has custom && resource.custom == 7`,
			func(r *cedar.Request) { r.Counters["custom"] = 7 }},
		{"time", `context.time == 1735787045000 && resource.time_ms == context.time`, nil},
		{"zero time means now", `context.time > 1735787045000`, func(r *cedar.Request) { r.Time = time.Time{} }},
		{"args scalars", `resource.args has s && resource.args.s == "x" && resource.args has i && resource.args.i == 3 &&
			resource.args has i64 && resource.args.i64 == -4 && resource.args has u && resource.args.u == 5 &&
			resource.args has b && resource.args.b`,
			func(r *cedar.Request) {
				r.Args = map[string]any{"s": "x", "i": 3, "i64": int64(-4), "u": uint8(5), "b": true}
			}},
		{"args json numbers", `resource.args has f && resource.args.f == 3 && resource.args has n && resource.args.n == 12 &&
			resource.args has frac && resource.args.frac == "1.5" && resource.args has big && resource.args.big == "1.5"`,
			func(r *cedar.Request) {
				r.Args = map[string]any{"f": 3.0, "n": json.Number("12"), "frac": 1.5, "big": json.Number("1.5")}
			}},
		{"args other types via fmt", `resource.args has d && resource.args.d == "1s" && resource.args has m && resource.args.m == "map[a:b]"`,
			func(r *cedar.Request) {
				r.Args = map[string]any{"d": time.Second, "m": map[string]string{"a": "b"}}
			}},
		{"args nested record and sets", `resource.args has opt && resource.args.opt.depth == 2 &&
			resource.args has tags && resource.args.tags.contains("a") && resource.args has mixed && resource.args.mixed.contains(1)`,
			func(r *cedar.Request) {
				r.Args = map[string]any{"opt": map[string]any{"depth": 2}, "tags": []string{"a", "b"}, "mixed": []any{1, "x", nil}}
			}},
		{"nil arg is absent", `!(resource.args has gone) && resource.args has here`,
			func(r *cedar.Request) { r.Args = map[string]any{"gone": nil, "here": ""} }},
		{"nil maps are empty records", `!(resource.args has s) && !(resource.args has here) &&
			!(resource.page_state has title) && !(resource.page_state has url)`,
			func(r *cedar.Request) { r.Args, r.PageState = nil, nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := loadFiles(t, map[string]string{
				"test.cedarschema": attrsSchema,
				"p.cedar":          `@id("p") permit (principal, action, resource) when { ` + tc.when + ` };`,
			})
			r := baseRequest("click")
			if tc.edit != nil {
				tc.edit(r)
			}
			if d := e.Decide(r); !d.Allowed {
				t.Errorf("Decision = %+v, want allowed", d)
			}
		})
	}
}

// TestDecideAgentGroups: the agent's groups are its principal's parents,
// so a policy can permit or forbid a group of agents; an agent in no
// group, or in another, is not in it.
func TestDecideAgentGroups(t *testing.T) {
	t.Parallel()
	e := loadFiles(t, map[string]string{"groups.cedar": `
permit (principal in Web::AgentGroup::"research", action, resource)
when { resource.command == "navigate" };
forbid (principal == Web::Agent::"mallory", action, resource);
`})
	cases := []struct {
		agent  string
		groups []string
		want   bool
	}{
		{"alice", []string{"ops", "research"}, true},
		{"bob", nil, false},
		{"carol", []string{"ops"}, false},
		{"mallory", []string{"research"}, false},
	}
	for _, c := range cases {
		r := baseRequest("navigate")
		r.Principal, r.Groups = c.agent, c.groups
		if d := e.Decide(r); d.Allowed != c.want {
			t.Errorf("%s in %v: allowed = %v, want %v (%v)", c.agent, c.groups, d.Allowed, c.want, d.Reasons)
		}
		if err := e.ValidateRequest(r); err != nil {
			t.Errorf("%s: the request does not fit the schema: %v", c.agent, err)
		}
	}
}
