package gate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// askManifest asks a human about public hosts outside allowed_domains.
const askManifest = `
[tool]
name = "a"
[browser.scope]
allowed_domains = ["*.example.com"]
blocked_domains = ["*.evil.org"]
allow_private_cidrs = ["127.0.0.5/32"]
ask_external = true
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.new_tab]
`

// askNoNavigate asks, but declares no navigate: nobody can be asked.
const askNoNavigate = `
[tool]
name = "b"
[browser.scope]
allowed_domains = ["*.example.com"]
ask_external = true
[browser.commands.click]
`

const home = "https://www.example.com/"

// TestNavigateOutsideIsHeld: a navigate to a public host outside
// allowed_domains is held for a human (not refused, not allowed), with a
// reason naming the exact URL, that it leaves the scope, and the origin an
// approval would open; Cedar has not decided yet. Approved, the policies
// decide it (navigate-approved-outside-scope) and nothing is left to
// approve.
func TestNavigateOutsideIsHeld(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, askManifest)
	const u = "https://News.Example.org/story?id=7"
	v := gate.Decide(f.ask(t, m, "navigate", map[string]any{"url": u}, on(home), nil))
	if v.Deny != nil {
		t.Fatalf("refused: %v", v.Deny)
	}
	if len(v.Approval) != 1 || !strings.Contains(v.Approval[0], "navigate to https://news.example.org/story?id=7 leaves the scope") ||
		!strings.Contains(v.Approval[0], "https://news.example.org:443 is reachable for this session") {
		t.Errorf("Approval = %q", v.Approval)
	}
	if v.Outside == nil || v.Outside.URL != "https://news.example.org/story?id=7" || v.Outside.Origin.String() != "https://news.example.org:443" {
		t.Errorf("Outside = %+v", v.Outside)
	}
	if v.Cedar != "" || v.Target != u || v.ScopeRule != scope.RuleAskExternal {
		t.Errorf("Cedar %q, Target %q, ScopeRule %q", v.Cedar, v.Target, v.ScopeRule)
	}
	q := f.ask(t, m, "navigate", map[string]any{"url": u}, on(home), nil)
	q.Approved = true
	v = gate.Decide(q)
	if v.Deny != nil || len(v.Approval) != 0 || v.Cedar != "allow" || !slices.Contains(v.PolicyIDs, "navigate-approved-outside-scope") || v.Outside == nil {
		t.Errorf("approved: deny %v, approval %q, cedar %q, policies %v, outside %+v", v.Deny, v.Approval, v.Cedar, v.PolicyIDs, v.Outside)
	}
	if r := v.Requests[0]; !r.HumanApproved || !slices.Contains(r.DomainSets, scope.SetAskExternal) {
		t.Errorf("the Cedar request: approved %v, domain sets %v", r.HumanApproved, r.DomainSets)
	}
}

// TestNavigateNeverAskedAbout: what the scope refuses outright is refused
// at once, approved or not, and the refusal says no human is asked:
// blocked domains, loopback (the canary's address, in several spellings),
// a granted private address outside allowed_domains, private and
// link-local space, metadata, localhost, a port outside allowed_ports.
func TestNavigateNeverAskedAbout(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, askManifest)
	for _, u := range []string{
		"https://x.evil.org/", "http://127.0.0.2/", "http://2130706434/", "http://[::ffff:127.0.0.2]/", "http://127.0.0.5/",
		"http://10.0.0.1/", "http://192.168.1.1/", "http://169.254.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/", "http://100.100.100.200/", "http://localhost/", "https://news.example.org:8443/",
	} {
		for _, approved := range []bool{false, true} {
			q := f.ask(t, m, "navigate", map[string]any{"url": u}, on(home), nil)
			q.Approved = approved
			v := gate.Decide(q)
			if v.Deny == nil || v.Deny.Stage != evidence.StageScope || len(v.Approval) != 0 || v.Outside != nil {
				t.Errorf("navigate %s (approved %v): deny %v, approval %q, outside %+v", u, approved, v.Deny, v.Approval, v.Outside)
				continue
			}
			if !strings.Contains(v.Deny.Reason, gate.NotAskable) {
				t.Errorf("navigate %s: the refusal does not say no human is asked: %s", u, v.Deny.Reason)
			}
		}
	}
}

