package scope

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is WHATWG URL's "domain to ASCII" (UTS #46 ToASCII with
// CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional_Processing=false,
// VerifyDnsLength=false), which is also what Chromium's ICU-based host
// canonicaliser applies. Non-transitional matters for security: "faß.de"
// must stay distinct from "fass.de".
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.BidiRule(),
	idna.VerifyDNSLength(false),
)

// CanonicalHost returns the canonical form of a host exactly as the URL
// parser produces it: percent-decoded, IDNA-mapped to lowercase ASCII
// (punycode), legacy IPv4 spellings rewritten to dotted decimal, IPv6 in
// brackets in compressed lowercase form, and one trailing dot removed.
//
// Besides the bracketed form, a bare IPv6 literal ("::1") is accepted for
// convenience in configuration; the result is always bracketed ("[::1]").
// The input must not carry a port, userinfo or surrounding spaces.
func CanonicalHost(host string) (string, error) {
	h, _, err := parseHost(host, true)
	return h, err
}

// parseHost implements the WHATWG host parser for special schemes (minus the
// opaque-host branch), returning the canonical host and, when the host is an
// IP literal, its address.
func parseHost(in string, bareIPv6 bool) (string, netip.Addr, error) {
	if in == "" {
		return "", netip.Addr{}, ErrEmptyHost
	}
	if in[0] == '[' {
		if len(in) < 2 || in[len(in)-1] != ']' {
			return "", netip.Addr{}, fmt.Errorf("%w: %q lacks its closing bracket", ErrInvalidIPv6, in)
		}
		a, err := parseIPv6(in[1 : len(in)-1])
		if err != nil {
			return "", netip.Addr{}, err
		}
		return "[" + formatIPv6(a) + "]", a, nil
	}
	if bareIPv6 && strings.IndexByte(in, ':') >= 0 {
		a, err := parseIPv6(in)
		if err != nil {
			return "", netip.Addr{}, err
		}
		return "[" + formatIPv6(a) + "]", a, nil
	}
	decoded := percentDecode(in)
	if !utf8.ValidString(decoded) {
		return "", netip.Addr{}, fmt.Errorf("%w: %q is not valid UTF-8 after percent-decoding", ErrIDNA, in)
	}
	ascii, err := domainToASCII(decoded)
	if err != nil {
		return "", netip.Addr{}, fmt.Errorf("%w: %q: %v", ErrIDNA, in, err)
	}
	if ascii == "" {
		return "", netip.Addr{}, fmt.Errorf("%w: %q maps to nothing", ErrEmptyHost, in)
	}
	if i := strings.IndexFunc(ascii, isForbiddenDomainRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(ascii[i:])
		return "", netip.Addr{}, fmt.Errorf("%w: %q in %q", ErrForbiddenCodePoint, r, in)
	}
	if endsInNumber(ascii) {
		a, err := parseIPv4(ascii)
		if err != nil {
			return "", netip.Addr{}, err
		}
		return a.String(), a, nil
	}
	ascii = strings.TrimSuffix(ascii, ".")
	if ascii == "" || strings.HasPrefix(ascii, ".") || strings.HasSuffix(ascii, ".") || strings.Contains(ascii, "..") {
		return "", netip.Addr{}, fmt.Errorf("%w: %q", ErrInvalidLabel, in)
	}
	return ascii, netip.Addr{}, nil
}

// domainToASCII applies UTS #46 ToASCII, with WHATWG URL's fast path: an ASCII
// domain none of whose labels starts with "xn--" is only lowercased (UTS #46
// would do exactly that to it, with UseSTD3ASCIIRules=false).
func domainToASCII(s string) (string, error) {
	if isASCII(s) {
		lower := strings.ToLower(s)
		if !strings.HasPrefix(lower, "xn--") && !strings.Contains(lower, ".xn--") {
			return lower, nil
		}
	}
	return idnaProfile.ToASCII(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isForbiddenDomainRune reports WHATWG URL's forbidden domain code points:
// the forbidden host code points, C0 controls, '%' and DEL.
func isForbiddenDomainRune(r rune) bool {
	if r <= 0x20 || r == 0x7f {
		return true
	}
	switch r {
	case '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|', '%':
		return true
	}
	return false
}

// percentDecode decodes %XX escapes byte-wise, leaving malformed ones as they
// are (WHATWG "percent-decode").
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isLocalhost reports whether a canonical host is one that Chromium maps to
// loopback by itself, without asking DNS: "localhost" and any name under
// ".localhost" (RFC 6761 section 6.3). Unicode look-alikes and "localhost."
// arrive here already canonicalised to these forms.
func isLocalhost(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// IsLocalhost reports whether a canonical host (Verdict.Host,
// CanonicalHost) is a localhost name, which Chromium connects to 127.0.0.1
// and ::1 without asking DNS.
func IsLocalhost(host string) bool { return isLocalhost(host) }
