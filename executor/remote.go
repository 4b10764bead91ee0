package executor

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// remoteProvider reaches a browser on a pool host ([browser.remote]).
// Its sessions' browser contexts name the daemon's gate as their proxy
// (serve --gate-listen), each with credentials of its own that the
// session's guard gives the browser when the gate asks
// (Fetch.authRequired): the pool host's browser reaches nothing but the
// gate with them, and a request without them, or with another session's,
// is refused there. What the pool host sends outside the sessions'
// contexts is not the gate's: the host's network must let it reach only
// the gate (docs/remote.md).
type remoteProvider struct{ gate *egress.Gateway }

func (r remoteProvider) ownConnections() bool { return true }

func (r remoteProvider) start(b *backend) (netip.AddrPort, error) {
	rm := b.key.manifest.Browser.Remote
	if r.gate == nil || r.gate.Addr() == "" {
		return netip.AddrPort{}, errNoGate
	}
	if rm.Provider != toolclad.ProviderCDPURL {
		return netip.AddrPort{}, fmt.Errorf("%w: provider %q is not supported yet: use \"cdp-url\" with the DevTools endpoints of the Grid's or browserless's hosts", ErrBrowserStart, rm.Provider)
	}
	if err := inPool(b.key.endpoint, rm.PoolCIDRs, b.resolver); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	ws, err := resolveLiveEndpoint(b.key.endpoint, b.startup)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	// The browser names its WebSocket URL from the request's Host: a
	// forwarder that rewrites it must still point into the pool.
	if err := inPool(ws, rm.PoolCIDRs, b.resolver); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: the browser at %s answered with %s: %v", ErrBrowserStart, b.key.endpoint, ws, err)
	}
	devtools, _ := devtoolsAddr(ws)
	b.deniedNets = remoteDeniedNetworks(rm.PoolCIDRs, r.gate.Addr())
	if err := b.setScope(devtools); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	b.wsURL = ws
	// A browser the backend does not own: each session's connection
	// closes its own targets and leaves the browser running.
	alloc, cancel := remote.NewAllocator(context.Background(), ws, remote.NoModifyURL)
	b.alloc = alloc
	b.cancel = append(b.cancel, cancel)
	return devtools, nil
}

func (r remoteProvider) sessionProxy(b *backend, p *egress.Proxy) (string, *egress.Credentials, func(), error) {
	if r.gate == nil || r.gate.Addr() == "" {
		p.Close()
		return "", nil, nil, errNoGate
	}
	creds, remove := r.gate.Add(p)
	return "http://" + r.gate.Addr(), &creds, func() {
		remove()
		p.Close()
	}, nil
}

// remoteDeniedNetworks are what no page of a remote session reaches,
// whatever its scope grants: the pool's networks (each host's DevTools
// drives every browser on it), and the daemon's own host — every address
// of its interfaces, its loopback, the unspecified addresses that connect
// to it, and the gate's address — since the gate dials from there.
func remoteDeniedNetworks(pools []netip.Prefix, gateAddr string) []scope.DeniedNetwork {
	var out []scope.DeniedNetwork
	for _, p := range pools {
		out = append(out, scope.DeniedNetwork{Prefix: p, What: "a network of the remote pool (pool_cidrs)"})
	}
	own := "an address of the daemon's host"
	for _, p := range []string{"127.0.0.0/8", "::1/128", "0.0.0.0/32", "::/128"} {
		out = append(out, scope.DeniedNetwork{Prefix: netip.MustParsePrefix(p), What: own})
	}
	for _, a := range interfaceAddrs() {
		out = append(out, scope.DeniedNetwork{Prefix: netip.PrefixFrom(a, a.BitLen()), What: own})
	}
	if ap, err := netip.ParseAddrPort(gateAddr); err == nil {
		a := ap.Addr().Unmap()
		out = append(out, scope.DeniedNetwork{Prefix: netip.PrefixFrom(a, a.BitLen()), What: "the address of the daemon's gate"})
	}
	return out
}

// inPool checks that the host of a pool URL is, and resolves only to,
// addresses in the pool's networks: the daemon drives only browsers there,
// and pages never reach them.
func inPool(raw string, pools []netip.Prefix, resolver egress.Resolver) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%q is not a URL with a host", raw)
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if resolver == nil {
			resolver = net.DefaultResolver
		}
		ctx, cancel := context.WithTimeout(context.Background(), egress.DefaultResolveTimeout)
		defer cancel()
		if addrs, err = resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return fmt.Errorf("resolve %s: %v", host, err)
		}
	}
	for _, a := range addrs {
		if !poolContains(pools, a) {
			return fmt.Errorf("%s (%s) is outside pool_cidrs %s: browsergate drives only browsers in the pool's networks, which pages never reach", host, a, prefixList(pools))
		}
	}
	return nil
}

func poolContains(pools []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range pools {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixList(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
