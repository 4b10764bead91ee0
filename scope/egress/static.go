package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// StaticResolver answers from a fixed table and asks Fallback for every
// other name (nil Fallback: every other name is not found). It is how tests
// give hostnames to loopback test sites, and how an air-gapped deployment
// pins internal names, without touching the system resolver.
type StaticResolver struct {
	Hosts    map[string][]netip.Addr // lower-case names, no trailing dot
	Fallback Resolver
}

// ParseHostMapping parses "name=ip[,ip...]" (the serve --resolve flag).
func ParseHostMapping(s string) (string, []netip.Addr, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
	if !ok || name == "" || list == "" {
		return "", nil, fmt.Errorf("resolve %q: want name=ip[,ip...]", s)
	}
	var addrs []netip.Addr
	for _, part := range strings.Split(list, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(part))
		if err != nil {
			return "", nil, fmt.Errorf("resolve %q: %v", s, err)
		}
		addrs = append(addrs, a)
	}
	return name, addrs, nil
}

// LookupNetIP implements Resolver.
func (r *StaticResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addrs, ok := r.Hosts[strings.TrimSuffix(strings.ToLower(host), ".")]; ok {
		return append([]netip.Addr(nil), addrs...), nil
	}
	if r.Fallback != nil {
		return r.Fallback.LookupNetIP(ctx, network, host)
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
