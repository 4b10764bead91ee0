package scope

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// URL is a URL parsed the way Chromium (and WHATWG URL) parse it, reduced to
// what a scope decision and a canonical re-serialisation need. Userinfo is
// parsed and dropped: it never decides where a request goes, and dropping it
// keeps credentials out of navigations, logs and evidence.
type URL struct {
	// Scheme is lowercase, without the ':'.
	Scheme string
	// Host is the canonical host (see CanonicalHost); empty for schemes
	// without a parsed authority (about, data, javascript, file, ...).
	Host string
	// Port is the decimal port without leading zeros, or "" when absent or
	// equal to the scheme's default (80 for http/ws, 443 for https/wss).
	Port string
	// IP is the address when Host is an IP literal, and the zero Addr
	// otherwise.
	IP netip.Addr
	// Path is the canonical path of a special-scheme URL: backslashes turned
	// into slashes, dot segments resolved, unsafe bytes percent-encoded.
	Path string
	// Query is the query without its '?', percent-encoded as WHATWG does.
	Query string
	// Fragment is the fragment without its '#'.
	Fragment string
	// Opaque is everything after "scheme:" for schemes that are not parsed
	// further (about:, data:, javascript:, file:, blob:, ...).
	Opaque string

	hasQuery, hasFragment bool
}

// specialPorts holds WHATWG URL's special schemes and their default ports
// ("" for file, which has none).
var specialPorts = map[string]string{
	"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "file": "",
}

// ParseURL parses an absolute URL as Chromium does for special schemes, not
// as net/url does: leading and trailing C0 controls and spaces are stripped,
// TAB/LF/CR are removed anywhere, the scheme is case-insensitive, '\' counts
// as '/', any number of slashes (even none: "http:host") may follow the
// scheme, userinfo up to the last '@' of the authority is dropped, and the
// host is canonicalised (percent-decoding, IDNA, legacy IPv4 forms, IPv6).
//
// Schemes other than http, https, ws, wss and ftp are recognised but not
// parsed further: their remainder is kept in Opaque.
func ParseURL(raw string) (*URL, error) {
	s := cleanInput(raw)
	scheme, rest, ok := splitScheme(s)
	if !ok {
		return nil, fmt.Errorf("%w: %q has no scheme", ErrInvalidURL, raw)
	}
	u := &URL{Scheme: scheme}
	defPort, special := specialPorts[scheme]
	if !special || scheme == "file" {
		u.Opaque = rest
		return u, nil
	}
	rest = strings.TrimLeft(rest, `/\`)
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	hadUserinfo := false
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
		hadUserinfo = true
	}
	hostPart, port, hasPort := splitHostPort(authority)
	if hostPart == "" {
		if hadUserinfo {
			return nil, fmt.Errorf("%w: %q has credentials but no host", ErrEmptyHost, raw)
		}
		return nil, fmt.Errorf("%w: %q", ErrEmptyHost, raw)
	}
	host, ip, err := parseHost(hostPart, false)
	if err != nil {
		return nil, err
	}
	u.Host, u.IP = host, ip
	if hasPort {
		p, err := parsePort(port)
		if err != nil {
			return nil, err
		}
		if p != defPort {
			u.Port = p
		}
	}
	u.parseTail(tail)
	return u, nil
}

// cleanInput strips leading and trailing C0 controls and spaces, and removes
// every ASCII TAB, LF and CR, as the WHATWG URL parser does first.
func cleanInput(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// splitScheme returns the lowercased scheme and what follows its ':'.
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// splitHostPort splits at the first ':' outside brackets, as the WHATWG host
// state does.
func splitHostPort(a string) (host, port string, hasPort bool) {
	inBrackets := false
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				return a[:i], a[i+1:], true
			}
		}
	}
	return a, "", false
}

// parsePort returns the canonical decimal port ("" for an empty port).
func parsePort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if !allDigits(p) {
		return "", fmt.Errorf("%w: %q", ErrInvalidPort, p)
	}
	p = strings.TrimLeft(p, "0")
	if p == "" {
		return "0", nil
	}
	if len(p) > 5 {
		return "", fmt.Errorf("%w: %q exceeds 65535", ErrInvalidPort, p)
	}
	n, _ := strconv.Atoi(p)
	if n > 65535 {
		return "", fmt.Errorf("%w: %q exceeds 65535", ErrInvalidPort, p)
	}
	return p, nil
}

// parseTail fills Path, Query and Fragment from what follows the authority.
func (u *URL) parseTail(tail string) {
	if i := strings.IndexByte(tail, '#'); i >= 0 {
		u.Fragment, u.hasFragment = percentEncode(tail[i+1:], fragmentSet), true
		tail = tail[:i]
	}
	if i := strings.IndexByte(tail, '?'); i >= 0 {
		u.Query, u.hasQuery = percentEncode(tail[i+1:], specialQuerySet), true
		tail = tail[:i]
	}
	u.Path = canonicalPath(tail)
}

// canonicalPath turns '\' into '/', resolves "." and ".." segments
// (including their percent-encoded spellings) and percent-encodes bytes in
// the WHATWG path percent-encode set. The result always starts with '/'.
func canonicalPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if p == "" || p == "/" {
		return "/"
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch lower := strings.ToLower(seg); lower {
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, percentEncode(seg, pathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}

// Percent-encode sets from WHATWG URL, beyond C0 controls and bytes above
// 0x7E, which all of them include.
const (
	fragmentSet     = " \"<>`"
	specialQuerySet = " \"#<>'"
	pathSet         = " \"#<>?`{}"
)

func percentEncode(s, set string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i], set) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c, set) {
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func needsEscape(c byte, set string) bool {
	return c < 0x20 || c > 0x7e || strings.IndexByte(set, c) >= 0
}

// IsAboutBlank reports whether the URL is exactly "about:blank" (scheme
// compared case-insensitively). Variants with a query or fragment are not
// treated as blank: the allowance is kept as narrow as possible.
func (u *URL) IsAboutBlank() bool {
	return u.Scheme == "about" && u.Opaque == "blank"
}

// String serialises the URL canonically: scheme, "://", host, a
// non-default port, path, query and fragment; "scheme:opaque" for schemes
// that are not parsed further. Userinfo is never included.
func (u *URL) String() string {
	if u.Host == "" {
		return u.Scheme + ":" + u.Opaque
	}
	var b strings.Builder
	b.Grow(len(u.Scheme) + len(u.Host) + len(u.Path) + len(u.Query) + len(u.Fragment) + 12)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(u.Host)
	if u.Port != "" {
		b.WriteByte(':')
		b.WriteString(u.Port)
	}
	b.WriteString(u.Path)
	if u.hasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.hasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}
