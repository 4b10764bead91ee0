package executor

import (
	"fmt"
	"net/netip"

	"github.com/browsergate/browsergate/scope/egress"
)

// browserlessProvider gets each browsergate session a browser of its own
// from a browserless 2 service ([browser.remote] provider =
// "browserless"; browserlessapi.go): a Chromium browserless launches when
// the session needs its browser, held by a connection of the daemon's
// own, driven through /devtools/browser/{id} with the service's token,
// and killed when the session ends (or the daemon closes). The rest is
// the remote provider's, as for a Selenium Grid: the session's browser
// context names the daemon's gate as its proxy, with the session's
// credentials, the guard, the deny class, and the conformance probe
// before the browser serves the session.
type browserlessProvider struct{ remoteProvider }

func (p browserlessProvider) start(b *backend) (netip.AddrPort, error) {
	rm := b.key.manifest.Browser.Remote
	if p.gate == nil || p.gate.Addr() == "" {
		return netip.AddrPort{}, errNoGate
	}
	if err := inPool(rm.URL, rm.PoolCIDRs); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: browserless's url: %v", ErrBrowserStart, err)
	}
	svc, err := newBrowserlessClient(rm.URL, rm.CredentialsFile)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	logger := b.logger.With("browserless", rm.URL)
	br, err := svc.launch(b.startup, browserlessLaunch(gateHost(p.gate.Addr())))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	let := func() {
		if err := br.release(svc); err != nil {
			logger.Warn("a browserless browser could not be killed: it closes when its last connection does", "browser", br.id, "error", err)
			return
		}
		logger.Debug("browserless browser killed", "browser", br.id)
	}
	kept := false
	defer func() {
		if !kept {
			let()
		}
	}()
	devtools, cancel, err := p.serveOwnBrowser(b, br.ws, svc.header())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %s, browser %s: %v", ErrBrowserStart, rm.URL, br.id, err)
	}
	// A browser whose holder browserless closed (its TIMEOUT, a restart)
	// is killed: the session's guard loses its connection, and the
	// session ends with it rather than run on a browser nothing holds.
	stopWatching := br.lost(func() {
		logger.Warn("browserless closed the connection that holds a session's browser (its TIMEOUT, a restart or a kill): the browser is killed and the session ends", "browser", br.id)
		// The session's connections close whatever the kill does, so the
		// session ends even when browserless does not answer.
		cancel()
		if err := svc.kill(br.tracking); err != nil {
			logger.Warn("a browserless browser could not be killed: it closes when its last connection does", "browser", br.id, "error", err)
		}
	})
	// release runs these last first: the connections close, the holder
	// is no longer watched, then the browser is killed.
	b.cancel = append(b.cancel, let, stopWatching, cancel)
	kept = true
	logger.Info("a browserless browser is the browser of a browsergate session", "browser", br.id)
	return devtools, nil
}

// browserlessLaunch are the launch options browserless is asked for
// (puppeteer's, which it passes on): the flags of a session's own
// browser (ownBrowserArgs), with puppeteer's --disable-popup-blocking
// left out so that popups stay blocked, and without puppeteer's default
// viewport: puppeteer would set its 800x600 on every page it sees open,
// over the session's emulation (commands_emulate.go).
func browserlessLaunch(gateHost string) map[string]any {
	return map[string]any{
		"headless":          true,
		"args":              ownBrowserArgs(gateHost),
		"ignoreDefaultArgs": []string{"--disable-popup-blocking"},
		"defaultViewport":   nil,
	}
}

// ProbeBrowserless runs the conformance probe a session's acquire runs
// on a browser of the browserless at serviceURL (doctor's probe), with
// gate as the throwaway context's proxy: browserless launches one for it,
// which is killed after.
func ProbeBrowserless(serviceURL, credentialsFile string, pools []netip.Prefix, gate *egress.Gateway) (err error) {
	if gate == nil || gate.Addr() == "" {
		return errNoGate
	}
	if err := inPool(serviceURL, pools); err != nil {
		return err
	}
	svc, err := newBrowserlessClient(serviceURL, credentialsFile)
	if err != nil {
		return err
	}
	br, err := svc.launch(3*probeWait, browserlessLaunch(gateHost(gate.Addr())))
	if err != nil {
		return err
	}
	defer func() {
		if rerr := br.release(svc); rerr != nil && err == nil {
			err = rerr
		}
	}()
	return probePool(br.ws, svc.header(), gate)
}
