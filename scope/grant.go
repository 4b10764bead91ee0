package scope

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// grant is one compiled allow_private_cidrs entry.
type grant struct {
	prefix netip.Prefix
	ports  []uint16 // nil: every port
	raw    string
}

// parseGrant reads "CIDR", "CIDR port N" or "CIDR ports N,M,...". The port
// keyword may be singular or plural either way; ports are decimal, 1-65535,
// and spaces after the commas are allowed.
func parseGrant(c string) (grant, error) {
	fields := strings.Fields(c)
	if len(fields) == 0 {
		return grant{}, fmt.Errorf("%w: empty entry", ErrInvalidCIDR)
	}
	p, err := netip.ParsePrefix(fields[0])
	if err != nil {
		if a, aerr := netip.ParseAddr(fields[0]); aerr == nil && a.Zone() == "" {
			return grant{}, fmt.Errorf("%w: %q has no prefix length; did you mean %q?", ErrInvalidCIDR, fields[0], netip.PrefixFrom(a, a.BitLen()).String())
		}
		return grant{}, fmt.Errorf("%w: %v", ErrInvalidCIDR, err)
	}
	if m := p.Masked(); m != p {
		return grant{}, fmt.Errorf("%w: %q has host bits set; did you mean %q?", ErrInvalidCIDR, fields[0], m.String())
	}
	if p.IsSingleIP() && IsMetadata(p.Addr()) {
		return grant{}, fmt.Errorf("%w: %s", ErrMetadataGrant, p.Addr())
	}
	g := grant{prefix: p, raw: c}
	if len(fields) == 1 {
		return g, nil
	}
	if kw := fields[1]; kw != "port" && kw != "ports" || len(fields) < 3 {
		return grant{}, fmt.Errorf(`%w: after the prefix, expected "port N" or "ports N,M", got %q`, ErrInvalidCIDR, strings.Join(fields[1:], " "))
	}
	for _, s := range strings.Split(strings.Join(fields[2:], ""), ",") {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil || n == 0 || !allDigits(s) {
			return grant{}, fmt.Errorf("%w: %q in %q is not a port in 1-65535", ErrInvalidPort, s, c)
		}
		if !slices.Contains(g.ports, uint16(n)) {
			g.ports = append(g.ports, uint16(n))
		}
	}
	return g, nil
}

// contains reports whether the grant's prefix holds a, an IPv4 address
// matching its IPv4-mapped form and back, since both reach the same host.
func (g *grant) contains(a netip.Addr) bool {
	if g.prefix.Contains(a) {
		return true
	}
	if a.Is4In6() {
		return g.prefix.Contains(a.Unmap())
	}
	return a.Is4() && g.prefix.Contains(netip.AddrFrom16(a.As16()))
}

// allowsPort reports whether the grant covers port. Port 0 stands for "no
// port known" (CheckAddr), which only a grant for every port covers.
func (g *grant) allowsPort(port uint16) bool {
	return g.ports == nil || port != 0 && slices.Contains(g.ports, port)
}

// grantFor returns the first grant that contains a and covers port. When
// none does, partial is the first grant that contains a but leaves port
// out, so that a denial can say which port list was missing it.
func (s *Scope) grantFor(a netip.Addr, port uint16) (g, partial *grant) {
	for i := range s.grants {
		gr := &s.grants[i]
		if !gr.contains(a) {
			continue
		}
		if gr.allowsPort(port) {
			return gr, nil
		}
		if partial == nil {
			partial = gr
		}
	}
	return nil, partial
}

// deniedEndpoint returns the DenyAddrPorts entry that a:port hits, if any.
// An entry with an unspecified address (0.0.0.0 or ::) stands for a server
// listening on every address, so it denies that port on every address of
// either family. An entry on one address denies that address, and the
// unspecified addresses: a connection to 0.0.0.0 or :: goes to this
// machine's loopback. It does not deny another loopback address (a server
// on 127.0.0.1 is not reached at 127.0.0.3). IPv4-mapped and plain IPv4
// spellings compare equal.
func (s *Scope) deniedEndpoint(a netip.Addr, port uint16) (netip.AddrPort, bool) {
	a = a.WithZone("").Unmap()
	for _, d := range s.deny {
		if d.Port() == port && (d.Addr().IsUnspecified() || a.IsUnspecified() || d.Addr() == a) {
			return d, true
		}
	}
	return netip.AddrPort{}, false
}

// defaultPorts are the ports a special-scheme URL without an explicit port
// connects to.
var defaultPorts = map[string]uint16{"http": 80, "ws": 80, "https": 443, "wss": 443, "ftp": 21}

// urlPort returns the port a parsed URL connects to: its explicit port or
// its scheme's default, 0 when there is neither.
func urlPort(u *URL) uint16 {
	if u.Port == "" {
		return defaultPorts[u.Scheme]
	}
	n, err := strconv.ParseUint(u.Port, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// portClause says how a grant's port list left a port out, for reasons:
// `; allow_private_cidrs "10.0.0.0/8 ports 80,443" contains it, but not at port 8080`.
func portClause(partial *grant, port uint16) string {
	if partial == nil {
		return ""
	}
	return fmt.Sprintf("; allow_private_cidrs %q contains it, but not at port %d", partial.raw, port)
}

// notGranted ends the reason an address that needs a grant was refused:
// no entry contains it, or (partial) one does at other ports only. It
// says one thing, never "no entry contains it" beside the entry that
// does: ` and no allow_private_cidrs entry contains it`, or
// `; allow_private_cidrs "127.0.0.1/32 ports 8741" grants it only at the ports it lists, not at port 8742`.
func notGranted(partial *grant, port uint16) string {
	if partial == nil {
		return " and no allow_private_cidrs entry contains it"
	}
	return fmt.Sprintf("; allow_private_cidrs %q grants it only at the ports it lists, not at port %d", partial.raw, port)
}
