package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

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
		return netip.AddrPort{}, fmt.Errorf("%w: provider %q is not supported yet: use \"cdp-url\" with the DevTools endpoints of its hosts", ErrBrowserStart, rm.Provider)
	}
	ws, err := poolBrowserURL(b.key.endpoint, rm.PoolCIDRs, b.startup)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	if err := probePool(ws, nil, r.gate); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %s: %v", ErrBrowserStart, b.key.endpoint, err)
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

// poolBrowserURL is the browser WebSocket URL of a pool endpoint: a ws(s)
// URL as it is, or the one /json/version answers at an http(s) endpoint.
// Both hosts must be addresses in the pool's networks (the manifest's
// endpoints are, toolclad); nothing is resolved, no redirect followed
// and no proxy of the environment used, so the browser the daemon
// connects to is the one the check saw.
func poolBrowserURL(endpoint string, pools []netip.Prefix, timeout time.Duration) (string, error) {
	if err := inPool(endpoint, pools); err != nil {
		return "", err
	}
	ws := endpoint
	if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		u.Path, u.RawQuery = "/json/version", ""
		client := &http.Client{Timeout: timeout,
			Transport:     &http.Transport{Proxy: nil, ForceAttemptHTTP2: false},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(u.String())
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrLiveEndpoint, endpoint, err)
		}
		defer resp.Body.Close()
		var v struct {
			WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%w %q: /json/version answered %s", ErrLiveEndpoint, endpoint, resp.Status)
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || v.WebSocketDebuggerURL == "" {
			return "", fmt.Errorf("%w %q: /json/version has no webSocketDebuggerUrl", ErrLiveEndpoint, endpoint)
		}
		ws = v.WebSocketDebuggerURL
	}
	// The browser names its WebSocket URL from the request's Host: a
	// forwarder that rewrites it must still point into the pool.
	if err := inPool(ws, pools); err != nil {
		return "", fmt.Errorf("the browser at %s answered with %s: %v", endpoint, ws, err)
	}
	return ws, nil
}

// inPool checks that the host of a pool URL is an address in the pool's
// networks: the daemon drives only browsers there, and pages never reach
// them.
func inPool(raw string, pools []netip.Prefix) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%q is not a URL with a host", raw)
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return fmt.Errorf("%s is a name, not the pool host's address", u.Hostname())
	}
	if !poolContains(pools, a) {
		return fmt.Errorf("%s is outside pool_cidrs %s: browsergate drives only browsers in the pool's networks, which pages never reach", a, prefixList(pools))
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

// forgetGoneBrowser lets the next session reach a pool host's browser
// anew when the one at wsURL restarted (the endpoint answers with another
// WebSocket URL): a browser the backend does not own is never started
// again by it, so without this its sessions would fail for the daemon's
// life. The sessions still on the old browser have lost it already. Only
// for a remote backend.
func (b *backend) forgetGoneBrowser(wsURL string) {
	if b.key.manifest.Browser.Remote == nil {
		return
	}
	if b.oneSession() {
		b.forgetOwnBrowser(wsURL)
		return
	}
	b.startFailed.Store(time.Now().UnixNano())
	now, err := poolBrowserURL(b.key.endpoint, b.key.manifest.Browser.Remote.PoolCIDRs, b.startup)
	if err != nil || now == wsURL {
		// The same browser, or no answer (a slow or unreachable host):
		// the sessions still on it may be fine, and letting it go would
		// end them all. A browser that comes back restarted answers with
		// another URL, and the next failure lets it go then.
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started && b.wsURL == wsURL {
		b.logger.Warn("a pool host's browser restarted: the next session reaches it anew", "endpoint", b.key.endpoint, "was", wsURL, "now", now)
		b.release()
	}
}
