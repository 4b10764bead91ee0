package scope_test

import (
	"errors"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    string // canonical String()
		host    string
		ip      string // URL.IP when the host is an IP literal
		wantErr error
	}{
		// Case, trailing dot, IDNA.
		{name: "uppercase scheme and host", in: "HTTP://WWW.Example.COM/Path", want: "http://www.example.com/Path", host: "www.example.com"},
		{name: "trailing dot", in: "http://example.com./", want: "http://example.com/", host: "example.com"},
		{name: "IDN to punycode", in: "http://bücher.example/", want: "http://xn--bcher-kva.example/", host: "xn--bcher-kva.example"},
		{name: "punycode kept", in: "http://XN--BCHER-KVA.example/", want: "http://xn--bcher-kva.example/", host: "xn--bcher-kva.example"},
		{name: "non-transitional sharp s", in: "http://faß.de/", want: "http://xn--fa-hia.de/", host: "xn--fa-hia.de"},
		{name: "bad punycode", in: "http://xn--a.com/", wantErr: scope.ErrIDNA},
		{name: "fullwidth digits and dots", in: "http://１２７．０．０．１/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "ideographic full stop", in: "http://example\u3002com/", want: "http://example.com/", host: "example.com"},
		{name: "fullwidth localhost", in: "http://ｌｏｃａｌｈｏｓｔ/", want: "http://localhost/", host: "localhost"},
		{name: "enclosed alphanumerics", in: "http://\u2460\u2461\u2466.0.0.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "soft hyphen dropped", in: "http://exam\u00adple.com/", want: "http://example.com/", host: "example.com"},
		{name: "host of only a soft hyphen", in: "http://\u00ad/", wantErr: scope.ErrEmptyHost},
		// Percent-encoding in the host.
		{name: "percent-encoded IPv4", in: "http://%31%32%37.0.0.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "percent-encoded letters", in: "http://%65xample.com/", want: "http://example.com/", host: "example.com"},
		{name: "percent-encoded UTF-8", in: "http://b%C3%BCcher.example/", want: "http://xn--bcher-kva.example/", host: "xn--bcher-kva.example"},
		{name: "percent-encoded space", in: "http://exa%20mple.com/", wantErr: scope.ErrForbiddenCodePoint},
		{name: "percent-encoded slash", in: "http://ex%2Fample.com/", wantErr: scope.ErrForbiddenCodePoint},
		{name: "invalid UTF-8", in: "http://%ff.com/", wantErr: scope.ErrIDNA},
		{name: "forbidden angle bracket", in: "http://a<b/", wantErr: scope.ErrForbiddenCodePoint},
		{name: "empty label", in: "http://a..b/", wantErr: scope.ErrInvalidLabel},
		// Legacy IPv4 spellings.
		{name: "decimal", in: "http://2130706433/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "hex", in: "http://0x7f000001/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "hex short", in: "http://0x7f.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "octal", in: "http://0177.0.0.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "short", in: "http://127.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "mixed", in: "http://0x7F.00.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "three parts", in: "http://1.2.65535/", want: "http://1.2.255.255/", host: "1.2.255.255", ip: "1.2.255.255"},
		{name: "IPv4 trailing dot", in: "http://127.0.0.2./", want: "http://127.0.0.2/", host: "127.0.0.2", ip: "127.0.0.2"},
		{name: "bare 0x", in: "http://0x/", want: "http://0.0.0.0/", host: "0.0.0.0", ip: "0.0.0.0"},
		{name: "decimal overflow", in: "http://4294967296/", wantErr: scope.ErrInvalidIPv4},
		{name: "huge decimal", in: "http://99999999999999999999999999/", wantErr: scope.ErrInvalidIPv4},
		{name: "hex overflow", in: "http://0x100000000/", wantErr: scope.ErrInvalidIPv4},
		{name: "byte overflow", in: "http://256.0.0.1/", wantErr: scope.ErrInvalidIPv4},
		{name: "last part overflow", in: "http://1.2.65536/", wantErr: scope.ErrInvalidIPv4},
		{name: "five parts", in: "http://1.2.3.4.5/", wantErr: scope.ErrInvalidIPv4},
		{name: "bad octal digit", in: "http://08.0.0.1/", wantErr: scope.ErrInvalidIPv4},
		{name: "numeric last label", in: "http://foo.123/", wantErr: scope.ErrInvalidIPv4},
		// Slashes, backslashes, userinfo.
		{name: "backslashes", in: `http:\\www.example.com\a\b`, want: "http://www.example.com/a/b", host: "www.example.com"},
		{name: "no slashes", in: "http:www.example.com/x", want: "http://www.example.com/x", host: "www.example.com"},
		{name: "one slash", in: "http:/www.example.com", want: "http://www.example.com/", host: "www.example.com"},
		{name: "many slashes", in: "https:////www.example.com", want: "https://www.example.com/", host: "www.example.com"},
		{name: "userinfo dropped", in: "http://user:pass@www.example.com/", want: "http://www.example.com/", host: "www.example.com"},
		{name: "userinfo hides IP", in: "http://allowed.example@127.0.0.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "last at wins", in: "http://a@b@127.0.0.1/", want: "http://127.0.0.1/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "backslash at", in: `http://127.0.0.1\@allowed.example/`, want: "http://127.0.0.1/@allowed.example/", host: "127.0.0.1", ip: "127.0.0.1"},
		{name: "query at", in: "http://evil.com?@allowed.com/", want: "http://evil.com/?@allowed.com/", host: "evil.com"},
		{name: "fragment at", in: "http://evil.com#@allowed.com/", want: "http://evil.com/#@allowed.com/", host: "evil.com"},
		{name: "credentials without host", in: "http://user@/", wantErr: scope.ErrEmptyHost},
		{name: "no host", in: "http:///", wantErr: scope.ErrEmptyHost},
		// Whitespace.
		{name: "tab and newline inside", in: "ht\ttp://exa\nmple.com/p\rq", want: "http://example.com/pq", host: "example.com"},
		{name: "leading and trailing controls", in: " \x00http://example.com/ \x01", want: "http://example.com/", host: "example.com"},
		// IPv6.
		{name: "IPv6 loopback", in: "http://[::1]/", want: "http://[::1]/", host: "[::1]", ip: "::1"},
		{name: "IPv6 uncompressed", in: "http://[0:0:0:0:0:0:0:1]:80/", want: "http://[::1]/", host: "[::1]", ip: "::1"},
		{name: "IPv6 embedded IPv4", in: "http://[::ffff:127.0.0.1]/", want: "http://[::ffff:7f00:1]/", host: "[::ffff:7f00:1]", ip: "::ffff:127.0.0.1"},
		{name: "IPv6 mapped hex", in: "http://[::FFFF:7F00:1]/", want: "http://[::ffff:7f00:1]/", host: "[::ffff:7f00:1]", ip: "::ffff:127.0.0.1"},
		{name: "IPv6 port", in: "http://[2001:DB8::1]:8080/", want: "http://[2001:db8::1]:8080/", host: "[2001:db8::1]", ip: "2001:db8::1"},
		{name: "IPv6 first longest zero run", in: "http://[1:0:0:2:0:0:0:3]/", want: "http://[1:0:0:2::3]/", host: "[1:0:0:2::3]", ip: "1:0:0:2::3"},
		{name: "IPv6 full", in: "http://[1:2:3:4:5:6:7:8]/", want: "http://[1:2:3:4:5:6:7:8]/", host: "[1:2:3:4:5:6:7:8]", ip: "1:2:3:4:5:6:7:8"},
		{name: "IPv6 zone id", in: "http://[fe80::1%25eth0]/", wantErr: scope.ErrZoneID},
		{name: "IPv6 unclosed", in: "http://[::1/", wantErr: scope.ErrInvalidIPv6},
		{name: "IPv6 two compressions", in: "http://[::1::2]/", wantErr: scope.ErrInvalidIPv6},
		{name: "IPv6 embedded leading zero", in: "http://[::ffff:127.0.0.01]/", wantErr: scope.ErrInvalidIPv6},
		{name: "IPv6 too many pieces", in: "http://[1:2:3:4:5:6:7:8:9]/", wantErr: scope.ErrInvalidIPv6},
		// Ports.
		{name: "default https port", in: "https://example.com:443/", want: "https://example.com/", host: "example.com"},
		{name: "default port with zeros", in: "http://example.com:0080/", want: "http://example.com/", host: "example.com"},
		{name: "ws default port", in: "ws://example.com:80/s", want: "ws://example.com/s", host: "example.com"},
		{name: "explicit port", in: "http://example.com:8080", want: "http://example.com:8080/", host: "example.com"},
		{name: "empty port", in: "http://example.com:/", want: "http://example.com/", host: "example.com"},
		{name: "port overflow", in: "http://example.com:65536/", wantErr: scope.ErrInvalidPort},
		{name: "port letters", in: "http://example.com:8x/", wantErr: scope.ErrInvalidPort},
		// Paths, queries, fragments.
		{name: "dot segments", in: "http://example.com/a/./b/../c", want: "http://example.com/a/c", host: "example.com"},
		{name: "encoded dot segments", in: "http://example.com/a/%2e%2E/x/.%2e", want: "http://example.com/", host: "example.com"},
		{name: "escaping", in: "http://example.com/a b?c d#e f", want: "http://example.com/a%20b?c%20d#e%20f", host: "example.com"},
		{name: "query without path", in: "http://example.com?x", want: "http://example.com/?x", host: "example.com"},
		{name: "empty query kept", in: "http://example.com/?", want: "http://example.com/?", host: "example.com"},
		// Other schemes.
		{name: "about blank", in: "about:blank", want: "about:blank"},
		{name: "javascript", in: "JavaScript:alert(1)", want: "javascript:alert(1)"},
		{name: "file", in: "file:///etc/passwd", want: "file:///etc/passwd"},
		{name: "no scheme", in: "www.example.com/x", wantErr: scope.ErrInvalidURL},
		{name: "relative", in: "/relative", wantErr: scope.ErrInvalidURL},
		{name: "empty", in: "", wantErr: scope.ErrInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := scope.ParseURL(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseURL(%q) error = %v, want %v", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tt.in, err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("ParseURL(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
			if u.Host != tt.host {
				t.Errorf("ParseURL(%q).Host = %q, want %q", tt.in, u.Host, tt.host)
			}
			gotIP := ""
			if u.IP.IsValid() {
				gotIP = u.IP.String()
			}
			if gotIP != tt.ip {
				t.Errorf("ParseURL(%q).IP = %q, want %q", tt.in, gotIP, tt.ip)
			}
		})
	}
}

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{name: "lowercase", in: "WWW.EXAMPLE.COM", want: "www.example.com"},
		{name: "trailing dot", in: "example.com.", want: "example.com"},
		{name: "IDN", in: "Bücher.Example", want: "xn--bcher-kva.example"},
		{name: "fullwidth", in: "ｅｘａｍｐｌｅ．ｃｏｍ", want: "example.com"},
		{name: "IPv4 decimal", in: "2130706434", want: "127.0.0.2"},
		{name: "IPv4 octal", in: "0177.0.0.02", want: "127.0.0.2"},
		{name: "bracketed IPv6", in: "[0::1]", want: "[::1]"},
		{name: "bare IPv6", in: "::1", want: "[::1]"},
		{name: "bare mapped IPv6", in: "::ffff:10.0.0.1", want: "[::ffff:a00:1]"},
		{name: "bare IPv6 zone", in: "fe80::1%eth0", wantErr: scope.ErrZoneID},
		{name: "localhost dot", in: "localhost.", want: "localhost"},
		{name: "underscore allowed", in: "a_b.example", want: "a_b.example"},
		{name: "wildcard character passes", in: "*.example.com", want: "*.example.com"},
		{name: "empty", in: "", wantErr: scope.ErrEmptyHost},
		{name: "space", in: "a b", wantErr: scope.ErrForbiddenCodePoint},
		{name: "port", in: "example.com:80", wantErr: scope.ErrInvalidIPv6},
		{name: "at sign", in: "a@b", wantErr: scope.ErrForbiddenCodePoint},
		{name: "leading dot", in: ".example.com", wantErr: scope.ErrInvalidLabel},
		{name: "only a dot", in: ".", wantErr: scope.ErrInvalidLabel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := scope.CanonicalHost(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("CanonicalHost(%q) = %q, %v; want error %v", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}
