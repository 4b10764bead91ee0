package scope

import (
	"net/netip"
	"slices"
)

//go:generate go run ./internal/ianagen -ipv4 internal/ianagen/testdata/iana-ipv4-special-registry-1.csv -ipv6 internal/ianagen/testdata/iana-ipv6-special-registry-1.csv -supplement internal/ianagen/testdata/supplement.csv -o classify_gen.go

// Class is the address class of an IP address, from the IANA special-purpose
// registries (see classify_gen.go and internal/ianagen). Only Global addresses may be reached
// without an explicit allow_private_cidrs grant, and Metadata addresses may
// never be reached at all.
type Class struct {
	// Name is a short class name: "global", "loopback", "private",
	// "link-local", "cgnat", "metadata", "multicast", "broadcast",
	// "documentation", "benchmarking", "this-network", "unspecified",
	// "unique-local", "reserved", "anycast", "ietf-protocol", "invalid", ...
	Name string
	// Global is the registry's "Globally Reachable" column; false for every
	// class this package does not positively know to be global.
	Global bool
	// Metadata marks cloud instance-metadata endpoints, which no grant lifts.
	Metadata bool
	// Ref names the RFC (or provider) behind the class, for reasons and logs.
	Ref string
	// Prefix is the table row that matched.
	Prefix netip.Prefix
	// Addr is the address that was classified: the input, or the IPv4
	// address embedded in it when Via is not empty.
	Addr netip.Addr
	// Via names the embedding that was unwrapped before classifying:
	// "ipv4-mapped", "nat64", "6to4", "teredo", or "" for none.
	Via string
}

// byLength are the tables ordered longest prefix first, so that the first
// row containing an address is the most specific one.
var byLength4, byLength6 = sortTables()

func sortTables() (v4, v6 []rangeEntry) {
	for _, t := range [][]rangeEntry{metadataAddrs, ipv4Table, ipv6Table} {
		for _, e := range t {
			if e.prefix.Addr().Is4() {
				v4 = append(v4, e)
			} else {
				v6 = append(v6, e)
			}
		}
	}
	longestFirst := func(a, b rangeEntry) int { return b.prefix.Bits() - a.prefix.Bits() }
	slices.SortStableFunc(v4, longestFirst)
	slices.SortStableFunc(v6, longestFirst)
	return v4, v6
}

// Unwrap returns the IPv4 address embedded in an IPv6 address that carries
// one, and the name of the embedding:
//
//   - "ipv4-mapped": ::ffff:0:0/96 (RFC 4291), the last 32 bits;
//   - "nat64": the well-known prefix 64:ff9b::/96 (RFC 6052), the last 32 bits;
//   - "nat64-local": the local-use prefix 64:ff9b:1::/48 (RFC 8215), read as
//     an operator's /96 inside it, so the last 32 bits;
//   - "6to4": 2002::/16 (RFC 3056), bits 16 to 47;
//   - "teredo": 2001::/32 (RFC 4380), the client address, which is the last
//     32 bits inverted.
//
// Such addresses reach, or are routed toward, the embedded IPv4 host, so
// its class matters (see Classify). Any other address is returned as it is,
// with an empty name, and so is an IPv4 address; unwrapping is idempotent.
// Zones are dropped.
func Unwrap(a netip.Addr) (netip.Addr, string) {
	a = a.WithZone("")
	if !a.Is6() {
		return a, ""
	}
	b := a.As16()
	v4 := func(x []byte) netip.Addr { return netip.AddrFrom4([4]byte(x)) }
	switch {
	case a.Is4In6():
		return a.Unmap(), "ipv4-mapped"
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]):
		return v4(b[12:16]), "nat64"
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0x00 && b[5] == 0x01:
		return v4(b[12:16]), "nat64-local"
	case b[0] == 0x20 && b[1] == 0x02:
		return v4(b[2:6]), "6to4"
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00:
		return v4([]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "teredo"
	}
	return a, ""
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Classify returns the class of an address from the IANA special-purpose
// tables. It does not use the net.IP predicates: IsGlobalUnicast, for one,
// is true for RFC 1918, CGNAT and documentation space. An invalid address
// classifies as the non-global "invalid" class, so callers fail closed.
//
// An address that embeds an IPv4 address (see Unwrap) is judged by both:
// when the embedded address is not global, its class is the answer (so
// "[::ffff:127.0.0.1]" is loopback and a NAT64 spelling of 169.254.169.254
// is metadata); when it is global, the answer is the embedding's own
// registry class, which is global only for NAT64's well-known prefix (the
// registry marks 6to4 and Teredo "N/A" and the local-use NAT64 prefix
// False). IPv4-mapped addresses are the IPv4 address itself, as dual-stack
// sockets use them, so the embedded class alone decides.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return Class{Name: "invalid", Ref: "not an IP address"}
	}
	inner, via := Unwrap(a)
	c := lookup(inner)
	c.Addr, c.Via = inner, via
	if via == "" || via == "ipv4-mapped" || !c.Global {
		return c
	}
	if w := lookup(a.WithZone("")); !w.Global {
		w.Addr, w.Via = inner, via
		return w
	}
	return c
}

// lookup finds the most specific table row containing a, without
// unwrapping. An address in no row is global (IANA: not special-purpose).
func lookup(a netip.Addr) Class {
	table := byLength6
	if a.Is4() {
		table = byLength4
	}
	for _, e := range table {
		if e.prefix.Contains(a) {
			return Class{Name: e.name, Global: e.global, Metadata: e.name == "metadata", Ref: e.ref, Prefix: e.prefix}
		}
	}
	return Class{Name: "global", Global: true, Ref: "IANA: not special-purpose"}
}

// IsMetadata reports whether a is, or embeds, a cloud metadata address.
func IsMetadata(a netip.Addr) bool { return Classify(a).Metadata }
