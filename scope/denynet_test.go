package scope_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// TestWithDeniedNetworks proves that a denied network is refused at every
// port and in every spelling a page or a resolver can give (an IP literal,
// IPv4-mapped, a localhost name, a resolved address), even where
// allow_private_cidrs grants it or the address is global, and that the
// original scope is unchanged.
func TestWithDeniedNetworks(t *testing.T) {
	t.Parallel()
	base := mustNew(t, scope.Config{
		AllowedDomains:    []string{"*"},
		AllowExternal:     true,
		AllowPrivateCIDRs: []string{"10.0.0.0/8", "127.0.0.0/8", "::1/128"},
		AllowedPorts:      []string{"1-65535"},
	})
	pool := scope.DeniedNetwork{Prefix: netip.MustParsePrefix("10.77.1.0/24"), What: "the remote pool's network (pool_cidrs)"}
	self := scope.DeniedNetwork{Prefix: netip.MustParsePrefix("127.0.0.1/32"), What: "an address of the daemon's host"}
	global := scope.DeniedNetwork{Prefix: netip.MustParsePrefix("::ffff:1.2.3.0/120"), What: "a pool written mapped"}
	derived, err := base.WithDeniedNetworks(pool, self, global)
	if err != nil {
		t.Fatal(err)
	}
	urls := []struct {
		name, url, rule string // rule "" means allowed
	}{
		{"pool host's DevTools port", "http://10.77.1.2:9223/json/version", "denied network 10.77.1.0/24"},
		{"pool host at another port", "https://10.77.1.200/", "denied network 10.77.1.0/24"},
		{"pool host mapped", "http://[::ffff:10.77.1.2]:80/", "denied network 10.77.1.0/24"},
		{"pool host in hex", "http://0x0a4d0102/", "denied network 10.77.1.0/24"},
		{"the daemon's address", "http://127.0.0.1:8080/", "denied network 127.0.0.1/32"},
		{"localhost maps to the daemon's address", "http://localhost:8080/", "denied network 127.0.0.1/32"},
		{"a global network denied", "http://1.2.3.7/", "denied network 1.2.3.0/24"},
		{"the rest of the grant", "http://10.77.2.1/", ""},
		{"another loopback address", "http://127.0.0.2/", ""},
	}
	for _, tt := range urls {
		v := derived.Check(tt.url)
		if tt.rule == "" {
			if !v.Allowed {
				t.Errorf("%s: %s refused: %s", tt.name, tt.url, v.Reason)
			}
			continue
		}
		if v.Allowed || v.Rule != tt.rule {
			t.Errorf("%s: %s = %v %q (%s), want refused by %q", tt.name, tt.url, v.Allowed, v.Rule, v.Reason, tt.rule)
		} else if !strings.Contains(v.Reason, "whatever the scope grants") {
			t.Errorf("%s: reason %q does not say no grant lifts it", tt.name, v.Reason)
		}
		if b := base.Check(tt.url); !b.Allowed {
			t.Errorf("%s: the original scope changed: %s", tt.name, b.Reason)
		}
	}
	for _, ap := range []string{"10.77.1.2:9223", "[::ffff:10.77.1.2]:9223", "127.0.0.1:1"} {
		if v := derived.CheckAddrPort(netip.MustParseAddrPort(ap)); v.Allowed || !strings.HasPrefix(v.Rule, "denied network") {
			t.Errorf("resolved %s: %v %q", ap, v.Allowed, v.Rule)
		}
	}
	if v := derived.CheckAddr(netip.MustParseAddr("10.77.1.9")); v.Allowed {
		t.Error("CheckAddr lets a pool address through")
	}
	if _, err := base.WithDeniedNetworks(scope.DeniedNetwork{What: "nothing"}); err == nil {
		t.Error("an invalid network was taken")
	}
}
