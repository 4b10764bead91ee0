package scope

import "net/netip"

// This table was written by hand on 2026-11-22 from two IANA registries:
//
//   - IANA IPv4 Special-Purpose Address Registry
//     https://www.iana.org/assignments/iana-ipv4-special-registry
//   - IANA IPv6 Special-Purpose Address Registry (last updated 2025-10-09)
//     https://www.iana.org/assignments/iana-ipv6-special-registry
//
// plus the IPv4 multicast block (IANA IPv4 Multicast Address Space
// Registry, RFC 5771), the IPv6 multicast and unallocated space (IANA IPv6
// Address Space registry, RFC 4291) and the cloud metadata addresses, which no
// registry lists. "Global" is the registry's "Globally Reachable" column;
// entries whose column reads N/A (deprecated or embedding) are non-global
// here, failing closed, and the embedding forms are unwrapped before the
// table is consulted (see Unwrap). Generating this file from the registries'
// XML is a later step; until then, edit it by hand and cite the source.
//
// Lookup takes the longest matching prefix, so more specific entries (the
// anycast addresses inside 192.0.0.0/24, the metadata addresses) override
// the blocks that contain them.

// rangeEntry is one row: a block, the class it gives, and its reference.
type rangeEntry struct {
	prefix netip.Prefix
	name   string
	global bool
	ref    string
}

func row(p, name string, global bool, ref string) rangeEntry {
	return rangeEntry{netip.MustParsePrefix(p), name, global, ref}
}

// metadataAddrs are cloud instance-metadata endpoints. They sit in ranges
// that are already non-global, but no CIDR grant may ever reach them.
var metadataAddrs = []rangeEntry{
	row("169.254.169.254/32", "metadata", false, "AWS/GCP/Azure instance metadata"),
	row("169.254.170.2/32", "metadata", false, "AWS ECS task metadata"),
	row("fd00:ec2::254/128", "metadata", false, "AWS instance metadata over IPv6"),
	row("100.100.100.200/32", "metadata", false, "Alibaba Cloud instance metadata"),
	row("192.0.0.192/32", "metadata", false, "Oracle Cloud instance metadata"),
}

var ipv4Table = []rangeEntry{
	row("0.0.0.0/8", "this-network", false, "RFC 791"),
	row("0.0.0.0/32", "unspecified", false, "RFC 1122"),
	row("10.0.0.0/8", "private", false, "RFC 1918"),
	row("100.64.0.0/10", "cgnat", false, "RFC 6598"),
	row("127.0.0.0/8", "loopback", false, "RFC 1122"),
	row("169.254.0.0/16", "link-local", false, "RFC 3927"),
	row("172.16.0.0/12", "private", false, "RFC 1918"),
	row("192.0.0.0/24", "ietf-protocol", false, "RFC 6890"),
	row("192.0.0.0/29", "ietf-protocol", false, "RFC 7335"),
	row("192.0.0.8/32", "ietf-protocol", false, "RFC 7600"),
	row("192.0.0.9/32", "anycast", true, "RFC 7723"),
	row("192.0.0.10/32", "anycast", true, "RFC 8155"),
	row("192.0.0.170/32", "ietf-protocol", false, "RFC 8880"),
	row("192.0.0.171/32", "ietf-protocol", false, "RFC 8880"),
	row("192.0.2.0/24", "documentation", false, "RFC 5737"),
	row("192.31.196.0/24", "anycast", true, "RFC 7535"),
	row("192.52.193.0/24", "anycast", true, "RFC 7450"),
	row("192.88.99.0/24", "reserved", false, "RFC 7526"),
	row("192.168.0.0/16", "private", false, "RFC 1918"),
	row("192.175.48.0/24", "anycast", true, "RFC 7534"),
	row("198.18.0.0/15", "benchmarking", false, "RFC 2544"),
	row("198.51.100.0/24", "documentation", false, "RFC 5737"),
	row("203.0.113.0/24", "documentation", false, "RFC 5737"),
	row("224.0.0.0/4", "multicast", false, "RFC 5771"),
	row("240.0.0.0/4", "reserved", false, "RFC 1112"),
	row("255.255.255.255/32", "broadcast", false, "RFC 919"),
}

var ipv6Table = []rangeEntry{
	// Everything outside 2000::/3 is unallocated, reserved, local or
	// multicast (IANA IPv6 Address Space); the rows below refine it.
	row("::/0", "reserved", false, "RFC 4291"),
	row("2000::/3", "global", true, "RFC 4291"),
	row("::/128", "unspecified", false, "RFC 4291"),
	row("::1/128", "loopback", false, "RFC 4291"),
	row("::ffff:0:0/96", "ipv4-mapped", false, "RFC 4291"),
	row("64:ff9b::/96", "nat64", true, "RFC 6052"),
	row("64:ff9b:1::/48", "nat64-local", false, "RFC 8215"),
	row("100::/64", "discard", false, "RFC 6666"),
	row("100:0:0:1::/64", "reserved", false, "RFC 9780"),
	row("2001::/23", "ietf-protocol", false, "RFC 2928"),
	row("2001::/32", "teredo", false, "RFC 4380"),
	row("2001:1::1/128", "anycast", true, "RFC 7723"),
	row("2001:1::2/128", "anycast", true, "RFC 8155"),
	row("2001:1::3/128", "anycast", true, "RFC 9665"),
	row("2001:2::/48", "benchmarking", false, "RFC 5180"),
	row("2001:3::/32", "anycast", true, "RFC 7450"),
	row("2001:4:112::/48", "anycast", true, "RFC 7535"),
	row("2001:10::/28", "reserved", false, "RFC 4843"),
	row("2001:20::/28", "orchid", true, "RFC 7343"),
	row("2001:30::/28", "drone-id", true, "RFC 9374"),
	row("2001:db8::/32", "documentation", false, "RFC 3849"),
	row("2002::/16", "6to4", false, "RFC 3056"),
	row("2620:4f:8000::/48", "anycast", true, "RFC 7534"),
	row("3fff::/20", "documentation", false, "RFC 9637"),
	row("5f00::/16", "srv6", false, "RFC 9602"),
	row("fc00::/7", "unique-local", false, "RFC 4193"),
	row("fe80::/10", "link-local", false, "RFC 4291"),
	row("ff00::/8", "multicast", false, "RFC 4291"),
}
