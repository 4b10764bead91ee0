package scope

import (
	"fmt"
	"strings"
)

// Pattern is a compiled domain glob from allowed_domains or blocked_domains.
// Compile once with ParsePattern and match many canonical hosts.
type Pattern struct {
	raw       string   // as written
	canonical string   // canonical form, for display and tests
	all       bool     // bare "*": every host
	exact     string   // literal host (domain or IP); set when no '*' is present
	anyPrefix bool     // leading "*.": one or more labels before mid
	anySuffix bool     // trailing ".*": one or more labels after mid
	mid       []string // label patterns; a label may contain '*' (within-label wildcard)
}

// ParsePattern validates and compiles a domain glob. The pattern is
// canonicalised like a host (lowercase, IDNA to punycode, IPv4 spellings to
// dotted decimal, one trailing dot removed) before it is compiled, so
// "*.BÜCHER.example." and "*.xn--bcher-kva.example" are the same pattern.
// See the package documentation for the grammar.
func ParsePattern(p string) (*Pattern, error) {
	bad := func(why string) (*Pattern, error) {
		return nil, fmt.Errorf("%w: %q: %s", ErrInvalidPattern, p, why)
	}
	switch {
	case p == "":
		return bad("empty")
	case p == "*":
		return &Pattern{raw: p, canonical: "*", all: true}, nil
	case strings.Contains(p, "**"):
		return bad(`"**" is not a glob here; use "*." for any depth`)
	case strings.ContainsFunc(p, func(r rune) bool { return r <= 0x20 || r == 0x7f }):
		return bad("contains spaces or control characters")
	case strings.ContainsAny(p, "%"):
		return bad("percent-encoding is not allowed in patterns")
	case strings.Contains(p, "://"):
		return bad("a pattern is a host name, not a URL: leave out the scheme and the path")
	case strings.ContainsAny(p, "/?#"):
		return bad("a pattern is a host name: leave out the path, query and fragment")
	case strings.Contains(p, "@"):
		return bad("a pattern is a host name: leave out the user name")
	case strings.Count(p, ":") == 1:
		return bad("a pattern is a host name: leave out the port (allowed_ports lists ports)")
	}
	c, err := CanonicalHost(p)
	if err != nil {
		return bad(err.Error())
	}
	pat := &Pattern{raw: p, canonical: c}
	if !strings.Contains(c, "*") {
		pat.exact = c
		return pat, nil
	}
	if c[0] == '[' {
		return bad("wildcards do not apply to IP addresses")
	}
	labels := strings.Split(c, ".")
	if labels[0] == "*" && len(labels) > 1 {
		pat.anyPrefix = true
		labels = labels[1:]
	}
	if labels[len(labels)-1] == "*" && len(labels) > 1 {
		pat.anySuffix = true
		labels = labels[:len(labels)-1]
	}
	numeric := true
	for _, l := range labels {
		if strings.Contains(l, "*") && strings.HasPrefix(l, "xn--") {
			return bad("a wildcard cannot share a label with non-ASCII characters")
		}
		if _, ok := parseIPv4Number(strings.ReplaceAll(l, "*", "0")); !ok {
			numeric = false
		}
	}
	if numeric {
		return bad("wildcards do not apply to IP addresses; use an exact address and allow_private_cidrs")
	}
	pat.mid = labels
	return pat, nil
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.raw }

// Canonical returns the canonical form the pattern was compiled from.
func (p *Pattern) Canonical() string { return p.canonical }

// Match reports whether a canonical host (as returned by CanonicalHost or
// URL.Host) matches the pattern. IP-literal hosts match only an identical
// IP pattern or the bare "*".
func (p *Pattern) Match(host string) bool {
	if p.all {
		return host != ""
	}
	if p.exact != "" {
		return host == p.exact
	}
	if host == "" || host[0] == '[' || endsInNumber(host) {
		return false
	}
	labels := strings.Split(host, ".")
	m := len(p.mid)
	extra := len(labels) - m
	switch {
	case !p.anyPrefix && !p.anySuffix:
		return extra == 0 && matchLabels(p.mid, labels)
	case p.anyPrefix && !p.anySuffix:
		return extra >= 1 && matchLabels(p.mid, labels[extra:])
	case !p.anyPrefix && p.anySuffix:
		return extra >= 1 && matchLabels(p.mid, labels[:m])
	default:
		for k := 1; k < extra; k++ {
			if matchLabels(p.mid, labels[k:k+m]) {
				return true
			}
		}
		return false
	}
}

func matchLabels(pats, labels []string) bool {
	for i, p := range pats {
		if !matchLabel(p, labels[i]) {
			return false
		}
	}
	return true
}

// matchLabel matches one label against a label pattern in which '*' stands
// for any run of characters within the label. A pattern label that is only
// "*" needs a non-empty label.
func matchLabel(pat, label string) bool {
	if pat == "*" {
		return label != ""
	}
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == label
	}
	if !strings.HasPrefix(label, parts[0]) {
		return false
	}
	label = label[len(parts[0]):]
	lastPart := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(label, mid)
		if i < 0 {
			return false
		}
		label = label[i+len(mid):]
	}
	return strings.HasSuffix(label, lastPart)
}

// Match reports whether a host matches a domain glob. Both are canonicalised
// first; an invalid pattern or host matches nothing. For many matches,
// compile the pattern once with ParsePattern.
func Match(pattern, host string) bool {
	p, err := ParsePattern(pattern)
	if err != nil {
		return false
	}
	h, err := CanonicalHost(host)
	if err != nil {
		return false
	}
	return p.Match(h)
}
