package executor

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// seleniumProvider gets each browsergate session a browser of its own
// from a Selenium Grid 4 ([browser.remote] provider = "selenium"): a
// WebDriver session made when the session needs its browser, driven over
// the se:cdp WebSocket the Grid answers with, and deleted when the
// session ends (or the daemon closes). The rest is the remote provider's:
// the session's browser context names the daemon's gate as its proxy,
// with the session's credentials, the guard, the deny class, and the
// conformance probe before the browser serves the session.
//
// Each such browser is a backend of its own, for one session
// (oneSession): its key names a slot, not the Grid (ownBrowserKey), so no
// other session shares it, and its end is the browser's.
type seleniumProvider struct{ remoteProvider }

func (p seleniumProvider) start(b *backend) (netip.AddrPort, error) {
	rm := b.key.manifest.Browser.Remote
	if p.gate == nil || p.gate.Addr() == "" {
		return netip.AddrPort{}, errNoGate
	}
	if err := inPool(rm.URL, rm.PoolCIDRs); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: the Grid's url: %v", ErrBrowserStart, err)
	}
	grid, err := newGridClient(rm.URL, rm.CredentialsFile)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	logger := b.logger.With("grid", rm.URL)
	gs, err := grid.create(b.startup, gridCapabilities(gateHost(p.gate.Addr())), func(id string, err error) {
		if err != nil {
			logger.Warn("the Grid made a session after the daemon stopped waiting, and it could not be deleted: the Grid's session timeout ends it", loggedSession(id), "error", err)
			return
		}
		logger.Info("the Grid made a session after the daemon stopped waiting: it was deleted", loggedSession(id))
	})
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	let := func() {
		if err := grid.delete(gs.id); err != nil {
			logger.Warn("a Grid session could not be deleted: the Grid's session timeout ends it", loggedSession(gs.id), "error", err)
			return
		}
		logger.Debug("Grid session deleted", "webdriver_session", gs.id)
	}
	kept := false
	defer func() {
		if !kept {
			let()
		}
	}()
	if err := checkGridCDP(rm.URL, gs, rm.PoolCIDRs); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	devtools, cancel, err := p.serveOwnBrowser(b, gs.cdp, grid.header())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %s, session %s: %v", ErrBrowserStart, rm.URL, shortSession(gs.id), err)
	}
	stopKeeping := grid.keepAlive(gs.id, grid.keepAliveEvery(), func(err error) {
		logger.Warn("the Grid ended a session's browser: the session ends with it", loggedSession(gs.id), "error", err)
	})
	// release runs these last first: the connections close, the session
	// is no longer kept alive, then the Grid quits the browser.
	b.cancel = append(b.cancel, let, stopKeeping, cancel)
	kept = true
	logger.Info("a Grid session is the browser of a browsergate session", loggedSession(gs.id))
	return devtools, nil
}

// loggedSession is a WebDriver session id as the daemon's log shows it
// above debug: its first 8 characters. The whole id drives the session's
// browser through the Grid (which answers se:cdp without its basic
// authentication), so it is not for every reader of the log; debug
// shows it whole.
func loggedSession(id string) slog.Attr {
	return slog.String("webdriver_session", shortSession(id))
}

// shortSession is a WebDriver session id by its first 8 characters, as
// logs above debug and the errors an agent is told show it.
func shortSession(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// parsedURL is the URL raw parses to (nil if it does not: hostPort says "").
func parsedURL(raw string) *url.URL {
	u, _ := url.Parse(raw)
	return u
}

// serveOwnBrowser makes the browser at ws, a session's own, the
// backend's: the conformance probe, then the deny class and the scope,
// and the allocator of the session's connections, each sending header.
// It returns the browser's DevTools endpoint as refused to pages, and
// what closes the allocator.
func (p remoteProvider) serveOwnBrowser(b *backend, ws string, header http.Header) (netip.AddrPort, context.CancelFunc, error) {
	rm := b.key.manifest.Browser.Remote
	if err := probePool(ws, header, p.gate); err != nil {
		return netip.AddrPort{}, nil, err
	}
	devtools, _ := devtoolsAddr(ws)
	b.deniedNets = remoteDeniedNetworks(rm.PoolCIDRs, p.gate.Addr())
	if err := b.setScope(devtools); err != nil {
		return netip.AddrPort{}, nil, err
	}
	b.wsURL, b.dialHeader = ws, header
	alloc, cancel := remote.NewAllocator(context.Background(), ws, remote.NoModifyURL, remote.WithDialHTTPHeader(header))
	b.alloc = alloc
	return devtools, cancel, nil
}

// gridCapabilities are the W3C capabilities a Grid is asked for: a
// Chromium (browserName "chrome", which a Grid's Chrome and Chromium
// nodes both answer), headless and quiet on a closed network as a
// launched one is (launchFlags), with popups blocked (chromedriver turns
// the blocker off unless told not to), WebRTC kept to proxied traffic,
// and no name resolved by the browser itself: the gate resolves what
// its pages ask for, and the browser has nothing else to look up. The
// rule that maps every host to nothing maps addresses too (a context
// whose proxy is the gate's address reached nothing with it: measured),
// so the gate's host, gateHost, is left out of it.
func gridCapabilities(gateHost string) map[string]any {
	return map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"args":            ownBrowserArgs(gateHost),
			"excludeSwitches": []string{"disable-popup-blocking"},
		},
	}
}

