package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// openGate starts the egress gate for browsers on other hosts at addr
// (serve --gate-listen), or none when addr is empty. A manifest with
// connect = "remote" needs it; the address must be one the pool's hosts
// dial, so a name or an unspecified address is refused: the browser
// contexts are told to use exactly this address.
func openGate(addr string, ms []*toolclad.Manifest, logger *slog.Logger) (*egress.Gateway, error) {
	var remote []string
	for _, m := range ms {
		if m.Browser.Remote != nil {
			remote = append(remote, m.Path)
		}
	}
	if addr == "" {
		if len(remote) > 0 {
			return nil, fmt.Errorf("%w: %s connects to a remote pool (connect = \"remote\"): start serve with --gate-listen IP:PORT, an address of this host the pool's hosts reach, for their pages' requests", errUsage, remote[0])
		}
		return nil, nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Addr().IsUnspecified() || ap.Addr().Zone() != "" {
		return nil, fmt.Errorf("%w: --gate-listen %q: give the IP:PORT the pool's hosts reach this host at (like 10.0.5.1:8118), not a name or an unspecified address: each session's browser context is told to use exactly it", errUsage, addr)
	}
	var pools []netip.Prefix
	for _, m := range ms {
		if m.Browser.Remote != nil {
			pools = append(pools, m.Browser.Remote.PoolCIDRs...)
		}
	}
	warner := &refusalWarner{logger: logger.With("source", "gate"), pools: pools, now: time.Now}
	gate, err := egress.NewGateway(egress.GatewayConfig{Logger: logger.With("source", "gate"), OnRefused: warner.refused})
	if err != nil {
		return nil, err
	}
	at, err := gate.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("--gate-listen: %w", err)
	}
	if len(remote) == 0 {
		logger.Info("the gate for browsers on other hosts listens, but no manifest connects to a remote pool", "gate", at)
	} else {
		logger.Info("the gate for browsers on other hosts listens", "gate", at)
	}
	return gate, nil
}

// refusalWarner warns of the gate's refusals that are not part of a
// browser's ordinary use of it: credentials that are wrong (not missing:
// a browser's first request may carry none, answered with the challenge;
// a request of a session just ended, its credentials gone, warns like
// made-up ones, once a minute), or any request from outside every
// pool's networks — someone on the network trying the gate, or a browser
// given what is not its session's. At most one warning a minute for each
// client address; every refusal is also counted (Gateway.Refused) and
// logged at debug by the gate.
type refusalWarner struct {
	logger *slog.Logger
	pools  []netip.Prefix
	now    func() time.Time

	mu         sync.Mutex
	last       map[netip.Addr]time.Time // when each address was last warned of
	window     time.Time                // when the current minute of warnings began
	warned     int                      // warnings in it
	suppressed int                      // refusals in it not warned of for the cap
}

// refusalWarnEvery is how often refusalWarner warns of one address.
const refusalWarnEvery = time.Minute

// refusalWarnCap bounds the warnings of a minute, whatever the addresses:
// a client that changes its address (a whole IPv6 network) cannot fill
// the log; the refusals past it are counted in the next minute's first
// warning.
const refusalWarnCap = 20

func (w *refusalWarner) refused(remote netip.AddrPort, why string) {
	addr := remote.Addr().Unmap()
	inPool := slices.ContainsFunc(w.pools, func(p netip.Prefix) bool { return p.Contains(addr) })
	if inPool && (why == egress.AuthMissing || why == egress.AuthRemoved) {
		return
	}
	now := w.now()
	w.mu.Lock()
	if w.last == nil || len(w.last) >= 4096 {
		// Forget the addresses not warned of within the interval, so that
		// many addresses cannot grow the map without bound.
		kept := map[netip.Addr]time.Time{}
		for a, at := range w.last {
			if now.Sub(at) < refusalWarnEvery && len(kept) < 2048 {
				kept[a] = at
			}
		}
		w.last = kept
	}
	at, seen := w.last[addr]
	warn := !seen || now.Sub(at) >= refusalWarnEvery
	var before int
	if now.Sub(w.window) >= refusalWarnEvery {
		before, w.window, w.warned, w.suppressed = w.suppressed, now, 0, 0
	}
	if warn && w.warned >= refusalWarnCap {
		warn = false
		w.suppressed++
	}
	if warn {
		w.last[addr] = now
		w.warned++
	}
	w.mu.Unlock()
	if before > 0 {
		w.logger.Warn("the gate refused more requests than it warns of in a minute", "not_warned_of", before)
	}
	if !warn {
		return
	}
	where := "an address of a pool's networks"
	if !inPool {
		where = "an address outside every pool's networks"
	}
	w.logger.Warn("the gate refused a request: "+why+", from "+where+" (at most one warning a minute for each address)",
		"remote", remote.String(), "reason", why)
}

// probePools runs the conformance probe (executor.ProbePool) on every
// endpoint of each remote manifest, and on a browser each Selenium Grid
// makes for it (executor.ProbeGrid) and on one each browserless launches
// for it (executor.ProbeBrowserless), with a gate of its own at gateListen;
// without it, it says that nothing was probed. A browser that fails makes
// doctor fail.
func probePools(files []string, gateListen string, stdout io.Writer) error {
	var remote []*toolclad.Manifest
	for _, f := range files {
		if m, err := toolclad.Load(f); err == nil && m.Browser.Remote != nil {
			remote = append(remote, m)
		}
	}
	if len(remote) == 0 {
		return nil
	}
	if gateListen == "" {
		fmt.Fprintln(stdout, "remote pools: not probed (give doctor --gate-listen IP:PORT, an address the pool's hosts reach, to probe each pool browser)")
		return nil
	}
	gate, err := openGate(gateListen, remote, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer gate.Close()
	failed := 0
	for _, m := range remote {
		r := m.Browser.Remote
		if r.Provider == toolclad.ProviderSelenium {
			if err := executor.ProbeGrid(r.URL, r.CredentialsFile, r.PoolCIDRs, gate); err != nil {
				failed++
				fmt.Fprintf(stdout, "%s: a browser of the Grid at %s: FAILED the conformance probe: %v\n", m.Path, r.URL, err)
				continue
			}
			fmt.Fprintf(stdout, "%s: a browser of the Grid at %s: passed the conformance probe (a WebDriver session made for it with se:cdp in the pool, and deleted; a Chromium, new targets wait at start, a context's proxy is honoured)\n", m.Path, r.URL)
			continue
		}
		if r.Provider == toolclad.ProviderBrowserless {
			if err := executor.ProbeBrowserless(r.URL, r.CredentialsFile, r.PoolCIDRs, gate); err != nil {
				failed++
				fmt.Fprintf(stdout, "%s: a browser of browserless at %s: FAILED the conformance probe: %v\n", m.Path, r.URL, err)
				continue
			}
			fmt.Fprintf(stdout, "%s: a browser of browserless at %s: passed the conformance probe (launched for it, and killed; a Chromium, new targets wait at start, a context's proxy is honoured)\n", m.Path, r.URL)
			continue
		}
		for _, ep := range r.Endpoints {
			if err := executor.ProbePool(ep, r.PoolCIDRs, gate); err != nil {
				failed++
				fmt.Fprintf(stdout, "%s: %s: FAILED the conformance probe: %v\n", m.Path, ep, err)
				continue
			}
			fmt.Fprintf(stdout, "%s: %s: passed the conformance probe (a Chromium, its browser endpoint, new targets wait at start, a context's proxy is honoured)\n", m.Path, ep)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d pool browser(s) failed the conformance probe: sessions on them would be refused", failed)
	}
	return nil
}