// TestNavigateOutsideCedarStillDecides: a policy that forbids what a human
// would approve refuses the navigate at once (nobody is asked), and so
// does a policy set without a permit for it.
func TestNavigateOutsideCedarStillDecides(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, askManifest)
	forbid := testkit.CopyPolicies(t)
	testkit.WriteFile(t, forbid, "news.cedar", `@id("no-news")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.url_domain == Web::Domain::"news.example.org" };
`)
	without := testkit.CopyPolicies(t)
	testkit.WriteFile(t, without, "navigate.cedar", `@id("navigate-allowed-domains")
permit (principal, action == Web::Action::"browse", resource)
when { resource.command == "navigate" && resource.url_domain in Web::DomainSet::"allowed" };
`)
	for name, dir := range map[string]string{"a forbid": forbid, "no permit": without} {
		engine, err := cedar.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		q := f.ask(t, m, "navigate", map[string]any{"url": "https://news.example.org/"}, on(home), nil)
		q.Policies = engine
		v := gate.Decide(q)
		if v.Deny == nil || v.Deny.Stage != evidence.StageCedar || len(v.Approval) != 0 || !strings.Contains(v.Deny.Reason, "Cedar denies it even if approved") {
			t.Errorf("%s: deny %v, approval %q", name, v.Deny, v.Approval)
		}
	}
}

// TestLeavingTheScopeSaysHowToAsk: a link, a new_tab URL or an action that
// ends outside allowed_domains is refused as ever, and, when the manifest
// asks and declares navigate, the refusal says navigate would put it to a
// human; never for what is refused outright, and never without navigate.
func TestLeavingTheScopeSaysHowToAsk(t *testing.T) {
	f := newDecideFixture(t)
	m, noNav := testkit.Manifest(t, askManifest), testkit.Manifest(t, askNoNavigate)
	const hint = "call navigate with that URL"
	for _, tc := range []struct {
		name    string
		m       *toolclad.Manifest
		command string
		args    map[string]any
		facts   *gate.Facts
		hint    bool
	}{
		{"link outside", m, "click", map[string]any{"ref": "e1"}, withElement(on(home), link("https://news.example.org/")), true},
		{"link to loopback", m, "click", map[string]any{"ref": "e1"}, withElement(on(home), link("http://127.0.0.2/")), false},
		{"link to a blocked domain", m, "click", map[string]any{"ref": "e1"}, withElement(on(home), link("https://x.evil.org/")), false},
		{"new_tab outside", m, "new_tab", map[string]any{"url": "https://news.example.org/"}, on(home), true},
		{"link outside, no navigate declared", noNav, "click", map[string]any{"ref": "e1"}, withElement(on(home), link("https://news.example.org/")), false},
		{"link outside, without ask_external", f.m, "click", map[string]any{"ref": "e1"}, withElement(on(home), link("https://news.example.org/")), false},
	} {
		v := gate.Decide(f.ask(t, tc.m, tc.command, tc.args, tc.facts, nil))
		if v.Deny == nil || v.Deny.Stage != evidence.StageScope || len(v.Approval) != 0 {
			t.Errorf("%s: deny %v, approval %q", tc.name, v.Deny, v.Approval)
			continue
		}
		if got := strings.Contains(v.Deny.Reason, hint); got != tc.hint {
			t.Errorf("%s: hint %v, want %v: %s", tc.name, got, tc.hint, v.Deny.Reason)
		}
	}
	sc := m.Scope()
	av := gate.After(sc.Check, &gate.Outcome{Command: "click", State: gate.PageState{URL: "https://news.example.org/landed"}, Asks: gate.AsksOutside(m)})
	if av.Deny == nil || av.Deny.Stage != evidence.StageFinalURL || !av.Reset || !strings.Contains(av.Deny.Reason, hint) {
		t.Errorf("after a click that landed outside: %+v %v", av, av.Deny)
	}
	if !gate.AsksOutside(m) || gate.AsksOutside(noNav) || gate.AsksOutside(f.m) || gate.AsksOutside(nil) {
		t.Error("AsksOutside does not follow ask_external and navigate")
	}
}

