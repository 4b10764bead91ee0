package scope_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// TestWithDenied proves that a scope derived with WithDenied refuses the
// added endpoints as DenyAddrPorts would, keeps every other rule (the
// endpoints it already denied included), and leaves the original scope as
// it was.
func TestWithDenied(t *testing.T) {
	t.Parallel()
	base := mustNew(t, scope.Config{
		AllowedDomains:    []string{"127.0.0.1", "[::1]", "localhost", "*.example.com"},
		AllowPrivateCIDRs: []string{"127.0.0.0/8", "::1/128"},
		DenyAddrPorts:     []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9999")},
	})
	derived, err := base.WithDenied(netip.MustParseAddrPort("127.0.0.1:9222"), netip.MustParseAddrPort("[::ffff:127.0.0.1]:9333"), netip.MustParseAddrPort("[::]:7777"))
	if err != nil {
		t.Fatalf("WithDenied: %v", err)
	}
	tests := []struct {
		name        string
		url         string
		base, deriv string // rule of each verdict; "" means allowed
	}{
		{"added endpoint", "http://127.0.0.1:9222/json/version", "", `deny_addr_ports "127.0.0.1:9222"`},
		{"added endpoint through localhost", "ws://localhost:9222/devtools/browser/x", "", `deny_addr_ports "127.0.0.1:9222"`},
		{"mapped spelling compares equal", "http://127.0.0.1:9333/", "", `deny_addr_ports "127.0.0.1:9333"`},
		{"unspecified address denies every address", "http://[::1]:7777/", "", `deny_addr_ports "[::]:7777"`},
		{"endpoint of the original kept", "http://127.0.0.1:9999/", `deny_addr_ports "127.0.0.1:9999"`, `deny_addr_ports "127.0.0.1:9999"`},
		{"other ports still granted", "http://127.0.0.1:8080/", "", ""},
		{"domains still allowed", "https://www.example.com/", "", ""},
		{"other rules kept", "https://other.test/", scope.RuleNotAllowed, scope.RuleNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				which string
				s     *scope.Scope
				rule  string
			}{{"original", base, tt.base}, {"derived", derived, tt.deriv}} {
				v := c.s.Check(tt.url)
				if v.Allowed != (c.rule == "") || c.rule != "" && v.Rule != c.rule {
					t.Errorf("%s scope: Check(%q) = allowed %v rule %q, want rule %q (\"\" = allowed)", c.which, tt.url, v.Allowed, v.Rule, c.rule)
				}
			}
		})
	}
	if v := derived.CheckAddrPort(netip.MustParseAddrPort("127.0.0.1:9222")); v.Allowed {
		t.Errorf("derived CheckAddrPort(127.0.0.1:9222) allowed: %+v", v)
	}
}

// TestWithDeniedErrors proves that an endpoint without an address or port
// is refused (every one reported), and that a nil scope stays nil.
func TestWithDeniedErrors(t *testing.T) {
	t.Parallel()
	base := mustNew(t, scope.Config{AllowedDomains: []string{"*.example.com"}})
	tests := []struct {
		name string
		aps  []netip.AddrPort
		n    int // how many EntryErrors
	}{
		{"zero endpoint", []netip.AddrPort{{}}, 1},
		{"port 0", []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, 1},
		{"every bad one reported", []netip.AddrPort{{}, netip.MustParseAddrPort("127.0.0.1:9222"), netip.MustParseAddrPort("[::1]:0")}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := base.WithDenied(tt.aps...)
			if s != nil || !errors.Is(err, scope.ErrInvalidPort) {
				t.Fatalf("WithDenied(%v) = %v, %v; want nil and ErrInvalidPort", tt.aps, s, err)
			}
			n := 0
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ee *scope.EntryError
				if errors.As(e, &ee) && ee.Field == "deny_addr_ports" {
					n++
				}
			}
			if n != tt.n {
				t.Errorf("WithDenied(%v) reported %d entries, want %d: %v", tt.aps, n, tt.n, err)
			}
		})
	}
	t.Run("nil scope", func(t *testing.T) {
		t.Parallel()
		var s *scope.Scope
		d, err := s.WithDenied(netip.MustParseAddrPort("127.0.0.1:9222"))
		if d != nil || err != nil {
			t.Errorf("nil.WithDenied = %v, %v; want nil, nil", d, err)
		}
	})
	t.Run("nothing added", func(t *testing.T) {
		t.Parallel()
		d, err := base.WithDenied()
		if err != nil || d == nil || d == base || !d.Check("https://www.example.com/").Allowed {
			t.Errorf("WithDenied() = %v, %v; want a working copy", d, err)
		}
	})
}
