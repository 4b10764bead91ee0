package scope

import (
	"fmt"
	"net/netip"
)

// CheckAddrPort judges one resolved address and the port about to be
// dialled, by address alone: DenyAddrPorts deny; cloud metadata addresses
// (after unwrapping) are never reached; globally reachable addresses are
// allowed; other non-global addresses only when an allow_private_cidrs entry
// contains them and its port list, if any, includes the port. It does not
// look at names: the name was judged first, with CheckHost or Check.
//
// A proxy that resolved a name must call it for every answer and refuse the
// request if any answer is denied, then dial one of the checked addresses
// itself, with no second lookup, so that DNS rebinding cannot swap the
// target.
func (s *Scope) CheckAddrPort(ap netip.AddrPort) Verdict {
	return s.checkAddr(ap.Addr(), ap.Port(), true)
}

// CheckAddr judges an address when no port is known: as CheckAddrPort, but
// only a grant for every port lifts the address-class block, and
// DenyAddrPorts (which name ports) are not consulted. Prefer CheckAddrPort
// wherever the port is known.
func (s *Scope) CheckAddr(a netip.Addr) Verdict {
	return s.checkAddr(a, 0, false)
}

func (s *Scope) checkAddr(a netip.Addr, port uint16, portKnown bool) Verdict {
	a = a.WithZone("")
	c := Classify(a)
	v := Verdict{Host: a.String(), Port: port, Class: c.Name}
	if a.Is6() {
		v.Host = "[" + formatIPv6(a) + "]"
	}
	what := describeAddr(v.Host, c)
	if s == nil {
		return v.deny(RuleNilScope, "no scope is configured, so %s may not be reached", what)
	}
	if n, ok := s.deniedNetwork(a); ok {
		return v.denyNetwork("address "+what, n)
	}
	if portKnown {
		if port == 0 {
			return v.deny(RulePort, "address %s port 0 is refused: no connection can be made to port 0", what)
		}
		if d, ok := s.deniedEndpoint(a, port); ok {
			return v.deny(entryRule("deny_addr_ports", d.String()), "address %s port %d is an endpoint that is never reachable (deny_addr_ports %s)", what, port, d)
		}
	}
	switch {
	case c.Metadata:
		return v.deny("address class metadata", "address %s is a cloud metadata address (%s), which can never be granted", what, c.Ref)
	case c.Global && portKnown && !s.ports.allows(port):
		return s.denyPort(v, "address "+what)
	case c.Global:
		return v.allow("address class "+c.Name, "address %s is globally reachable", what)
	}
	g, partial := s.grantFor(a, port)
	if g != nil {
		return v.allow(entryRule("allow_private_cidrs", g.raw), "address %s is a %s address granted by allow_private_cidrs %q", what, c.Name, g.raw)
	}
	at := ""
	if !portKnown && partial != nil {
		at = fmt.Sprintf(" for every port (allow_private_cidrs %q names ports, and no port is known)", partial.raw)
		partial = nil
	}
	return v.deny("address class "+c.Name, "address %s is a %s address (%s)%s%s", what, c.Name, c.Ref, notGranted(partial, port), at)
}
