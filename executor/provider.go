package executor

import (
	"fmt"
	"net/netip"

	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// provider is where a backend's browser comes from: a Chromium the
// backend launches on this machine (launchProvider), the user's own
// (liveProvider), a browser on a pool host (remoteProvider, remote.go),
// or one a Selenium Grid or a browserless makes for one session
// (seleniumProvider, selenium.go; browserlessProvider, browserless.go). The rest of the executor — sessions, the loop, the guard
// — does not know which: a session asks the backend for its browser
// (running) and for the proxy its browser context names (sessionProxy).
type provider interface {
	// start brings the browser up or reaches it, within the backend's
	// startup timeout; b.mu is held. It sets b.alloc (and b.root for a
	// browser whose lifetime the backend owns), b.wsURL and the backend's
	// scope, adds to b.cancel what stopping must undo, and returns the
	// browser's DevTools endpoint as refused to pages (none: not known).
	start(b *backend) (netip.AddrPort, error)
	// ownConnections says whether each session holds a DevTools
	// connection of its own (from b.alloc) rather than a target of the
	// backend's one connection (b.root): a browser the backend does not
	// own is left running when a session's connection closes.
	ownConnections() bool
	// sessionProxy makes p, the egress proxy of one session, reachable by
	// the browser: it returns the proxyServer its browser context names,
	// the credentials the session's guard answers the proxy's challenge
	// with (nil: it asks none), and what stops it.
	sessionProxy(b *backend, p *egress.Proxy) (server string, creds *egress.Credentials, stop func(), err error)
}

// providerFor is the provider of a manifest's browser.
func providerFor(m *toolclad.Manifest, gate *egress.Gateway) provider {
	switch m.Browser.Connect {
	case "live":
		return liveProvider{}
	case toolclad.ConnectRemote:
		switch ownBrowserProvider(m) {
		case toolclad.ProviderSelenium:
			return seleniumProvider{remoteProvider{gate: gate}}
		case toolclad.ProviderBrowserless:
			return browserlessProvider{remoteProvider{gate: gate}}
		}
		return remoteProvider{gate: gate}
	default:
		return launchProvider{}
	}
}

// launchProvider launches a Chromium of the backend's own on this machine
// (startLaunch); its sessions' proxies listen on loopback.
type launchProvider struct{}

func (launchProvider) start(b *backend) (netip.AddrPort, error) { return b.startLaunch() }
func (launchProvider) ownConnections() bool                     { return false }
func (launchProvider) sessionProxy(b *backend, p *egress.Proxy) (string, *egress.Credentials, func(), error) {
	return loopbackProxy(b, p)
}

// liveProvider attaches to the user's own browser on this machine
// (startLive); in an isolated context its sessions' proxies listen on
// loopback, in the user's context there are none.
type liveProvider struct{}

func (liveProvider) start(b *backend) (netip.AddrPort, error) { return b.startLive() }
func (liveProvider) ownConnections() bool                     { return true }
func (liveProvider) sessionProxy(b *backend, p *egress.Proxy) (string, *egress.Credentials, func(), error) {
	return loopbackProxy(b, p)
}

// loopbackProxy has p listen on a port of this machine's loopback, which
// the browser on this machine reaches and pages never do (listeners).
func loopbackProxy(b *backend, p *egress.Proxy) (string, *egress.Credentials, func(), error) {
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		p.Close()
		return "", nil, nil, err
	}
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		b.listeners.add(ap, "an egress proxy of browsergate's")
	}
	return "http://" + addr, nil, func() {
		p.Close()
		b.forgetProxy(addr) // once closed: until then the port is its
	}, nil
}

// errNoGate is the error of a remote session when the daemon serves no
// gate for browsers elsewhere.
var errNoGate = fmt.Errorf("%w: connect = \"remote\" needs the daemon's gate for browsers elsewhere: start serve with --gate-listen ADDR, an address the pool's hosts reach", ErrBrowserStart)
