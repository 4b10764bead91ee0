package scope_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// TestAskExternalRefusesSpecialUseNames: single-label names, special-use
// and private-use top-level names and cloud metadata names are refused
// outright under ask_external, never askable, and the reason says why no
// human is asked; .test and the example.* domains stay askable.
func TestAskExternalRefusesSpecialUseNames(t *testing.T) {
	t.Parallel()
	s := mustNew(t, askConfig)
	for _, tc := range []struct {
		host string
		why  string // in the reason; "" when askable
	}{
		{"intranet", "single-label"},
		{"metadata", "single-label"},
		{"instance-data", "single-label"},
		{"printer.local", ".local is a special-use"},
		{"metadata.google.internal", ".internal is a special-use"},
		{"instance-data.ec2.internal", ".internal is a special-use"},
		{"nas.home.arpa", ".arpa is a special-use"},
		{"1.0.0.127.in-addr.arpa", ".arpa is a special-use"},
		{"abcdefghijklmnop.onion", ".onion is a special-use"},
		{"x.invalid", ".invalid is a special-use"},
		{"router.lan", ".lan is a special-use"},
		{"wiki.corp", ".corp is a special-use"},
		{"site.example", ".example is a special-use"},
		{"box.alt", ".alt is a special-use"},
		{"metadata.goog", "metadata name"},
		{"a.metadata.goog", "metadata name"},
		{"metadata.tencentyun.com", "metadata name"},
		{"outside.test", ""},
		{"news.example.org", ""},
		{"www.example.com", ""},
	} {
		v := s.CheckHost(tc.host, 443)
		if tc.why == "" {
			if v.Allowed || !v.Ask || v.Rule != scope.RuleAskExternal {
				t.Errorf("%s: %+v, want askable", tc.host, v)
			}
			continue
		}
		if v.Allowed || v.Ask || v.Rule != scope.RuleNotAllowed || !strings.Contains(v.Reason, "never put to a human") || !strings.Contains(v.Reason, tc.why) {
			t.Errorf("%s: allowed %v ask %v rule %q reason %q; want refused, not askable, reason naming %q", tc.host, v.Allowed, v.Ask, v.Rule, v.Reason, tc.why)
		}
		// A URL and a trailing dot read alike.
		if v := s.Check("https://" + tc.host + "./x"); v.Allowed || v.Ask {
			t.Errorf("Check(https://%s./x) = allowed %v ask %v, want neither", tc.host, v.Allowed, v.Ask)
		}
	}
	// In allowed_domains, a special-use name is reached as any listed host.
	in := askConfig
	in.AllowedDomains = []string{"printer.local"}
	if v := mustNew(t, in).Check("https://printer.local/"); !v.Allowed {
		t.Errorf("printer.local in allowed_domains: %+v", v)
	}
}

// TestAskExternalDomainSetMatchesAsk: a host is in "ask_external" exactly
// when the scope would hold a navigate to it (on an allowed port): never
// a blocked or listed host, a special-use name, a localhost name or a
// non-global address, granted or not.
func TestAskExternalDomainSetMatchesAsk(t *testing.T) {
	t.Parallel()
	s := mustNew(t, askConfig)
	for _, host := range []string{
		"news.example.org", "outside.test", "93.184.215.14", "[2606:4700::1111]",
		"docs.example.com", "a.evil.com", "blocked.example.org",
		"intranet", "metadata.google.internal", "printer.local", "x.onion", "metadata.goog",
		"localhost", "a.localhost", "127.0.0.2", "127.0.0.5", "10.0.0.1", "169.254.169.254", "[::1]", "[fd00::1]", "[::ffff:7f00:5]",
	} {
		ask := s.CheckHost(host, 443).Ask
		inSet := slices.Contains(s.DomainSets(host), scope.SetAskExternal)
		if ask != inSet {
			t.Errorf("%s: Ask %v, but in the ask_external set %v (sets %v)", host, ask, inSet, s.DomainSets(host))
		}
	}
	for _, host := range []string{"127.0.0.5", "intranet", "metadata.google.internal"} {
		if sets := s.DomainSets(host); slices.Contains(sets, scope.SetAskExternal) {
			t.Errorf("DomainSets(%q) = %v: a never-askable host in ask_external", host, sets)
		}
	}
}
