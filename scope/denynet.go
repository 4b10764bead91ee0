package scope

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// DeniedNetwork is a network the scope refuses at every port, whatever it
// grants: with browsers on other hosts, the pool's networks (a pool
// host's DevTools port drives every browser on it) and the daemon's own
// addresses (its gate, its console, whatever else listens there) are
// never for pages, and no allow_private_cidrs entry lifts that.
type DeniedNetwork struct {
	Prefix netip.Prefix
	// What names the network in refusals: "the remote pool's network
	// (pool_cidrs)", "an address of the daemon's host".
	What string
}

// ErrInvalidNetwork is returned by WithDeniedNetworks for a network that
// is not a valid prefix.
var ErrInvalidNetwork = errors.New("scope: invalid denied network")

// WithDeniedNetworks returns a copy of s that also refuses every address
// in nets, at every port, before any grant is considered; s itself is
// unchanged (as WithDenied). An invalid prefix is an error and no scope
// is returned: a network the daemon could not name must not be left
// reachable. IPv4-mapped IPv6 addresses are judged as their IPv4
// address. The unspecified addresses connect to the host the connection
// starts from: a caller denying that host's addresses lists them too.
func (s *Scope) WithDeniedNetworks(nets ...DeniedNetwork) (*Scope, error) {
	if s == nil {
		return nil, nil
	}
	out := slices.Clip(s.denyNets)
	for i, n := range nets {
		if !n.Prefix.IsValid() {
			return nil, fmt.Errorf("%w: entry %d (%s) is not a network", ErrInvalidNetwork, i, n.What)
		}
		p := n.Prefix.Masked()
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, DeniedNetwork{Prefix: p, What: n.What})
	}
	c := *s
	c.denyNets = out
	return &c, nil
}

// deniedNetwork is the first denied network a is in.
func (s *Scope) deniedNetwork(a netip.Addr) (DeniedNetwork, bool) {
	a = a.WithZone("").Unmap()
	for _, n := range s.denyNets {
		if n.Prefix.Contains(a) {
			return n, true
		}
	}
	return DeniedNetwork{}, false
}

// denyNetwork is the verdict for an address in a denied network.
func (v Verdict) denyNetwork(what string, n DeniedNetwork) Verdict {
	return v.deny("denied network "+n.Prefix.String(), "%s is in %s, %s, which no page may reach whatever the scope grants", what, n.Prefix, n.What)
}
