package scope_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

var urlSeeds = []string{
	"http://www.example.com/", "HTTP://WWW.EXAMPLE.COM:80/a/../b?c#d", "http:host", `http:\\host\path`,
	"http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://127.1/", "http://%31%32%37.0.0.1/",
	"http://１２７．０．０．１/", "http://example\u3002com/", "http://bücher.example/", "http://xn--bcher-kva.example/",
	"http://a@b@127.0.0.1/", `http://a\@b/`, "http://a?@b/", "http://a#@b/", "ht\ttp://a\n.com/",
	"http://[::ffff:127.0.0.1]/", "http://[fe80::1%25eth0]/", "http://[1:0:0:2::3]:8080/", "http://4294967296/",
	"about:blank", "javascript:alert(1)", "data:,x", "file:///etc/passwd", "ws://h/s", "https://h:443/%2e%2e/x",
	"http://exam\u00adple.com/", "http://\u2460.com/", "http://*.example.com/", "http://0x/", "http://a..b/",
}

// FuzzParseURL checks that ParseURL never panics and that canonical output
// is stable: a parsed URL's String() parses again to the same host and the
// same string.
func FuzzParseURL(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := scope.ParseURL(raw)
		if err != nil {
			return
		}
		s := u.String()
		u2, err := scope.ParseURL(s)
		if err != nil {
			t.Fatalf("ParseURL(%q) = %q, which does not re-parse: %v", raw, s, err)
		}
		if u2.Host != u.Host || u2.String() != s {
			t.Fatalf("ParseURL(%q) = %q (host %q), re-parsed as %q (host %q)", raw, s, u.Host, u2.String(), u2.Host)
		}
		if u.Host != "" {
			h, err := scope.CanonicalHost(u.Host)
			if err != nil || h != u.Host {
				t.Fatalf("CanonicalHost(%q) = %q, %v; canonical hosts must be fixed points", u.Host, h, err)
			}
		}
	})
}

// FuzzMatch checks that matching never panics and that a literal pattern
// matches its own canonical host.
func FuzzMatch(f *testing.F) {
	for _, p := range []string{"*", "*.example.com", "admin.*", "app-*.example.com", "*.corp.*", "127.0.0.1", "[::1]", "a*b*c.x"} {
		f.Add(p, "a.example.com")
		f.Add(p, "admin.co.uk")
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		scope.Match(pattern, host)
		p, err := scope.ParsePattern(pattern)
		if err != nil || strings.Contains(pattern, "*") {
			return
		}
		if !p.Match(p.Canonical()) {
			t.Fatalf("literal pattern %q does not match its canonical host %q", pattern, p.Canonical())
		}
	})
}

// FuzzClassify checks that classification never panics, that unwrapping is
// idempotent, that an address classifies like its embedded IPv4 address
// when that one is not global, that an address is never more reachable
// than what it embeds, and that metadata is never global.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::ffff:7f00:1", "64:ff9b::a9fe:a9fe", "2002:a00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fd00:ec2::254", "8.8.8.8"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		c := scope.Classify(a)
		if !ok {
			if c.Global {
				t.Fatalf("invalid address classified global: %+v", c)
			}
			return
		}
		inner, _ := scope.Unwrap(a)
		again, via := scope.Unwrap(inner)
		if again != inner || via != "" {
			t.Fatalf("Unwrap not idempotent: %s -> %s -> %s (%q)", a, inner, again, via)
		}
		ci := scope.Classify(inner)
		if !ci.Global && (ci.Name != c.Name || c.Global || ci.Metadata != c.Metadata) {
			t.Fatalf("Classify(%s) = %+v but Classify(%s) = %+v", a, c, inner, ci)
		}
		if c.Global && !ci.Global {
			t.Fatalf("Classify(%s) is global but it embeds non-global %s", a, inner)
		}
		if c.Metadata && c.Global {
			t.Fatalf("metadata address %s classified global", a)
		}
	})
}

// FuzzCheckHost checks that CheckHost never panics, that a verdict always
// has a rule and a reason, that an allowed host is canonical (so the proxy
// resolves exactly what was judged), and that nothing the test scope has
// not granted is allowed at a non-global address.
func FuzzCheckHost(f *testing.F) {
	for _, h := range []string{"www.example.com", "127.0.0.1", "[::1]", "::1", "localhost", "0x7f.1", "２１３０７０６４３３",
		"127.0.0.2", "169.254.169.254", "[::ffff:a9fe:a9fe]", "a..b", "", "[fe80::1%25eth0]", "admin.example.com", "xn--a.com"} {
		f.Add(h, uint16(80))
		f.Add(h, uint16(9222))
	}
	s, err := scope.New(testConfigWithPorts)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		v := s.CheckHost(host, port)
		if v.Rule == "" || v.Reason == "" {
			t.Fatalf("CheckHost(%q, %d) = %+v: no rule or reason", host, port, v)
		}
		if !v.Allowed {
			return
		}
		if h, err := scope.CanonicalHost(v.Host); err != nil || h != v.Host {
			t.Fatalf("CheckHost(%q, %d) allowed non-canonical host %q (%q, %v)", host, port, v.Host, h, err)
		}
		if port == 0 || v.Class != "" && port == 9999 {
			t.Fatalf("CheckHost(%q, %d) allowed a refused port: %+v", host, port, v)
		}
		if v.Class == "loopback" && port != 8080 && port != 8443 && (v.Host != "127.0.0.3" || port == 5555) {
			t.Fatalf("CheckHost(%q, %d) allowed loopback at an ungranted port: %+v", host, port, v)
		}
		if v.Class == "metadata" {
			t.Fatalf("CheckHost(%q, %d) allowed metadata: %+v", host, port, v)
		}
	})
}
