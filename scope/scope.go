package scope

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
)

// Config is the manifest's [browser.scope] table. The zero Config allows
// nothing: with no allowed_domains and allow_external false, no URL may be
// navigated (deny by default).
type Config struct {
	// AllowedDomains are domain globs (see the package documentation) whose
	// hosts may be visited.
	AllowedDomains []string
	// BlockedDomains are domain globs that are never visited; a block wins
	// over every allowance.
	BlockedDomains []string
	// AllowExternal allows hosts that match no AllowedDomains entry. They
	// must still not be blocked, and must still not be non-global addresses.
	AllowExternal bool
	// AllowPrivateCIDRs are CIDR prefixes ("127.0.0.1/32", "::1/128") whose
	// non-global addresses may be reached; they are the only way to reach
	// loopback, private, link-local and other non-global space. A grant
	// lifts only the address-class block: the host must still be allowed by
	// AllowedDomains or AllowExternal. Cloud metadata addresses can never be
	// granted.
	AllowPrivateCIDRs []string
}

// Rules that decide a Verdict without naming a configuration entry. The
// other rules are formatted as `<field> "<entry>"` (for example
// `blocked_domains "*.evil.com"`) or `address class <name>`.
const (
	// RuleParse denies a URL that does not parse: what cannot be read
	// cannot be judged (fail closed).
	RuleParse = "parse"
	// RuleAboutBlank allows exactly "about:blank", which makes no request.
	RuleAboutBlank = "about:blank"
	// RuleScheme denies every scheme but http, https, ws and wss.
	RuleScheme = "scheme"
	// RuleNoScope denies everything when allowed_domains is empty and
	// allow_external is false: a manifest without a scope navigates nowhere.
	RuleNoScope = "no scope"
	// RuleNotAllowed denies a host that no allowed_domains entry matches
	// when allow_external is false.
	RuleNotAllowed = "not in allowed_domains"
	// RuleAllowExternal allows a host outside allowed_domains because
	// allow_external is true.
	RuleAllowExternal = "allow_external"
	// RuleNilScope denies everything checked against a nil *Scope, so a
	// missing scope fails closed instead of panicking.
	RuleNilScope = "nil scope"
)

// Verdict is the outcome of a scope check: a value, not an error, so that a
// denial can be reported, logged and recorded like any other decision.
type Verdict struct {
	// Allowed is true only when a rule positively allowed the URL.
	Allowed bool
	// URL is the canonical URL as serialised after parsing ("" if the
	// input did not parse).
	URL string
	// Host is the canonical host ("" if none).
	Host string
	// Rule names the rule that decided, e.g. `allowed_domains "*.example.com"`.
	Rule string
	// Reason is one human sentence saying why, naming the host or address.
	Reason string
	// Class is the address class of the host when it is an IP literal or a
	// localhost name, and "" for other domain names (whose addresses are
	// judged when they are resolved).
	Class string
}

// LogValue lets a Verdict be logged as one structured slog group.
func (v Verdict) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("allowed", v.Allowed),
		slog.String("url", v.URL),
		slog.String("host", v.Host),
		slog.String("class", v.Class),
		slog.String("rule", v.Rule),
		slog.String("reason", v.Reason),
	)
}

// grant is one compiled allow_private_cidrs entry.
type grant struct {
	prefix netip.Prefix
	raw    string
}

// Scope decides whether URLs may be visited. It is immutable after New and
// safe for concurrent use.
type Scope struct {
	allowed       []*Pattern
	blocked       []*Pattern
	allowExternal bool
	grants        []grant
}

