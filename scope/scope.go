package scope

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
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
	// AskExternal (manifest key ask_external, or default_action = "ask")
	// marks a public host outside AllowedDomains as one a human may be
	// asked about, instead of one refused outright: Check still denies it,
	// with Verdict.Ask set, and only the gate's decision on a navigate
	// turns that denial into a call held for a human. A public host is a
	// domain name or a globally reachable IP literal; a blocked domain, a
	// non-global address (granted or not), a localhost name and a port
	// outside AllowedPorts are never askable. It has no effect with
	// AllowExternal, which allows such hosts already.
	AskExternal bool
	// AllowPrivateCIDRs are CIDR prefixes ("127.0.0.1/32", "::1/128") whose
	// non-global addresses may be reached; they are the only way to reach
	// loopback, private, link-local and other non-global space. An entry
	// may be limited to ports: "127.0.0.1/32 port 8080" or
	// "10.0.0.0/8 ports 80,443". A grant lifts only the address-class
	// block: the host must still be allowed by AllowedDomains or
	// AllowExternal. Cloud metadata addresses can never be granted.
	AllowPrivateCIDRs []string
	// DenyAddrPorts are endpoints that are refused whatever the grants and
	// allow lists say. browsergate puts its own listeners here (the
	// DevTools port of a browser it drives, the egress proxy's port), so
	// that a page can never drive the browser or loop through the proxy
	// even when a broad grant covers loopback. An entry with an unspecified
	// address ("0.0.0.0:9222", "[::]:9222") denies that port on every
	// address, as a server listening there is reachable on every address.
	// An entry on one address ("127.0.0.1:9222") denies that address and
	// the unspecified ones (a connection to 0.0.0.0 reaches loopback), not
	// the port on other addresses. It is not a manifest key: the daemon
	// fills it.
	DenyAddrPorts []netip.AddrPort
	// AllowedPorts are the ports (entries "443" or ranges "8000-8999") that
	// hosts may be reached on unless a private grant covers them; empty
	// means DefaultAllowedPorts (80 and 443). The default port policy keeps
	// an agent from using an allowed host to reach services other than the
	// web site (mail on 25, SSH on 22, an admin console on 8443). Hosts whose
	// address an allow_private_cidrs entry lifts are governed by that
	// grant's own port list instead (every port when it names none), since
	// the grant is the operator's explicit statement about that address.
	AllowedPorts []string
	// DomainSets are named sets of domain globs (manifest key domain_sets)
	// that Cedar policies can test with `resource.url_domain in
	// Web::DomainSet::"<name>"`. They grant nothing: only policies read
	// them. "allowed" and "blocked" are reserved for the two lists above.
	DomainSets map[string][]string
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
	// RulePort denies port 0, which no connection can be made to: a caller
	// that passes it has lost the real port, and guessing would be unsafe.
	RulePort = "port"
	// RuleAllowedPorts denies a host, allowed otherwise, on a port outside
	// Config.AllowedPorts (80 and 443 by default).
	RuleAllowedPorts = "allowed_ports"
	// RuleAskExternal denies a public host outside allowed_domains that
	// Config.AskExternal lets a human be asked about (Verdict.Ask).
	RuleAskExternal = "not in allowed_domains (ask_external)"
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
	// Port is the port judged: the URL's explicit or default port for
	// Check, the given port for CheckHost and CheckAddrPort, 0 when there
	// is none (about:blank, other schemes, CheckAddr).
	Port uint16
	// Rule names the rule that decided, e.g. `allowed_domains "*.example.com"`.
	Rule string
	// Reason is one human sentence saying why, naming the host or address.
	Reason string
	// Class is the address class of the host when it is an IP literal or a
	// localhost name, and "" for other domain names (whose addresses are
	// judged when they are resolved).
	Class string
	// Ask is true when the host is a public one outside allowed_domains
	// and the scope asks about such hosts (Config.AskExternal): the URL is
	// denied (Allowed is false, rule RuleAskExternal), but a human may
	// approve a navigate to it. Nothing else is ever askable. A caller
	// that lifts the denial for an origin a human approved keeps Ask set
	// on the Verdict it allows, so that it still reads as outside
	// allowed_domains.
	Ask bool
}

// LogValue lets a Verdict be logged as one structured slog group.
func (v Verdict) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("allowed", v.Allowed),
		slog.String("url", v.URL),
		slog.String("host", v.Host),
		slog.Int("port", int(v.Port)),
		slog.String("class", v.Class),
		slog.Bool("ask", v.Ask),
		slog.String("rule", v.Rule),
		slog.String("reason", v.Reason),
	)
}

