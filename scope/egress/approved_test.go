package egress_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// approvedPolicy is a real scope whose askable refusals of the hosts in
// approved are lifted, as a session's approved origins lift them
// (gate.OutsideOrigins.CheckHost): the verdict is allowed and keeps Ask.
type approvedPolicy struct {
	*scope.Scope
	approved map[string]bool
}

func (p approvedPolicy) CheckHost(host string, port uint16) scope.Verdict {
	v := p.Scope.CheckHost(host, port)
	if !v.Allowed && v.Ask && p.approved[v.Host] {
		v.Allowed, v.Rule = true, "approved origin"
	}
	return v
}

// TestApprovedHostTakesOnlyGlobalAnswers: a host reachable only because a
// human approved it (a public name outside allowed_domains) is refused
// when any answer is not globally reachable, even an address
// allow_private_cidrs grants; the same address stays reachable through a
// name in allowed_domains, and a global answer of the approved host is
// dialled.
func TestApprovedHostTakesOnlyGlobalAnswers(t *testing.T) {
	t.Parallel()
	s, err := scope.New(scope.Config{
		AllowedDomains:    []string{"intranet.example.com"},
		AllowPrivateCIDRs: []string{"127.0.0.5/32", "10.0.0.0/8"},
		AllowedPorts:      []string{"80"},
		AskExternal:       true,
	})
	if err != nil {
		t.Fatal(err)
	}
	policy := approvedPolicy{s, map[string]bool{"news.example.org": true, "mixed.example.org": true, "public.example.org": true}}
	res := newFakeResolver("news.example.org", "127.0.0.5", "mixed.example.org", "93.184.216.34,10.1.2.3",
		"public.example.org", "93.184.216.34", "intranet.example.com", "127.0.0.5")
	p, err := egress.New(egress.Config{Policy: policy, Resolver: res, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host, wantRule, wantAddr string
	}{
		{"news.example.org", egress.RuleApprovedNotGlobal, ""},
		{"mixed.example.org", egress.RuleApprovedNotGlobal, ""},
		{"public.example.org", "", "93.184.216.34:80"},
		{"intranet.example.com", "", "127.0.0.5:80"},
		{"unapproved.example.org", scope.RuleAskExternal, ""},
	} {
		ap, rule := p.GateForTest(context.Background(), tc.host, 80)
		got := ""
		if ap.IsValid() {
			got = ap.String()
		}
		if rule != tc.wantRule || got != tc.wantAddr {
			t.Errorf("%s: rule %q, address %q; want %q, %q", tc.host, rule, got, tc.wantRule, tc.wantAddr)
		}
	}
}

// TestApprovedHostGrantedAddressNeverDialled: through the proxy itself, an
// approved name resolving to a granted private address gets a 403 that
// names the rule and the address, and nothing is dialled.
func TestApprovedHostGrantedAddressNeverDialled(t *testing.T) {
	t.Parallel()
	s, err := scope.New(scope.Config{
		AllowPrivateCIDRs: []string{"127.0.0.5/32"},
		AllowedPorts:      []string{"80"},
		AskExternal:       true,
	})
	if err != nil {
		t.Fatal(err)
	}
	dials := &dialRecorder{}
	p, err := egress.New(egress.Config{Policy: approvedPolicy{s, map[string]bool{"news.example.org": true}},
		Resolver: newFakeResolver("news.example.org", "127.0.0.5"), Dial: dials.Dial, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}}
	r, err := client.Get("http://news.example.org/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden || r.Header.Get("X-Browsergate-Denied") != egress.RuleApprovedNotGlobal ||
		!strings.Contains(r.Header.Get("X-Browsergate-Reason"), "127.0.0.5") {
		t.Errorf("got %d %q (%s)", r.StatusCode, r.Header.Get("X-Browsergate-Denied"), r.Header.Get("X-Browsergate-Reason"))
	}
	if d := dials.dialed(); len(d) != 0 {
		t.Errorf("LEAK: the proxy dialled %v for an approved name's private answer", d)
	}
}
