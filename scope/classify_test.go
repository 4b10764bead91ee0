package scope_test

import (
	"net"
	"net/netip"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// globalClasses are the class names whose addresses are globally reachable.
var globalClasses = map[string]bool{"global": true, "anycast": true, "orchid": true, "drone-id": true}

// lastAddr returns the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestClassifyRanges(t *testing.T) {
	t.Parallel()
	// Each range of the IANA registries, with the class of its first and of
	// its last address. They differ where a more specific entry covers an
	// edge, or where the edge is an embedding that unwraps to another class.
	tests := []struct {
		prefix      string
		first, last string
	}{
		{"0.0.0.0/8", "unspecified", "this-network"},
		{"10.0.0.0/8", "private", "private"},
		{"100.64.0.0/10", "cgnat", "cgnat"},
		{"127.0.0.0/8", "loopback", "loopback"},
		{"169.254.0.0/16", "link-local", "link-local"},
		{"172.16.0.0/12", "private", "private"},
		{"192.0.0.0/24", "ietf-protocol", "ietf-protocol"},
		{"192.0.0.0/29", "ietf-protocol", "ietf-protocol"},
		{"192.0.0.8/32", "ietf-protocol", "ietf-protocol"},
		{"192.0.0.9/32", "anycast", "anycast"},
		{"192.0.0.10/32", "anycast", "anycast"},
		{"192.0.0.170/31", "ietf-protocol", "ietf-protocol"},
		{"192.0.2.0/24", "documentation", "documentation"},
		{"192.31.196.0/24", "anycast", "anycast"},
		{"192.52.193.0/24", "anycast", "anycast"},
		{"192.88.99.0/24", "reserved", "reserved"},
		{"192.168.0.0/16", "private", "private"},
		{"192.175.48.0/24", "anycast", "anycast"},
		{"198.18.0.0/15", "benchmarking", "benchmarking"},
		{"198.51.100.0/24", "documentation", "documentation"},
		{"203.0.113.0/24", "documentation", "documentation"},
		{"224.0.0.0/4", "multicast", "multicast"},
		{"240.0.0.0/4", "reserved", "broadcast"},
		{"255.255.255.255/32", "broadcast", "broadcast"},
		// Around the special ranges: global.
		{"1.0.0.0/8", "global", "global"},
		{"100.0.0.0/10", "global", "global"},
		{"100.128.0.0/9", "global", "global"},
		{"172.0.0.0/12", "global", "global"},
		{"172.32.0.0/11", "global", "global"},
		{"198.20.0.0/14", "global", "global"},
		{"223.0.0.0/8", "global", "global"},
		// IPv6.
		{"::/128", "unspecified", "unspecified"},
		{"::1/128", "loopback", "loopback"},
		{"::/96", "unspecified", "reserved"},
		{"::ffff:0:0/96", "unspecified", "broadcast"},
		{"64:ff9b::/96", "unspecified", "broadcast"},
		{"64:ff9b:1::/48", "unspecified", "broadcast"},
		{"100::/64", "discard", "discard"},
		{"100:0:0:1::/64", "reserved", "reserved"},
		{"2001::/23", "broadcast", "ietf-protocol"},
		{"2001::/32", "broadcast", "unspecified"},
		{"2001:1::1/128", "anycast", "anycast"},
		{"2001:1::2/128", "anycast", "anycast"},
		{"2001:1::3/128", "anycast", "anycast"},
		{"2001:2::/48", "benchmarking", "benchmarking"},
		{"2001:3::/32", "anycast", "anycast"},
		{"2001:4:112::/48", "anycast", "anycast"},
		{"2001:10::/28", "reserved", "reserved"},
		{"2001:20::/28", "orchid", "orchid"},
		{"2001:30::/28", "drone-id", "drone-id"},
		{"2001:db8::/32", "documentation", "documentation"},
		{"2002::/16", "unspecified", "broadcast"},
		{"2620:4f:8000::/48", "anycast", "anycast"},
		{"3fff::/20", "documentation", "documentation"},
		{"5f00::/16", "srv6", "srv6"},
		{"fc00::/7", "unique-local", "unique-local"},
		{"fe80::/10", "link-local", "link-local"},
		{"ff00::/8", "multicast", "multicast"},
		{"fec0::/10", "reserved", "reserved"},
		{"4000::/3", "reserved", "reserved"},
		{"2000::/16", "global", "global"},
		{"2003::/16", "global", "global"},
		{"3000::/8", "global", "global"},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			t.Parallel()
			p := netip.MustParsePrefix(tt.prefix)
			for _, c := range []struct {
				addr netip.Addr
				want string
			}{{p.Addr(), tt.first}, {lastAddr(p), tt.last}} {
				got := scope.Classify(c.addr)
				if got.Name != c.want || got.Global != globalClasses[c.want] {
					t.Errorf("Classify(%s) = %q (global %v), want %q (global %v)", c.addr, got.Name, got.Global, c.want, globalClasses[c.want])
				}
				if got.Metadata {
					t.Errorf("Classify(%s) is metadata", c.addr)
				}
			}
		})
	}
}

func TestClassifyMetadata(t *testing.T) {
	t.Parallel()
	for _, a := range []string{
		"169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "192.0.0.192",
		"::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1",
		"2001:0:4136:e378:8000:63bf:5601:5601", // Teredo client 169.254.169.254 (bits inverted)
	} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			c := scope.Classify(netip.MustParseAddr(a))
			if !c.Metadata || c.Global || c.Name != "metadata" {
				t.Errorf("Classify(%s) = %+v, want non-global metadata", a, c)
			}
		})
	}
}

