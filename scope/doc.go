// Package scope decides whether a URL may be visited, from a manifest's
// [browser.scope] table (allowed_domains, blocked_domains, allow_external and
// our extension allow_private_cidrs). It is a leaf package: it imports
// nothing else of browsergate, so the egress gate, the executor and the
// manifest loader can all share one definition of "in scope".
//
// # Reading URLs as Chromium does
//
// A scope is only as strong as its agreement with the browser about what a
// URL means, so ParseURL follows WHATWG URL and Chromium, not net/url: it
// strips surrounding C0 controls and spaces and removes TAB, LF and CR
// anywhere; treats '\' as '/' in http(s) and ws(s) URLs; accepts "http:host"
// and "http:/host"; drops userinfo up to the last '@' of the authority (so
// "http://allowed.example@127.0.0.1/" is a URL for 127.0.0.1, while in
// "http://127.0.0.1\@allowed.example/" the backslash ends the authority);
// percent-decodes the host; maps it with IDNA UTS #46 (non-transitional, so
// fullwidth letters and digits, the ideographic full stop and enclosed
// alphanumerics map, and soft hyphens vanish); refuses forbidden code
// points; and reads a host whose last label is numeric as an IPv4 address in
// any legacy spelling ("2130706433", "0x7f.1", "0177.0.0.1", "127.1"), with
// overflow an error. IPv6 hosts are bracketed, may embed IPv4, and may not
// carry a zone identifier.
//
// # Canonical hosts
//
// A canonical host is lowercase ASCII (punycode for IDNs) with no trailing
// dot; an IPv4 host is dotted decimal; an IPv6 host is bracketed in
// compressed lowercase hex, as Chromium prints it: "[::1]",
// "[::ffff:7f00:1]". Empty labels ("a..b") are refused.
//
// # Domain globs
//
// allowed_domains and blocked_domains entries are globs, canonicalised the
// same way as hosts when New compiles them, and matched against canonical
// hosts:
//
//   - "example.com" matches exactly example.com.
//   - "*.example.com" matches any subdomain, at any depth (a.example.com,
//     a.b.example.com), but NOT the bare example.com: list both to allow
//     both.
//   - "admin.*" matches "admin." followed by one or more labels
//     (admin.example.com, admin.co.uk) but not the bare "admin".
//   - "*" alone matches every host, IP literals included.
//   - '*' inside a label ("app-*.example.com") matches any run of
//     characters, possibly empty, within that one label: app-1.example.com
//     and app-.example.com, not app-1.x.example.com. A label that is only
//     '*' between other labels ("a.*.example.com") matches exactly one
//     label.
//   - Everything else is literal.
//
// An IP literal host is matched only by an identical IP pattern or by "*".
// IP patterns are written as the host would be ("127.0.0.1"; "[::1]", with
// "::1" accepted and canonicalised to "[::1]"); wildcards never apply to IP
// addresses. Empty patterns, "**", spaces, percent signs, ports, schemes and
// characters forbidden in hosts are errors at New, as is a '*' sharing a
// label with non-ASCII characters.
//
// # Decisions
//
// Check applies, in order: parse (a URL that does not parse is denied,
// rule "parse"); "about:blank" exactly is allowed; the scheme must be http,
// https, ws or wss (rule "scheme"); then the host and the URL's port (its
// explicit port, or 80 for http/ws and 443 for https/wss) are judged as
// CheckHost judges a host and port that a proxy sees: a blocked_domains
// match denies, whatever else is configured; an empty allowed_domains with
// allow_external false denies everything (rule "no scope"); an IP-literal
// host, or a localhost name ("localhost", "*.localhost", which Chromium maps
// to loopback without DNS), is denied if the endpoint is in DenyAddrPorts
// (rule `deny_addr_ports "127.0.0.1:9222"`), and is denied if its address
// class is not global (rule "address class <name>") unless an
// allow_private_cidrs entry contains it and covers the port (for localhost
// names the grants must cover both 127.0.0.1 and ::1); cloud metadata
// addresses are never granted; then an allowed_domains match allows, else
// allow_external allows, else the host is denied (rule "not in
// allowed_domains"). A grant only lifts the address-class block: the host
// must still be allowed by allowed_domains or allow_external, and an
// allowance that needed a grant names the grant as its rule.
//
// # Hosts a human may be asked about
//
// With Config.AskExternal (ask_external), a public host outside
// allowed_domains — a domain name, or a globally reachable IP literal, on a
// port allowed_ports allows — is still denied, with rule "not in
// allowed_domains (ask_external)" and Verdict.Ask set, and DomainSets puts
// it in the set "ask_external". Only the gate's decision on a navigate
// turns such a denial into a call held for a human, and only the
// session's check lifts it afterwards, for the approved Origin. Nothing
// refused by an earlier rule is ever askable: a blocked domain, a
// non-global address (granted or not), a localhost name, a port outside
// allowed_ports; nor is a name public DNS does not answer (a single-label
// name, a special-use or private-use top-level name such as .local or
// .internal, a cloud metadata name: askable.go). An empty allowed_domains
// with AskExternal is not an empty scope: every public host is askable.
// The egress proxy (package egress) dials a host allowed with Ask set —
// one a human approved — only at a globally reachable address.
//
// # Grants limited to ports
//
// An allow_private_cidrs entry is a CIDR prefix in canonical form,
// optionally followed by a port clause:
//
//	"127.0.0.1/32"                every port
//	"127.0.0.1/32 port 8080"      only port 8080
//	"10.0.0.0/8 ports 80,443"     only ports 80 and 443 ("80, 443" also reads)
//
// "port" and "ports" are interchangeable; ports are decimal, 1-65535. A
// grant whose port list leaves out the port judged does not lift the block,
// and the denial names it.
//
// # Endpoints that are never reached
//
// Config.DenyAddrPorts lists address:port endpoints refused whatever the
// grants and allow lists say; browsergate puts the DevTools port of the
// browser it drives and the egress proxy's own listener there, so that a
// page cannot drive the browser or loop through the proxy even when a grant
// covers all of loopback. An entry with an unspecified address
// ("0.0.0.0:9222", "[::]:9222") stands for a server listening on every
// address and denies that port on every address. An entry on one address
// denies that address and the unspecified addresses, which a connection
// takes to this machine's loopback, and leaves the port open on every
// other address (a server on 127.0.0.1:9222 is not reached at
// 127.0.0.3:9222). IPv4-mapped IPv6 spellings match their IPv4 address. Scope.WithDenied derives, from a compiled
// scope, a copy that also refuses endpoints learnt later (a browser's
// DevTools port is known only once the browser runs), without compiling
// the configuration again.
//
// # Resolved addresses
//
// Check and CheckHost judge names; the addresses a domain name resolves to
// are judged, where it is resolved, with CheckAddrPort: DenyAddrPorts, the
// address class after unwrapping, metadata (never), and the port-limited
// grants; it does not look at names. A resolved answer set is acceptable
// only if every address in it passes CheckAddrPort: the egress proxy
// resolves once, checks every answer, refuses the request if any answer is
// denied, and dials a checked address itself, so that DNS rebinding cannot
// swap the target. CheckAddr is the same judgement when no port is known,
// where only a grant for every port counts.
//
// # Address classes
//
// Classify reads tables generated (classify_gen.go, by internal/ianagen)
// from the IANA IPv4 and IPv6 Special-Purpose Address Registries' CSV files
// kept in internal/ianagen/testdata, plus a small supplement (multicast, and
// the IPv6 space outside 2000::/3), never from the net.IP predicates. Only a
// current row whose "Globally Reachable" column reads True is global:
// False, N/A and terminated rows are not, so anything the registries do not
// positively call reachable fails closed. The cloud metadata addresses are
// listed by hand in metadata.go.
//
// IPv4-mapped, NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4
// and Teredo addresses are unwrapped first: a non-global embedded address
// gives its class ("[::ffff:127.0.0.1]" is loopback, every spelling of
// 169.254.169.254 is metadata); a global one is global only through an
// embedding the registry calls reachable (IPv4-mapped, and NAT64's
// well-known prefix), so 6to4 and Teredo spellings of public addresses are
// non-global ("address class 6to4", "address class teredo").
package scope
