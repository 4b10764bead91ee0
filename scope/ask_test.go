package scope_test

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// askConfig asks about hosts outside allowed_domains, with a private grant
// (127.0.0.5 for a test site reached by name) and a blocked domain.
var askConfig = scope.Config{
	AllowedDomains:    []string{"docs.example.com"},
	BlockedDomains:    []string{"*.evil.com", "blocked.example.org"},
	AllowPrivateCIDRs: []string{"127.0.0.5/32"},
	AskExternal:       true,
}

// TestAskExternalMarksOnlyPublicHosts: with ask_external, a public host
// outside allowed_domains (a name, or a global IP literal) is denied with
// Ask set; everything refused outright stays refused, with Ask unset:
// blocked domains, every non-global address class (granted or not, in
// every spelling), localhost names, metadata, ports outside allowed_ports,
// other schemes. A host inside allowed_domains is allowed, not asked.
func TestAskExternalMarksOnlyPublicHosts(t *testing.T) {
	t.Parallel()
	s := mustNew(t, askConfig)
	for _, tc := range []struct {
		name, url string
		allowed   bool
		ask       bool
		rule      string
	}{
		{"in allowed_domains", "https://docs.example.com/a", true, false, `allowed_domains "docs.example.com"`},
		{"public name outside", "https://news.example.org/a?b=c", false, true, scope.RuleAskExternal},
		{"public name on http", "http://news.example.org/", false, true, scope.RuleAskExternal},
		{"global IPv4 literal", "https://93.184.215.14/", false, true, scope.RuleAskExternal},
		{"global IPv6 literal", "https://[2606:4700::1111]/", false, true, scope.RuleAskExternal},
		{"blocked glob", "https://a.evil.com/", false, false, `blocked_domains "*.evil.com"`},
		{"blocked exact", "https://blocked.example.org/", false, false, `blocked_domains "blocked.example.org"`},
		{"loopback", "http://127.0.0.2/", false, false, "address class loopback"},
		{"loopback decimal", "http://2130706434/", false, false, "address class loopback"},
		{"loopback hex", "http://0x7f.0.0.2/", false, false, "address class loopback"},
		{"granted private outside allowed_domains", "http://127.0.0.5/", false, false, scope.RuleNotAllowed},
		{"private 10/8", "http://10.0.0.1/", false, false, "address class private"},
		{"link-local", "http://169.254.1.1/", false, false, "address class link-local"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", false, false, "address class metadata"},
		{"metadata mapped", "http://[::ffff:a9fe:a9fe]/", false, false, "address class metadata"},
		{"ipv6 loopback", "http://[::1]/", false, false, "address class loopback"},
		{"ULA", "http://[fd00::1]/", false, false, "address class unique-local"},
		{"localhost", "http://localhost/", false, false, "address class loopback"},
		{"localhost subdomain", "http://a.localhost/", false, false, "address class loopback"},
		{"port outside allowed_ports", "https://news.example.org:8443/", false, false, scope.RuleAllowedPorts},
		{"scheme", "ftp://news.example.org/", false, false, scope.RuleScheme},
		{"does not parse", "https://news..example.org/", false, false, scope.RuleParse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := s.Check(tc.url)
			if v.Allowed != tc.allowed || v.Ask != tc.ask || v.Rule != tc.rule {
				t.Errorf("Check(%q) = allowed %v ask %v rule %q (%s), want allowed %v ask %v rule %q", tc.url, v.Allowed, v.Ask, v.Rule, v.Reason, tc.allowed, tc.ask, tc.rule)
			}
		})
	}
}