// Scope decides whether URLs may be visited. It is immutable after New and
// safe for concurrent use.
type Scope struct {
	allowed       []*Pattern
	blocked       []*Pattern
	allowExternal bool
	askExternal   bool
	grants        []grant
	deny          []netip.AddrPort
	denyNets      []DeniedNetwork // WithDeniedNetworks
	ports         portPolicy
	sets          []namedSet // sorted by name
}

// namedSet is one compiled DomainSets entry.
type namedSet struct {
	name string
	pats []*Pattern
}

// New validates cfg and compiles it. Every bad entry is reported, each as an
// *EntryError naming its field and the entry, joined with errors.Join.
func New(cfg Config) (*Scope, error) {
	s := &Scope{allowExternal: cfg.AllowExternal, askExternal: cfg.AskExternal && !cfg.AllowExternal}
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
	s.deny, errs = appendDenied(nil, errs, cfg.DenyAddrPorts)
	for _, name := range slices.Sorted(maps.Keys(cfg.DomainSets)) {
		field := "domain_sets." + name
		if !ValidSetName(name) {
			errs = append(errs, &EntryError{Field: field, Index: -1, Entry: name, Err: fmt.Errorf("%w: a set name is lowercase letters, digits, '_' and '-', and not \"allowed\" or \"blocked\"", ErrInvalidPattern)})
			continue
		}
		s.sets = append(s.sets, namedSet{name: name, pats: compile(field, cfg.DomainSets[name])})
	}
	ports := cfg.AllowedPorts
	s.ports.text = strings.Join(ports, ", ")
	if len(ports) == 0 {
		ports = DefaultAllowedPorts
		s.ports.text = strings.Join(ports, ", ") + " (the default)"
	}
	for i, p := range ports {
		r, err := ParsePortRange(p)
		if err != nil {
			errs = append(errs, &EntryError{Field: "allowed_ports", Index: i, Entry: p, Err: err})
			continue
		}
		s.ports.ranges = append(s.ports.ranges, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// appendDenied compiles DenyAddrPorts entries onto deny, reporting each
// invalid one (no address, or port 0) as an *EntryError in errs.
func appendDenied(deny []netip.AddrPort, errs []error, aps []netip.AddrPort) ([]netip.AddrPort, []error) {
	for i, d := range aps {
		if !d.IsValid() || d.Port() == 0 {
			errs = append(errs, &EntryError{Field: "deny_addr_ports", Index: i, Entry: d.String(), Err: fmt.Errorf("%w: an endpoint needs an address and a port in 1-65535", ErrInvalidPort)})
			continue
		}
		deny = append(deny, netip.AddrPortFrom(d.Addr().WithZone("").Unmap(), d.Port()))
	}
	return deny, errs
}

// WithDenied returns a copy of s that also refuses the endpoints aps, as if
// they had been in Config.DenyAddrPorts, without compiling the rest of the
// configuration again. The daemon compiles a manifest's scope once, at
// load, and learns its own listeners (the DevTools port of the browser it
// starts, the egress proxy's port) only later; s itself is unchanged, so
// every holder of it keeps the scope it had. Every invalid endpoint (no
// address, or port 0) is reported, each an *EntryError wrapping
// ErrInvalidPort, and then no scope is returned: a listener the daemon
// could not name must not be left reachable. WithDenied on a nil Scope
// returns nil, which denies everything already.
func (s *Scope) WithDenied(aps ...netip.AddrPort) (*Scope, error) {
	if s == nil {
		return nil, nil
	}
	deny, errs := appendDenied(slices.Clip(s.deny), nil, aps)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := *s
	c.deny = deny
	return &c, nil
}

// Check decides whether rawURL may be visited. The order is: parse (a URL
// that does not parse is denied); about:blank is allowed; the scheme must be
// http, https, ws or wss; then the host and the URL's port (explicit, or 80
// and 443 by scheme) are judged as CheckHost judges them.
//
// Check judges the URL alone. The addresses a domain name resolves to are
// judged where it is resolved, with CheckAddrPort.
func (s *Scope) Check(rawURL string) Verdict {
	u, err := ParseURL(rawURL)
	if err != nil {
		return Verdict{Rule: RuleParse, Reason: fmt.Sprintf("%s does not parse as a URL: %v", quoteShort(rawURL), err)}
	}
	v := Verdict{URL: u.String(), Host: u.Host, Port: urlPort(u)}
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
	return s.judgeHost(v, u.IP)
}

// CheckHost judges a host name or IP literal and a port as a proxy sees
// them (the host:port of a CONNECT, or the Host of an absolute-form
// request): the host is canonicalised as the URL parser does (a bare or
// bracketed IPv6 literal is accepted, a host that does not canonicalise is
// denied with rule "parse"); then blocked_domains deny; an empty scope
// denies everything; an IP literal or localhost name is judged by
// DenyAddrPorts, its address class and the port-limited grants; then
// allowed_domains allow, else allow_external allows, else deny.
//
// An allowed domain name is not yet safe to dial: the proxy must resolve it
// once, judge every answer with CheckAddrPort, and dial only a checked
// address. A resolved answer set is acceptable only if every address in it
// passes; one denied answer denies the request, since the browser (or a
// rebinding resolver) could otherwise be steered to it.
func (s *Scope) CheckHost(host string, port uint16) Verdict {
	h, ip, err := parseHost(host, true)
	if err != nil {
		return Verdict{Port: port, Rule: RuleParse, Reason: fmt.Sprintf("host %s does not parse: %v", quoteShort(host), err)}
	}
	v := Verdict{Host: h, Port: port}
	switch {
	case s == nil:
		return v.deny(RuleNilScope, "no scope is configured, so host %s may not be reached", h)
	case port == 0:
		return v.deny(RulePort, "host %s port 0 is refused: no connection can be made to port 0", h)
	}
	return s.judgeHost(v, ip)
}

// judgeHost applies the host rules shared by Check and CheckHost to v.Host
// (canonical) and v.Port; ip is the host's address when it is an IP literal.
func (s *Scope) judgeHost(v Verdict, ip netip.Addr) Verdict {
	host := v.Host
	if p := firstMatch(s.blocked, host); p != nil {
		return v.deny(entryRule("blocked_domains", p.raw), "host %s matches blocked_domains %q, and a blocked domain is never visited", host, p.raw)
	}
	if len(s.allowed) == 0 && !s.allowExternal && !s.askExternal {
		return v.deny(RuleNoScope, "host %s is refused: the scope has no allowed_domains and allow_external is false, so nothing may be navigated", host)
	}
	grantRule, grantWhy := "", ""
	if ip.IsValid() || isLocalhost(host) {
		var denied *Verdict
		grantRule, grantWhy, denied = s.checkAddressClass(&v, ip)
		if denied != nil {
			return *denied
		}
	}
	p := firstMatch(s.allowed, host)
	if p == nil && !s.allowExternal {
		// Only a public host may be put to a human (askable): a grant
		// lifted the address-class block of a private one for
		// allowed_domains alone, a special-use name names no public site,
		// and a port outside allowed_ports stays refused.
		ok, why := s.askable(host, ip)
		if !ok || grantRule != "" {
			if why != "" {
				return v.deny(RuleNotAllowed, "host %s matches no allowed_domains entry and allow_external is false, and it is never put to a human: %s", host, why)
			}
			return v.deny(RuleNotAllowed, "host %s matches no allowed_domains entry and allow_external is false", host)
		}
		if !s.ports.allows(v.Port) {
			return s.denyPort(v, "host "+host)
		}
		v.Ask = true
		return v.deny(RuleAskExternal, "host %s matches no allowed_domains entry; ask_external lets a human approve a navigate to it", host)
	}
	// A private grant already judged the port; every other host is held to
	// allowed_ports.
	if grantRule == "" && !s.ports.allows(v.Port) {
		return s.denyPort(v, "host "+host)
	}
	switch {
	case p != nil && grantRule != "":
		return v.allow(grantRule, "host %s %s and matches allowed_domains %q", host, grantWhy, p.raw)
	case p != nil:
		return v.allow(entryRule("allowed_domains", p.raw), "host %s matches allowed_domains %q", host, p.raw)
	case grantRule != "":
		return v.allow(grantRule, "host %s %s and allow_external is true", host, grantWhy)
	default:
		return v.allow(RuleAllowExternal, "host %s matches no allowed_domains entry, and allow_external is true", host)
	}
}

// checkAddressClass applies DenyAddrPorts and the address-class block to an
// IP-literal or localhost host (ip is invalid for localhost) at v.Port. It
// returns the grant that lifted the block (rule and a clause for the
// reason), or the denial.
func (s *Scope) checkAddressClass(v *Verdict, ip netip.Addr) (rule, why string, denied *Verdict) {
	host, port := v.Host, v.Port
	if !ip.IsValid() {
		// Chromium answers localhost names with 127.0.0.1 and ::1 itself and
		// may dial either, so both must be reachable.
		v.Class = "loopback"
		lo4, lo6 := netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()
		for _, a := range []netip.Addr{lo4, lo6} {
			if n, ok := s.deniedNetwork(a); ok {
				dv := v.denyNetwork(fmt.Sprintf("host %s, a name Chromium maps to loopback (%s),", host, a), n)
				return "", "", &dv
			}
			if d, ok := s.deniedEndpoint(a, port); ok {
				dv := v.deny(entryRule("deny_addr_ports", d.String()), "host %s port %d is a name Chromium maps to loopback, and %s is an endpoint that is never reachable", host, port, netip.AddrPortFrom(a, port))
				return "", "", &dv
			}
		}
		g4, p4 := s.grantFor(lo4, port)
		g6, p6 := s.grantFor(lo6, port)
		if g4 == nil || g6 == nil {
			partial := p4
			if g4 != nil {
				partial = p6
			}
			dv := v.deny("address class loopback", "host %s is a name Chromium maps to loopback (127.0.0.1 and ::1) without DNS, and allow_private_cidrs does not cover both addresses%s", host, portClause(partial, port))
			return "", "", &dv
		}
		rule = entryRule("allow_private_cidrs", g4.raw)
		if g6 != g4 {
			rule += fmt.Sprintf(", %q", g6.raw)
		}
		return rule, "is a localhost name granted by " + rule, nil
	}
	c := Classify(ip)
	v.Class = c.Name
	what := describeAddr(host, c)
	if n, ok := s.deniedNetwork(ip); ok {
		dv := v.denyNetwork("host "+what, n)
		return "", "", &dv
	}
	if d, ok := s.deniedEndpoint(ip, port); ok {
		dv := v.deny(entryRule("deny_addr_ports", d.String()), "host %s port %d is an endpoint that is never reachable (deny_addr_ports %s)", what, port, d)
		return "", "", &dv
	}
	if c.Global {
		return "", "", nil
	}
	if c.Metadata {
		dv := v.deny("address class metadata", "host %s is a cloud metadata address (%s), which can never be granted", what, c.Ref)
		return "", "", &dv
	}
	g, partial := s.grantFor(ip, port)
	if g == nil {
		dv := v.deny("address class "+c.Name, "host %s is a %s address (%s)%s", what, c.Name, c.Ref, notGranted(partial, port))
		return "", "", &dv
	}
	rule = entryRule("allow_private_cidrs", g.raw)
	return rule, fmt.Sprintf("is a %s address granted by %s", c.Name, rule), nil
}

// DomainSets returns which sets a host matches — "allowed", "blocked",
// "ask_external", then the named DomainSets in name order — for the
// parents of its Cedar Web::Domain entity. A host is in "ask_external"
// exactly when the scope would put a navigate to it to a human, ports
// aside (the same test as Verdict.Ask: askable): it is outside both lists,
// and neither a special-use name, a localhost name nor a non-global
// address. A policy can then permit an approved navigate to it, and to no
// host the scope never holds. The host is canonicalised first; a host that
// does not canonicalise belongs to no set.
func (s *Scope) DomainSets(host string) []string {
	if s == nil {
		return nil
	}
	h, ip, err := parseHost(host, true)
	if err != nil {
		return nil
	}
	var sets []string
	if firstMatch(s.allowed, h) != nil {
		sets = append(sets, "allowed")
	}
	blocked := firstMatch(s.blocked, h) != nil
	if blocked {
		sets = append(sets, "blocked")
	}
	if ok, _ := s.askable(h, ip); ok {
		sets = append(sets, SetAskExternal)
	}
	for _, ns := range s.sets {
		if firstMatch(ns.pats, h) != nil {
			sets = append(sets, ns.name)
		}
	}
	return sets
}

// SetAskExternal names the domain set of the hosts a human may be asked
// about (Scope.DomainSets): Web::DomainSet::"ask_external" in Cedar.
const SetAskExternal = "ask_external"

// ValidSetName reports whether name can name a domain set: non-empty,
// lowercase ASCII letters, digits, '_' and '-', and not a reserved name
// ("allowed", "blocked", "ask_external").
func ValidSetName(name string) bool {
	if name == "" || name == "allowed" || name == "blocked" || name == SetAskExternal {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
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
