package egress

import (
	"context"
	"net/netip"
)

// GateForTest runs the checks of one request to host:port and returns the
// address that would be dialled, or the rule that refused it.
func (p *Proxy) GateForTest(ctx context.Context, host string, port uint16) (netip.AddrPort, string) {
	var d Decision
	ap, ref := p.gate(ctx, &d, host, port)
	if ref != nil {
		return ap, ref.rule
	}
	return ap, ""
}

// ParseBasicForTest reads a Proxy-Authorization value in the Basic scheme:
// the user-id and password, or why they cannot be read.
func ParseBasicForTest(v string) (user, password, refused string) { return parseBasic(v) }

// ReachesForTest reports whether a connection to ap could arrive at a
// listener on ln, with local standing for the machine's interface
// addresses.
func ReachesForTest(ap, ln netip.AddrPort, local func(netip.Addr) bool) bool {
	return reaches(ap, ln, local)
}