// ownBrowserArgs are the flags of a session's own browser on a pool
// (gridCapabilities, browserlessLaunch): headless and quiet on a closed
// network as a launched one is (launchFlags), WebRTC kept to proxied
// traffic, and no name resolved by the browser itself but the gate's
// host, gateHost.
func ownBrowserArgs(gateHost string) []string {
	return []string{
		"--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--no-pings", "--disable-domain-reliability",
		"--disable-features=" + quietFeatures,
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE " + gateHost,
	}
}

// oneSession says the backend's browser serves one session only (a Grid
// session, or a browserless browser, of its own): it stops when that
// session ends.
func (b *backend) oneSession() bool { return ownBrowser(b.key.manifest) }

// ownBrowser says each session of m gets a browser of its own (from a
// Selenium Grid or a browserless).
func ownBrowser(m *toolclad.Manifest) bool { return ownBrowserProvider(m) != "" }

// ownBrowserProvider is the provider of m that gives each session a
// browser of its own ("": none does).
func ownBrowserProvider(m *toolclad.Manifest) string {
	if r := m.Browser.Remote; r != nil && (r.Provider == toolclad.ProviderSelenium || r.Provider == toolclad.ProviderBrowserless) {
		return r.Provider
	}
	return ""
}

// forgetOwnBrowser lets the session's next call get a new browser when
// the one at wsURL could not open its context (the Grid or browserless
// ended it: a session timeout, a node restarted): the old one is deleted,
// should it still be there.
func (b *backend) forgetOwnBrowser(wsURL string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started && b.wsURL == wsURL {
		rm := b.key.manifest.Browser.Remote
		b.logger.Warn("a session's own browser could not open a context: the next call asks for another", "provider", rm.Provider, "url", rm.URL)
		b.release()
	}
}

// ProbeGrid runs the conformance probe a session's acquire runs on a
// browser of the Selenium Grid at gridURL (doctor's probe), with gate as
// the throwaway context's proxy: the Grid makes a WebDriver session for
// it, whose se:cdp must be an address in pools as the Grid's must, and
// deletes it after.
func ProbeGrid(gridURL, credentialsFile string, pools []netip.Prefix, gate *egress.Gateway) (err error) {
	if gate == nil || gate.Addr() == "" {
		return errNoGate
	}
	if err := inPool(gridURL, pools); err != nil {
		return err
	}
	grid, err := newGridClient(gridURL, credentialsFile)
	if err != nil {
		return err
	}
	gs, err := grid.create(3*probeWait, gridCapabilities(gateHost(gate.Addr())), nil)
	if err != nil {
		return err
	}
	defer func() {
		if derr := grid.delete(gs.id); derr != nil && err == nil {
			err = derr
		}
	}()
	if err := checkGridCDP(gridURL, gs, pools); err != nil {
		return err
	}
	return probePool(gs.cdp, grid.header(), gate)
}

// checkGridCDP holds the se:cdp a Grid answered a session with to the
// Grid's own address (and the pool's networks, as an endpoint of cdp-url
// is held): the daemon speaks DevTools only through the Grid it was told
// of, never to an address the Grid names. A hub whose nodes were not told
// the Grid's URL names a node's host with the hub's port (measured on
// Grid 4.48.0), which this refuses saying what to set.
func checkGridCDP(gridURL string, gs gridSession, pools []netip.Prefix) error {
	if err := inPool(gs.cdp, pools); err != nil {
		return fmt.Errorf("the Grid answered session %s with se:cdp at %s: %v", shortSession(gs.id), hostPort(parsedURL(gs.cdp)), err)
	}
	grid, gerr := url.Parse(gridURL)
	cdp, cerr := url.Parse(gs.cdp)
	if gerr != nil || cerr != nil || hostPort(cdp) != hostPort(grid) {
		return fmt.Errorf("the Grid answered session %s with se:cdp at %s, not at its own address %s: give each node the Grid's URL as its grid-url (%q), so that DevTools go through the Grid", shortSession(gs.id), hostPort(cdp), hostPort(grid), gridURL)
	}
	// The Grid's credentials go with the WebSocket's handshake: never in
	// clear to a Grid reached over TLS.
	if want := map[string]string{"http": "ws", "https": "wss"}[grid.Scheme]; cdp.Scheme != want {
		return fmt.Errorf("the Grid at %s answered session %s with se:cdp over %s, not %s", gridURL, shortSession(gs.id), cdp.Scheme, want)
	}
	return nil
}

// hostPort is a URL's host and port, the port its scheme's default when
// it names none (nil: "").
func hostPort(u *url.URL) string {
	if u == nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// gateHost is the host of the gate's address, as a host rule names it
// (an IPv6 address in brackets).
func gateHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
