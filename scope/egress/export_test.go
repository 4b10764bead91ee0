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