// New validates cfg and compiles it. Every bad entry is reported, each as an
// *EntryError naming its field and the entry, joined with errors.Join.
func New(cfg Config) (*Scope, error) {
	s := &Scope{allowExternal: cfg.AllowExternal}
	var errs []error
	compile := func(field string, list []string) []*Pattern {
		out := make([]*Pattern, 0, len(list))
		for i, p := range list {
			pat, err := ParsePattern(p)
			if err != nil {
				errs = append(errs, &EntryError{Field: field, Index: i, Entry: p, Err: err})
				continue
			}
			out = append(out, pat)
		}
		return out
	}
	s.allowed = compile("allowed_domains", cfg.AllowedDomains)
	s.blocked = compile("blocked_domains", cfg.BlockedDomains)
	for i, c := range cfg.AllowPrivateCIDRs {
		g, err := parseGrant(c)
		if err != nil {
			errs = append(errs, &EntryError{Field: "allow_private_cidrs", Index: i, Entry: c, Err: err})
			continue
		}
		s.grants = append(s.grants, g)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func parseGrant(c string) (grant, error) {
	p, err := netip.ParsePrefix(c)
	if err != nil {
		return grant{}, fmt.Errorf("%w: %v", ErrInvalidCIDR, err)
	}
	if m := p.Masked(); m != p {
		return grant{}, fmt.Errorf("%w: host bits are set; did you mean %q?", ErrInvalidCIDR, m.String())
	}
	if p.IsSingleIP() && IsMetadata(p.Addr()) {
		return grant{}, fmt.Errorf("%w: %s", ErrMetadataGrant, p.Addr())
	}
	return grant{prefix: p, raw: c}, nil
}

// Check decides whether rawURL may be visited. The order is: parse (a URL
// that does not parse is denied); about:blank is allowed; the scheme must be
// http, https, ws or wss; blocked_domains deny; an empty scope denies
// everything; a non-global IP literal or localhost name is denied unless an
// allow_private_cidrs entry grants it (metadata addresses never); then
// allowed_domains allow, else allow_external allows, else deny.
//
// Check judges the URL alone. The addresses a domain name resolves to are
// judged where it is resolved, with CheckAddr.
func (s *Scope) Check(rawURL string) Verdict {
	u, err := ParseURL(rawURL)
	if err != nil {
		return Verdict{Rule: RuleParse, Reason: fmt.Sprintf("%s does not parse as a URL: %v", quoteShort(rawURL), err)}
	}
	v := Verdict{URL: u.String(), Host: u.Host}
	if s == nil {
		return v.deny(RuleNilScope, "no scope is configured, so %s may not be visited", v.URL)
	}
	if u.IsAboutBlank() {
		return v.allow(RuleAboutBlank, "about:blank is an empty page that makes no request")
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return v.deny(RuleScheme, "%s is refused: scheme %q is not http, https, ws or wss", quoteShort(v.URL), u.Scheme)
	}
	if p := firstMatch(s.blocked, u.Host); p != nil {
		return v.deny(entryRule("blocked_domains", p.raw), "host %s matches blocked_domains %q, and a blocked domain is never visited", u.Host, p.raw)
	}
	if len(s.allowed) == 0 && !s.allowExternal {
		return v.deny(RuleNoScope, "host %s is refused: the scope has no allowed_domains and allow_external is false, so nothing may be navigated", u.Host)
	}
	grantRule, grantWhy := "", ""
	if u.IP.IsValid() || isLocalhost(u.Host) {
		var denied *Verdict
		grantRule, grantWhy, denied = s.checkAddressClass(&v, u)
		if denied != nil {
			return *denied
		}
	}
	if p := firstMatch(s.allowed, u.Host); p != nil {
		if grantRule != "" {
			return v.allow(grantRule, "host %s %s and matches allowed_domains %q", u.Host, grantWhy, p.raw)
		}
		return v.allow(entryRule("allowed_domains", p.raw), "host %s matches allowed_domains %q", u.Host, p.raw)
	}
	if s.allowExternal {
		if grantRule != "" {
			return v.allow(grantRule, "host %s %s and allow_external is true", u.Host, grantWhy)
		}
		return v.allow(RuleAllowExternal, "host %s matches no allowed_domains entry, and allow_external is true", u.Host)
	}
	return v.deny(RuleNotAllowed, "host %s matches no allowed_domains entry and allow_external is false", u.Host)
}

// checkAddressClass applies the address-class block to an IP-literal or
// localhost host. It returns the grant that lifted the block (rule and a
// clause for the reason), or the denial.
func (s *Scope) checkAddressClass(v *Verdict, u *URL) (rule, why string, denied *Verdict) {
	if !u.IP.IsValid() {
		// Chromium answers localhost names with 127.0.0.1 and ::1 itself and
		// may dial either, so a grant must cover both.
		v.Class = "loopback"
		g4, ok4 := s.grantFor(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
		g6, ok6 := s.grantFor(netip.IPv6Loopback())
		if !ok4 || !ok6 {
			d := v.deny("address class loopback", "host %s is a name Chromium maps to loopback (127.0.0.1 and ::1) without DNS, and allow_private_cidrs does not cover both addresses", u.Host)
			return "", "", &d
		}
		rule = entryRule("allow_private_cidrs", g4)
		if g6 != g4 {
			rule += fmt.Sprintf(", %q", g6)
		}
		return rule, "is a localhost name granted by " + rule, nil
	}
	c := Classify(u.IP)
	v.Class = c.Name
	if c.Global {
		return "", "", nil
	}
	what := describeAddr(u.Host, c)
	if c.Metadata {
		d := v.deny("address class metadata", "host %s is a cloud metadata address (%s), which can never be granted", what, c.Ref)
		return "", "", &d
	}
	g, ok := s.grantFor(u.IP)
	if !ok {
		d := v.deny("address class "+c.Name, "host %s is a %s address (%s) and no allow_private_cidrs entry contains it", what, c.Name, c.Ref)
		return "", "", &d
	}
	rule = entryRule("allow_private_cidrs", g)
	return rule, fmt.Sprintf("is a %s address granted by %s", c.Name, rule), nil
}

// CheckAddr decides whether an address may be connected to, by class and
// grants alone: global addresses are allowed, metadata addresses never, and
// other non-global addresses only when an allow_private_cidrs entry contains
// them. It is meant for the point where a domain name has been resolved and
// the address about to be dialled must be judged.
func (s *Scope) CheckAddr(a netip.Addr) Verdict {
	c := Classify(a)
	v := Verdict{Host: a.String(), Class: c.Name}
	if a.Is6() {
		v.Host = "[" + formatIPv6(a.WithZone("")) + "]"
	}
	what := describeAddr(v.Host, c)
	switch {
	case s == nil:
		return v.deny(RuleNilScope, "no scope is configured, so %s may not be reached", what)
	case c.Metadata:
		return v.deny("address class metadata", "address %s is a cloud metadata address (%s), which can never be granted", what, c.Ref)
	case c.Global:
		return v.allow("address class "+c.Name, "address %s is globally reachable", what)
	}
	if g, ok := s.grantFor(a.WithZone("")); ok {
		return v.allow(entryRule("allow_private_cidrs", g), "address %s is a %s address granted by allow_private_cidrs %q", what, c.Name, g)
	}
	return v.deny("address class "+c.Name, "address %s is a %s address (%s) and no allow_private_cidrs entry contains it", what, c.Name, c.Ref)
}

// DomainSets returns which of the sets "allowed" and "blocked" a host
// matches, for the parents of its Cedar Web::Domain entity. The host is
// canonicalised first; a host that does not canonicalise belongs to no set.
func (s *Scope) DomainSets(host string) []string {
	if s == nil {
		return nil
	}
	h, err := CanonicalHost(host)
	if err != nil {
		return nil
	}
	var sets []string
	if firstMatch(s.allowed, h) != nil {
		sets = append(sets, "allowed")
	}
	if firstMatch(s.blocked, h) != nil {
		sets = append(sets, "blocked")
	}
	return sets
}

func (s *Scope) grantFor(a netip.Addr) (string, bool) {
	for _, g := range s.grants {
		if g.prefix.Contains(a) || a.Is4In6() && g.prefix.Contains(a.Unmap()) {
			return g.raw, true
		}
	}
	return "", false
}

func firstMatch(pats []*Pattern, host string) *Pattern {
	for _, p := range pats {
		if p.Match(host) {
			return p
		}
	}
	return nil
}

func entryRule(field, entry string) string { return fmt.Sprintf("%s %q", field, entry) }

// describeAddr names an address and, when it embeds another, the embedded
// one: "[::ffff:7f00:1] (ipv4-mapped 127.0.0.1)".
func describeAddr(host string, c Class) string {
	if c.Via == "" {
		return host
	}
	return fmt.Sprintf("%s (%s %s)", host, c.Via, c.Addr)
}

func (v Verdict) allow(rule, format string, args ...any) Verdict {
	v.Allowed, v.Rule, v.Reason = true, rule, fmt.Sprintf(format, args...)
	return v
}

func (v Verdict) deny(rule, format string, args ...any) Verdict {
	v.Allowed, v.Rule, v.Reason = false, rule, fmt.Sprintf(format, args...)
	return v
}

// quoteShort quotes s for a reason, cut to a length fit for a log line.
func quoteShort(s string) string {
	const maxLen = 200
	if len(s) > maxLen {
		return fmt.Sprintf("%q...", strings.ToValidUTF8(s[:maxLen], ""))
	}
	return fmt.Sprintf("%q", s)
}
