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
// https, ws or wss (rule "scheme"); a blocked_domains match denies, whatever
// else is configured; an empty allowed_domains with allow_external false
// denies everything (rule "no scope"); an IP-literal host, or a localhost
// name ("localhost", "*.localhost", which Chromium maps to loopback without
// DNS), whose address class is not global is denied (rule "address class
// <name>") unless an allow_private_cidrs entry contains it (for localhost
// names the grants must cover both 127.0.0.1 and ::1); cloud metadata
// addresses are never granted; then an allowed_domains match allows, else
// allow_external allows, else the URL is denied (rule "not in
// allowed_domains"). A grant only lifts the address-class block: the host
// must still be allowed by allowed_domains or allow_external, and an
// allowance that needed a grant names the grant as its rule.
//
// # Address classes
//
// Classify reads tables written from the IANA IPv4 and IPv6
// special-purpose address registries (classify_table.go), never the net.IP
// predicates, after unwrapping IPv4-mapped, NAT64, 6to4 and Teredo
// addresses so that the embedded IPv4 address's class wins. Anything not
// known to be globally reachable is non-global.
//
// Check judges a URL alone; the addresses a domain name resolves to are
// judged with CheckAddr where the name is resolved (the egress proxy).
package scope
