package toolclad_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// scopeManifest wraps a [browser.scope] body in the smallest manifest.
func scopeManifest(body string) string {
	return "[tool]\nname = \"s\"\n\n[browser.scope]\n" + body + "\n\n[browser.commands.navigate]\n"
}

// TestScopeGrantsLoad proves that every allow_private_cidrs form the README
// and the design show loads, that the compiled scope means what scope's own
// parser says (a port-limited grant lifts only its ports), and that the
// loader and the scope package agree on each entry.
func TestScopeGrantsLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		grants string // the TOML array, as the README writes it
		allow  []string
		deny   []string
	}{
		{
			name:   "README loopback grant",
			grants: `["127.0.0.1/32"]`,
			allow:  []string{"http://127.0.0.1/", "http://127.0.0.1:22/", "http://127.0.0.1:8080/"},
			deny:   []string{"http://127.0.0.2/", "http://10.1.2.3/"},
		},
		{
			name:   "README port-limited private grant",
			grants: `["10.0.0.0/8 ports 80,443"]`,
			allow:  []string{"http://10.1.2.3/", "https://10.1.2.3/", "http://10.1.2.3:443/"},
			deny:   []string{"http://10.1.2.3:22/", "http://10.1.2.3:8080/", "http://127.0.0.1/"},
		},
		{
			name:   "both README grants, and the singular port form",
			grants: `["127.0.0.1/32", "10.0.0.0/8 ports 80,443", "::1/128 port 8080"]`,
			allow:  []string{"http://127.0.0.1:22/", "http://10.1.2.3/", "http://[::1]:8080/"},
			deny:   []string{"http://10.1.2.3:22/", "http://[::1]:22/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := scopeManifest(`allowed_domains = ["127.0.0.1", "10.1.2.3", "[::1]"]` + "\nallow_private_cidrs = " + tt.grants)
			m, err := toolclad.Parse("grants.toml", []byte(doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			sc := m.Scope()
			if sc == nil {
				t.Fatal("Scope() = nil")
			}
			for _, u := range tt.allow {
				if v := sc.Check(u); !v.Allowed {
					t.Errorf("Check(%q) denied: %s", u, v.Reason)
				}
			}
			for _, u := range tt.deny {
				if v := sc.Check(u); v.Allowed {
					t.Errorf("Check(%q) allowed by %s", u, v.Rule)
				}
			}
			// The loader accepts exactly what scope.New accepts.
			if _, err := scope.New(scope.Config{AllowPrivateCIDRs: m.Browser.Scope.AllowPrivateCIDRs}); err != nil {
				t.Errorf("scope.New refuses what the loader accepted: %v", err)
			}
		})
	}
}

// TestScopeProblems proves that each scope entry the scope package refuses
// is a load problem at that entry's file:line:col, with scope's reason,
// and that every one is reported.
func TestScopeProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []string // problems, as "line:col: key: substring"
	}{
		{
			name: "grant without prefix length",
			body: `allowed_domains = ["10.1.2.3"]` + "\n" + `allow_private_cidrs = ["10.0.0.0/8 ports 80,443", "10.0.0.1"]`,
			want: []string{`6:51: browser.scope.allow_private_cidrs[1]: invalid CIDR prefix: "10.0.0.1" has no prefix length; did you mean "10.0.0.1/32"?`},
		},
		{
			name: "port range in a grant",
			body: `allow_private_cidrs = ["10.0.0.0/8 ports 80-90"]`,
			want: []string{`5:24: browser.scope.allow_private_cidrs[0]: invalid port: "80-90" in "10.0.0.0/8 ports 80-90"`},
		},
		{
			name: "metadata grant",
			body: `allow_private_cidrs = ["169.254.169.254/32"]`,
			want: []string{`5:24: browser.scope.allow_private_cidrs[0]: cloud metadata addresses cannot be granted`},
		},
		{
			name: "every bad glob, each at its place",
			body: `allowed_domains = ["ok.example.com", "bad..example.com"]` + "\n" + `blocked_domains = ["**.evil.com"]`,
			want: []string{
				`5:38: browser.scope.allowed_domains[1]: invalid domain pattern: "bad..example.com": empty label`,
				`6:20: browser.scope.blocked_domains[0]: invalid domain pattern: "**.evil.com"`,
			},
		},
		{
			name: "bad glob in a domain set",
			body: "[browser.scope.domain_sets]\npayments = [\"https://pay.example.com/\"]",
			want: []string{`6:13: browser.scope.domain_sets.payments[0]: invalid domain pattern: "https://pay.example.com/": a pattern is a host name, not a URL`},
		},
		{
			name: "bad port",
			body: `allowed_ports = [443, 70000]`,
			want: []string{`5:23: browser.scope.allowed_ports[1]: invalid port`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := toolclad.Parse("scope.toml", []byte(scopeManifest(tt.body)))
			var le *toolclad.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse error = %v, want a *LoadError", err)
			}
			if len(le.Problems) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(le.Problems), len(tt.want), err)
			}
			for i, w := range tt.want {
				if got := strings.TrimPrefix(le.Problems[i].String(), "scope.toml:"); !strings.HasPrefix(got, w[:strings.Index(w, ": ")]) || !strings.Contains(got, w[strings.Index(w, ": ")+2:]) {
					t.Errorf("problem %d = %q\nwant %q", i, got, w)
				}
			}
		})
	}
}

// TestManifestScope proves that Load compiles the scope: a manifest without
// [browser.scope] gets one that allows nothing, the compiled scope holds
// the domain sets for Cedar, and the daemon can derive from it a scope that
// also refuses its own DevTools endpoint.
func TestManifestScope(t *testing.T) {
	t.Parallel()
	t.Run("no scope allows nothing", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "testdata/good/minimal.toml")
		if v := m.Scope().Check("https://example.com/"); v.Allowed || v.Rule != scope.RuleNoScope {
			t.Errorf("Check = %+v, want denied by %q", v, scope.RuleNoScope)
		}
	})
	t.Run("full scope compiled", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "testdata/good/full.toml")
		sc := m.Scope()
		if got := strings.Join(sc.DomainSets("pay.example.org"), ","); got != "payments" {
			t.Errorf("DomainSets(pay.example.org) = %q, want payments", got)
		}
		if v := sc.Check("http://127.0.0.1:9222/"); !v.Allowed {
			t.Errorf("before WithDenied, 127.0.0.1:9222 denied: %s", v.Reason)
		}
		d, err := sc.WithDenied(netip.MustParseAddrPort("127.0.0.1:9222"))
		if err != nil {
			t.Fatal(err)
		}
		if v := d.Check("http://127.0.0.1:9222/"); v.Allowed {
			t.Errorf("after WithDenied, 127.0.0.1:9222 allowed by %s", v.Rule)
		}
		if v := m.Scope().Check("http://127.0.0.1:9222/"); !v.Allowed {
			t.Error("WithDenied changed the manifest's own scope")
		}
	})
	t.Run("nil manifest", func(t *testing.T) {
		t.Parallel()
		var m *toolclad.Manifest
		if m.Scope() != nil {
			t.Error("nil manifest has a scope")
		}
	})
}
