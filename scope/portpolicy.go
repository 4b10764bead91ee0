package scope

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultAllowedPorts are the ports a host outside every private grant may
// be reached on when the manifest sets no allowed_ports: the web's own, 80
// and 443. Anything else (a mail server on 25, an admin console on 8443, a
// database on 5432) needs the operator to say so.
var DefaultAllowedPorts = []string{"80", "443"}

// PortRange is an inclusive range of ports, Lo <= Hi, both in 1-65535. A
// single port is a range with Lo == Hi.
type PortRange struct{ Lo, Hi uint16 }

// String writes the range as ParsePortRange reads it: "443" or "8000-8999".
func (r PortRange) String() string {
	if r.Lo == r.Hi {
		return strconv.Itoa(int(r.Lo))
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

func (r PortRange) contains(p uint16) bool { return r.Lo <= p && p <= r.Hi }

// ParsePortRange reads one allowed_ports entry: a decimal port ("8443") or
// an inclusive range ("8000-8999"), each port in 1-65535 and the range not
// reversed. Errors wrap ErrInvalidPort.
func ParsePortRange(s string) (PortRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, okA := parsePortNumber(lo)
	b, okB := a, true
	if isRange {
		b, okB = parsePortNumber(hi)
	}
	switch {
	case !isRange && !okA:
		return PortRange{}, fmt.Errorf("%w: %q is not a port in 1-65535", ErrInvalidPort, s)
	case !okA || !okB:
		return PortRange{}, fmt.Errorf("%w: %q is not a range of two ports in 1-65535", ErrInvalidPort, s)
	case b < a:
		return PortRange{}, fmt.Errorf("%w: %q is a reversed range (did you mean \"%d-%d\"?)", ErrInvalidPort, s, b, a)
	}
	return PortRange{a, b}, nil
}

func parsePortNumber(s string) (uint16, bool) {
	n, err := strconv.ParseUint(s, 10, 16)
	return uint16(n), err == nil && n != 0 && allDigits(s)
}

// portPolicy is the compiled allowed_ports list.
type portPolicy struct {
	ranges []PortRange
	// text lists the entries for reasons, with "(the default)" when the
	// manifest set none.
	text string
}

func (pp portPolicy) allows(p uint16) bool {
	for _, r := range pp.ranges {
		if r.contains(p) {
			return true
		}
	}
	return false
}

// denyPort is the denial for a host or address that passed every other rule
// but is reached on a port outside allowed_ports.
func (s *Scope) denyPort(v Verdict, what string) Verdict {
	return v.deny(RuleAllowedPorts, "%s port %d is refused: allowed_ports is %s; add the port to [browser.scope] allowed_ports to reach it", what, v.Port, s.ports.text)
}