// TestAskExternalNeedsTheKey: without ask_external a public host outside
// allowed_domains is refused and not askable; with allow_external it is
// allowed, so ask_external changes nothing; with ask_external and no
// allowed_domains the scope is no longer empty: every public host is
// askable.
func TestAskExternalNeedsTheKey(t *testing.T) {
	t.Parallel()
	const u = "https://news.example.org/"
	off := askConfig
	off.AskExternal = false
	if v := mustNew(t, off).Check(u); v.Allowed || v.Ask || v.Rule != scope.RuleNotAllowed {
		t.Errorf("without ask_external: %+v", v)
	}
	ext := askConfig
	ext.AllowExternal = true
	if v := mustNew(t, ext).Check(u); !v.Allowed || v.Ask || v.Rule != scope.RuleAllowExternal {
		t.Errorf("with allow_external too: %+v", v)
	}
	if sets := mustNew(t, ext).DomainSets("news.example.org"); len(sets) != 0 {
		t.Errorf("with allow_external too, DomainSets = %v, want none", sets)
	}
	only := scope.Config{AskExternal: true}
	if v := mustNew(t, only).Check(u); v.Allowed || !v.Ask {
		t.Errorf("ask_external with no allowed_domains: %+v", v)
	}
	if v := mustNew(t, only).Check("http://127.0.0.1/"); v.Allowed || v.Ask {
		t.Errorf("ask_external with no allowed_domains, loopback: %+v", v)
	}
}

// TestAskExternalProxyView: the proxy's view (CheckHost) marks the same
// hosts askable, and a resolved address is judged by its class whatever
// was asked (CheckAddrPort knows nothing of names): a private answer of an
// askable name is refused.
func TestAskExternalProxyView(t *testing.T) {
	t.Parallel()
	s := mustNew(t, askConfig)
	if v := s.CheckHost("news.example.org", 443); v.Allowed || !v.Ask {
		t.Errorf("CheckHost(news.example.org, 443) = %+v", v)
	}
	if v := s.CheckHost("127.0.0.2", 443); v.Allowed || v.Ask {
		t.Errorf("CheckHost(127.0.0.2, 443) = %+v", v)
	}
	for _, a := range []string{"127.0.0.2:443", "10.0.0.1:443", "169.254.169.254:80"} {
		if v := s.CheckAddrPort(netip.MustParseAddrPort(a)); v.Allowed {
			t.Errorf("CheckAddrPort(%s) = %+v, want refused", a, v)
		}
	}
}

// TestAskExternalDomainSet: a host the scope asks about is in the
// "ask_external" set (what a policy permits an approved navigate by);
// allowed and blocked hosts are not; the name cannot be taken by a
// manifest's own set.
func TestAskExternalDomainSet(t *testing.T) {
	t.Parallel()
	s := mustNew(t, askConfig)
	for host, want := range map[string][]string{
		"news.example.org":    {scope.SetAskExternal},
		"docs.example.com":    {"allowed"},
		"a.evil.com":          {"blocked"},
		"blocked.example.org": {"blocked"},
	} {
		if got := s.DomainSets(host); !slices.Equal(got, want) {
			t.Errorf("DomainSets(%q) = %v, want %v", host, got, want)
		}
	}
	if scope.ValidSetName(scope.SetAskExternal) {
		t.Errorf("ValidSetName(%q) = true: a manifest could fill the set policies trust", scope.SetAskExternal)
	}
	_, err := scope.New(scope.Config{DomainSets: map[string][]string{scope.SetAskExternal: {"evil.example"}}})
	if !errors.Is(err, scope.ErrInvalidPattern) {
		t.Errorf("a domain set named %q: err = %v, want ErrInvalidPattern", scope.SetAskExternal, err)
	}
}

// TestOriginOf: an origin is scheme, canonical host and port, the port
// always written; spellings the browser reads alike give one origin; only
// http and https URLs have one.
func TestOriginOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"https://News.Example.org/a/b?c#d", "https://news.example.org:443"},
		{"https://news.example.org:443/", "https://news.example.org:443"},
		{"http://news.example.org/", "http://news.example.org:80"},
		{"http://news.example.org:8080/x", "http://news.example.org:8080"},
		{"http://user:pw@news.example.org./", "http://news.example.org:80"},
		{"https://[2606:4700::1111]/", "https://[2606:4700::1111]:443"},
	} {
		o, err := scope.OriginOf(tc.url)
		if err != nil || o.String() != tc.want {
			t.Errorf("OriginOf(%q) = %v, %v; want %s", tc.url, o, err, tc.want)
		}
	}
	for _, u := range []string{"about:blank", "wss://news.example.org/", "data:text/plain,x", "javascript:alert(1)", "https://", "not a url", "http://news.example.org:0/"} {
		if o, err := scope.OriginOf(u); err == nil {
			t.Errorf("OriginOf(%q) = %v, want an error", u, o)
		}
	}
}
