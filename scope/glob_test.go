package scope_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		host    string
		want    bool
	}{
		// Literal.
		{"literal exact", "example.com", "example.com", true},
		{"literal not subdomain", "example.com", "www.example.com", false},
		{"literal not suffix trick", "example.com", "evilexample.com", false},
		{"literal case and dot", "Example.COM.", "example.com", true},
		// Leading "*.": subdomains at any depth, never the bare domain.
		{"subdomain one level", "*.example.com", "a.example.com", true},
		{"subdomain two levels", "*.example.com", "a.b.example.com", true},
		{"subdomain not bare", "*.example.com", "example.com", false},
		{"subdomain not lookalike", "*.example.com", "aexample.com", false},
		{"subdomain not other suffix", "*.example.com", "example.com.evil.org", false},
		// Trailing ".*": one or more labels after.
		{"suffix wildcard one label", "admin.*", "admin.com", true},
		{"suffix wildcard several labels", "admin.*", "admin.co.uk", true},
		{"suffix wildcard example", "admin.*", "admin.example.com", true},
		{"suffix wildcard not bare", "admin.*", "admin", false},
		{"suffix wildcard anchored at start", "admin.*", "x.admin.com", false},
		{"suffix wildcard whole label", "admin.*", "administrator.com", false},
		// Both ends.
		{"both ends", "*.corp.*", "a.corp.example.com", true},
		{"both ends need a prefix", "*.corp.*", "corp.example.com", false},
		{"both ends need a suffix", "*.corp.*", "a.corp", false},
		// Bare "*".
		{"star matches domain", "*", "anything.example", true},
		{"star matches IP", "*", "10.0.0.1", true},
		{"star matches IPv6", "*", "[::1]", true},
		// Within a label.
		{"in-label prefix", "app-*.example.com", "app-1.example.com", true},
		{"in-label empty run", "app-*.example.com", "app-.example.com", true},
		{"in-label stays in label", "app-*.example.com", "app-1.x.example.com", false},
		{"in-label prefix mismatch", "app-*.example.com", "web-1.example.com", false},
		{"in-label middle", "a*b*c.example", "axxbyyc.example", true},
		{"in-label middle order", "a*b*c.example", "acb.example", false},
		{"in-label suffix", "*-api.example.com", "eu-api.example.com", true},
		{"middle star label", "a.*.example.com", "a.b.example.com", true},
		{"middle star one label only", "a.*.example.com", "a.b.c.example.com", false},
		// IDN and canonical forms.
		{"IDN pattern", "*.bücher.example", "www.xn--bcher-kva.example", true},
		{"IDN host", "*.xn--bcher-kva.example", "www.bücher.example", true},
		{"fullwidth host", "*.example.com", "ｗｗｗ．ｅｘａｍｐｌｅ．ｃｏｍ", true},
		// IP literals.
		{"IPv4 exact", "127.0.0.1", "127.0.0.1", true},
		{"IPv4 other spelling", "127.0.0.1", "2130706433", true},
		{"IPv4 other address", "127.0.0.1", "127.0.0.2", false},
		{"IPv6 bracketed", "[::1]", "[::1]", true},
		{"IPv6 bare pattern", "::1", "[0:0::1]", true},
		{"glob never matches IP", "*.0.0.1", "127.0.0.1", false},
		{"domain glob not IP", "*.example.com", "10.0.0.1", false},
		// Invalid patterns match nothing.
		{"invalid pattern", "**.example.com", "a.example.com", false},
		{"invalid host", "*.example.com", "a b.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := scope.Match(tt.pattern, tt.host); got != tt.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
			}
		})
	}
}

func TestParsePatternErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
	}{
		{"empty", ""},
		{"double star", "**.example.com"},
		{"double star alone", "**"},
		{"space", "exa mple.com"},
		{"leading space", " example.com"},
		{"tab", "example.com\t"},
		{"percent", "%65xample.com"},
		{"port", "example.com:8080"},
		{"scheme", "https://example.com"},
		{"path", "example.com/x"},
		{"at", "user@example.com"},
		{"empty label", "a..example.com"},
		{"leading dot", ".example.com"},
		{"bad IPv4", "256.0.0.1"},
		{"IPv4 glob", "127.0.0.*"},
		{"IPv4 glob prefix", "*.0.0.1"},
		{"IPv6 glob", "[::*]"},
		{"wildcard with non-ASCII", "bü*.example"},
		{"zone", "fe80::1%eth0"},
		{"bad punycode", "xn--a.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := scope.ParsePattern(tt.pattern)
			if !errors.Is(err, scope.ErrInvalidPattern) {
				t.Fatalf("ParsePattern(%q) = %v, %v; want ErrInvalidPattern", tt.pattern, p, err)
			}
		})
	}
}

// TestParsePatternErrorSays proves that a URL, a path, a user name or a
// port written where a host pattern belongs is refused with a reason that
// says so, not with the host parser's complaint about it.
func TestParsePatternErrorSays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, says string
	}{
		{"https://example.com/", "not a URL"},
		{"example.com/docs", "leave out the path"},
		{"example.com?q", "leave out the path"},
		{"user@example.com", "leave out the user name"},
		{"example.com:8080", "leave out the port"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			t.Parallel()
			_, err := scope.ParsePattern(tt.pattern)
			if !errors.Is(err, scope.ErrInvalidPattern) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("ParsePattern(%q) error %v, want one saying %q", tt.pattern, err, tt.says)
			}
		})
	}
	for _, ok := range []string{"[::1]", "::1", "127.0.0.1", "*.example.com"} {
		if _, err := scope.ParsePattern(ok); err != nil {
			t.Errorf("ParsePattern(%q): %v", ok, err)
		}
	}
}

func TestParsePatternCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"*.BÜCHER.example.", "*.xn--bcher-kva.example"},
		{"0x7f.1", "127.0.0.1"},
		{"::1", "[::1]"},
		{"admin.*", "admin.*"},
		{"*", "*"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			p, err := scope.ParsePattern(tt.in)
			if err != nil {
				t.Fatalf("ParsePattern(%q): %v", tt.in, err)
			}
			if p.Canonical() != tt.want || p.String() != tt.in {
				t.Errorf("ParsePattern(%q): canonical %q, string %q; want %q, %q", tt.in, p.Canonical(), p.String(), tt.want, tt.in)
			}
		})
	}
}