// TestOutsideOriginsAdmitTheOriginOnly: an approved origin makes that
// origin reachable through the session's check, and nothing else: not the
// same host on another port or scheme, not another subdomain, never what
// the scope refuses outright. A navigate to it is still asked about.
func TestOutsideOriginsAdmitTheOriginOnly(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, askManifest)
	sc := m.Scope()
	var origins gate.OutsideOrigins
	check := origins.Check(sc.Check)
	if v := check("https://news.example.org/a"); v.Allowed {
		t.Fatalf("allowed before any approval: %+v", v)
	}
	o, err := scope.OriginOf("https://news.example.org/story")
	if err != nil {
		t.Fatal(err)
	}
	origins.Add(o, "apr-1")
	for _, u := range []string{"https://news.example.org/", "https://news.example.org:443/img.png?x=1", "https://NEWS.example.org./style.css"} {
		if v := check(u); !v.Allowed || !v.Ask || v.Rule != `approved origin "https://news.example.org:443"` || !strings.Contains(v.Reason, "apr-1") {
			t.Errorf("check(%s) = %+v", u, v)
		}
	}
	for _, u := range []string{"http://news.example.org/", "https://news.example.org:8443/", "https://www.news.example.org/", "https://example.org/",
		"https://other.example.net/", "wss://news.example.org/", "https://x.evil.org/", "http://127.0.0.2/"} {
		if v := check(u); v.Allowed {
			t.Errorf("check(%s) allowed by %s", u, v.Rule)
		}
	}
	// A scope that no longer asks (a reload turned ask_external off, or
	// blocked the host) lifts nothing, approved or not.
	noAsk := testkit.Manifest(t, strings.Replace(askManifest, "ask_external = true", "", 1)).Scope()
	blocked := testkit.Manifest(t, strings.Replace(askManifest, `"*.evil.org"`, `"*.evil.org", "news.example.org"`, 1)).Scope()
	for name, sc := range map[string]*scope.Scope{"ask_external off": noAsk, "host blocked": blocked} {
		if v := origins.Check(sc.Check)("https://news.example.org/"); v.Allowed {
			t.Errorf("%s: the approved origin is still reachable (%s)", name, v.Rule)
		}
		if v := origins.CheckHost(sc.CheckHost("news.example.org", 443)); v.Allowed {
			t.Errorf("%s: the proxy still lets the approved origin through (%s)", name, v.Rule)
		}
	}
	// The proxy's view: the host and port, of the approved origin only.
	if v := origins.CheckHost(sc.CheckHost("news.example.org", 443)); !v.Allowed {
		t.Errorf("CheckHost(news.example.org:443) = %+v", v)
	}
	for _, hp := range []struct {
		host string
		port uint16
	}{{"news.example.org", 80}, {"other.example.net", 443}, {"127.0.0.2", 443}} {
		if v := origins.CheckHost(sc.CheckHost(hp.host, hp.port)); v.Allowed {
			t.Errorf("CheckHost(%s:%d) allowed by %s", hp.host, hp.port, v.Rule)
		}
	}
	// The page on the approved origin is in scope for the next call, and
	// a link within the origin may be followed.
	q := f.ask(t, m, "click", map[string]any{"ref": "e1"}, withElement(on("https://news.example.org/story"), link("https://news.example.org/next")), nil)
	q.Check = check
	if v := gate.Decide(q); v.Deny != nil || len(v.Approval) != 0 {
		t.Errorf("a link within the approved origin: %v %q", v.Deny, v.Approval)
	}
	q = f.ask(t, m, "click", map[string]any{"ref": "e1"}, withElement(on("https://news.example.org/story"), link("https://tracker.example.net/")), nil)
	q.Check = check
	if v := gate.Decide(q); v.Deny == nil || v.Deny.Stage != evidence.StageScope {
		t.Errorf("a link from the approved origin to yet another host: %v", v.Deny)
	}
	// The agent's own navigate there is asked about again.
	q = f.ask(t, m, "navigate", map[string]any{"url": "https://news.example.org/other"}, on(home), nil)
	q.Check = check
	if v := gate.Decide(q); v.Deny != nil || len(v.Approval) != 1 {
		t.Errorf("navigate to the approved origin: %v %q", v.Deny, v.Approval)
	}
}
