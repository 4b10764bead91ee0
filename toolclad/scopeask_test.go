package toolclad_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestAskExternalLoads: ask_external = true and wcore-browser's
// default_action = "ask" both turn the scope's asking on; default_action
// "deny" and "allow" mean what allow_external false and true mean; the
// compiled scope marks a public host outside allowed_domains askable only
// then.
func TestAskExternalLoads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		body       string
		ask, allow bool
	}{
		{"ask_external", `ask_external = true`, true, false},
		{"ask_external false", `ask_external = false`, false, false},
		{"default_action ask", `default_action = "ask"`, true, false},
		{"default_action deny", `default_action = "deny"`, false, false},
		{"default_action allow", `default_action = "allow"`, false, true},
		{"both spellings agree", "ask_external = true\ndefault_action = \"ask\"\nallow_external = false", true, false},
		{"neither", ``, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Parse("ask.toml", []byte(scopeManifest(`allowed_domains = ["docs.example.com"]`+"\n"+tc.body)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			sc := m.Browser.Scope
			if sc.AskExternal != tc.ask || sc.AllowExternal != tc.allow {
				t.Errorf("AskExternal, AllowExternal = %v, %v; want %v, %v", sc.AskExternal, sc.AllowExternal, tc.ask, tc.allow)
			}
			v := m.Scope().Check("https://news.example.org/")
			if v.Ask != tc.ask || v.Allowed != tc.allow {
				t.Errorf("Check(public host outside allowed_domains) = allowed %v ask %v (%s)", v.Allowed, v.Ask, v.Reason)
			}
		})
	}
}

// TestAskExternalProblems: each contradiction, and a default_action wcore
// does not define, is a load problem at the key with file:line, saying
// what to write instead.
func TestAskExternalProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		wants      []string
	}{
		{"ask and allow_external", "allow_external = true\nask_external = true",
			[]string{"ask.toml:7:", "browser.scope.ask_external", "allow_external = true already lets the agent reach them"}},
		{"default_action ask and allow_external", "allow_external = true\ndefault_action = \"ask\"",
			[]string{"ask.toml:7:", "browser.scope.default_action", `default_action = "ask" contradicts allow_external = true`}},
		{"default_action deny and ask_external", "ask_external = true\ndefault_action = \"deny\"",
			[]string{"ask.toml:7:", `default_action = "deny" contradicts ask_external = true`}},
		{"default_action allow and allow_external false", "allow_external = false\ndefault_action = \"allow\"",
			[]string{`default_action = "allow" contradicts allow_external = false`}},
		{"unknown default_action", `default_action = "prompt"`,
			[]string{"ask.toml:6:", `"prompt" is not one of`, `"ask"`}},
		{"ask_external not a boolean", `ask_external = "yes"`,
			[]string{"ask.toml:6:", "browser.scope.ask_external", "expected a boolean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := toolclad.Parse("ask.toml", []byte(scopeManifest(`allowed_domains = ["docs.example.com"]`+"\n"+tc.body)))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestAskExternalSummary: the scope an agent is told says that other
// public sites wait for a human's approval, and how to ask.
func TestAskExternalSummary(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("ask.toml", []byte(scopeManifest("allowed_domains = [\"docs.example.com\"]\nask_external = true")))
	if err != nil {
		t.Fatal(err)
	}
	want := "Scope: sites: docs.example.com (http, https); other public sites only with a human's approval: navigate to one waits for it; on ports 80, 443."
	if got := m.ScopeSummary(); got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
}

// TestAskExternalNeedsAnEgressProxy: live mode's user context (its
// default) has no egress proxy to check an approved host's addresses, so
// asking there is a load problem at the key that asks, saying to use
// context = "isolated"; a live browser's isolated context, and a launched
// browser, may ask.
func TestAskExternalNeedsAnEgressProxy(t *testing.T) {
	t.Parallel()
	manifest := func(browser, scope string) string {
		return "[tool]\nname = \"live\"\n\n[browser]\n" + browser + "\n\n[browser.scope]\nallowed_domains = [\"docs.example.com\"]\n" + scope + "\n\n[browser.commands.navigate]\n"
	}
	for _, tc := range []struct {
		name, browser, scope string
		wants                []string // nil: it loads
	}{
		{"live, user context by default", `connect = "live"`, "ask_external = true",
			[]string{"live.toml:9:", "browser.scope.ask_external", `context = "user"`, `write context = "isolated"`}},
		{"live, user context written", "connect = \"live\"\ncontext = \"user\"", "ask_external = true",
			[]string{"live.toml:10:", "browser.scope.ask_external", "egress proxy"}},
		{"live, default_action ask", `connect = "live"`, `default_action = "ask"`,
			[]string{"live.toml:9:", "browser.scope.default_action", `default_action = "ask" needs the session's egress proxy`}},
		{"live, isolated context", "connect = \"live\"\ncontext = \"isolated\"", "ask_external = true", nil},
		{"live, user context, not asking", `connect = "live"`, "ask_external = false", nil},
		{"launched", `connect = "launch"`, "ask_external = true", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := toolclad.Parse("live.toml", []byte(manifest(tc.browser, tc.scope)))
			if tc.wants == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted it: context %q, ask_external %v", m.Browser.Context, m.Browser.Scope.AskExternal)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