func TestClassifyUnwrap(t *testing.T) {
	t.Parallel()
	// For each embedding: its first and last address, an embedded loopback,
	// metadata and global address, and neighbours just outside the range.
	tests := []struct {
		addr, inner, via, class string
	}{
		// IPv4-mapped, ::ffff:0:0/96: the embedded class always decides.
		{"::ffff:0:0", "0.0.0.0", "ipv4-mapped", "unspecified"},
		{"::ffff:ffff:ffff", "255.255.255.255", "ipv4-mapped", "broadcast"},
		{"::ffff:127.0.0.1", "127.0.0.1", "ipv4-mapped", "loopback"},
		{"::ffff:7f00:1", "127.0.0.1", "ipv4-mapped", "loopback"},
		{"::ffff:a9fe:a9fe", "169.254.169.254", "ipv4-mapped", "metadata"},
		{"::ffff:8.8.8.8", "8.8.8.8", "ipv4-mapped", "global"},
		{"::fffe:ffff:ffff", "::fffe:ffff:ffff", "", "reserved"},
		{"::1:0:0:0", "::1:0:0:0", "", "reserved"},
		// NAT64 well-known prefix, 64:ff9b::/96 (globally reachable itself).
		{"64:ff9b::", "0.0.0.0", "nat64", "unspecified"},
		{"64:ff9b::ffff:ffff", "255.255.255.255", "nat64", "broadcast"},
		{"64:ff9b::a00:1", "10.0.0.1", "nat64", "private"},
		{"64:ff9b::7f00:1", "127.0.0.1", "nat64", "loopback"},
		{"64:ff9b::a9fe:a9fe", "169.254.169.254", "nat64", "metadata"},
		{"64:ff9b::8.8.8.8", "8.8.8.8", "nat64", "global"},
		{"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "", "reserved"},
		{"64:ff9b::1:0:0", "64:ff9b::1:0:0", "", "reserved"},
		// NAT64 local-use prefix, 64:ff9b:1::/48 (not globally reachable).
		{"64:ff9b:1::", "0.0.0.0", "nat64-local", "unspecified"},
		{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "255.255.255.255", "nat64-local", "broadcast"},
		{"64:ff9b:1::7f00:1", "127.0.0.1", "nat64-local", "loopback"},
		{"64:ff9b:1::a9fe:a9fe", "169.254.169.254", "nat64-local", "metadata"},
		{"64:ff9b:1::808:808", "8.8.8.8", "nat64-local", "nat64-local"},
		{"64:ff9b:2::", "64:ff9b:2::", "", "reserved"},
		// 6to4, 2002::/16 (registry: N/A), IPv4 address in bits 16-47.
		{"2002::", "0.0.0.0", "6to4", "unspecified"},
		{"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "255.255.255.255", "6to4", "broadcast"},
		{"2002:c0a8:101::1", "192.168.1.1", "6to4", "private"},
		{"2002:a9fe:a9fe::", "169.254.169.254", "6to4", "metadata"},
		{"2002:808:808::1", "8.8.8.8", "6to4", "6to4"},
		{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "global"},
		{"2003::", "2003::", "", "global"},
		// Teredo, 2001::/32 (registry: N/A), client address inverted.
		{"2001::", "255.255.255.255", "teredo", "broadcast"},
		{"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "0.0.0.0", "teredo", "unspecified"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1", "teredo", "loopback"},
		{"2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254", "teredo", "metadata"},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "8.8.8.8", "teredo", "teredo"},
		{"2001:1::", "2001:1::", "", "ietf-protocol"},
		// Not embeddings.
		{"127.0.0.1", "127.0.0.1", "", "loopback"},
		{"2606:4700::1111", "2606:4700::1111", "", "global"},
		{"fe80::1%eth0", "fe80::1", "", "link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tt.addr)
			inner, via := scope.Unwrap(a)
			if inner.String() != tt.inner || via != tt.via {
				t.Errorf("Unwrap(%s) = %s, %q; want %s, %q", a, inner, via, tt.inner, tt.via)
			}
			if again, v2 := scope.Unwrap(inner); again != inner || v2 != "" {
				t.Errorf("Unwrap(Unwrap(%s)) = %s, %q; unwrapping must be idempotent", a, again, v2)
			}
			c := scope.Classify(a)
			if c.Name != tt.class || c.Via != tt.via || c.Addr.String() != tt.inner {
				t.Errorf("Classify(%s) = %+v; want class %q via %q addr %s", a, c, tt.class, tt.via, tt.inner)
			}
			if c.Global != globalClasses[tt.class] || c.Metadata != (tt.class == "metadata") {
				t.Errorf("Classify(%s) = %+v; want global=%v", a, c, globalClasses[tt.class])
			}
		})
	}
}

// TestClassifyNotNetIP shows why net.IP predicates are not used: each of these
// is "global unicast" to Go's net package, and none is globally reachable.
func TestClassifyNotNetIP(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"10.0.0.1", "100.64.0.1", "192.0.2.1", "198.18.0.1", "fc00::1", "2001:db8::1", "192.88.99.1"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			if !net.ParseIP(a).IsGlobalUnicast() {
				t.Skipf("net.IP no longer calls %s global unicast", a)
			}
			if c := scope.Classify(netip.MustParseAddr(a)); c.Global {
				t.Errorf("Classify(%s) = %+v, want non-global", a, c)
			}
		})
	}
}

func TestClassifyInvalid(t *testing.T) {
	t.Parallel()
	c := scope.Classify(netip.Addr{})
	if c.Global || c.Name != "invalid" {
		t.Errorf("Classify(zero Addr) = %+v, want non-global invalid", c)
	}
}
