package executor

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sync/atomic"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// The egress proxy is the second layer of the request guard. Request
// interception decides before a request is sent, but Chromium may already
// have opened a TCP connection (and sent a TLS ClientHello) to the
// forbidden address for a navigation or an iframe; through the proxy the
// browser connects to nothing but the proxy. The proxy resolves each name
// once, checks every answer, and dials the checked address, so DNS
// rebinding cannot swap the target.

// proxyBypass makes Chromium send loopback and link-local traffic through
// the proxy too: by default it sends them around any proxy.
const proxyBypass = "<-loopback>"

// proxyFlags are the launch switches that put every request of the
// browser behind the proxy: no direct fallback, no QUIC, WebRTC limited to
// proxied traffic, and no local DNS (the proxy resolves; a name Chromium
// tried to resolve itself would fail rather than leak a lookup).
func proxyFlags(proxyAddr string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ProxyServer("http://" + proxyAddr),
		chromedp.Flag("proxy-bypass-list", proxyBypass),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-quic", true),
	}
}

// setScope rebuilds the backend's scope so that its DevTools endpoint
// (devtoolsEndpoint; none before a launched browser runs) can never be
// reached from a page.
func (b *backend) setScope(devtools netip.AddrPort) error {
	var deny []netip.AddrPort
	if devtools.IsValid() {
		deny = append(deny, devtools)
	}
	sc, err := manifestScope(b.key.manifest, deny)
	if err == nil {
		sc, err = sc.WithDeniedNetworks(append(slices.Clone(b.sharedDeny), b.deniedNets...)...)
	}
	if err != nil {
		return err
	}
	b.scope.Store(sc)
	return nil
}

// denyMore refuses the networks nets to the backend's pages from now on
// (a reload that brought a remote manifest with a pool of its own).
func (b *backend) denyMore(nets []scope.DeniedNetwork) {
	if len(nets) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sharedDeny = append(b.sharedDeny, nets...)
	if sc, err := b.scope.Load().WithDeniedNetworks(nets...); err == nil {
		b.scope.Store(sc)
	}
}

// devtoolsEndpoint is the endpoint the DevTools URL ws names, as refused
// to pages. A browser browsergate launches listens on 127.0.0.1 (its
// --remote-debugging-address), so only that address (and the unspecified
// ones, which reach it) is refused: a site on 127.0.0.3 at the same port
// is not the browser. Where a live browser listens is not known (Chrome
// started with --remote-debugging-address=0.0.0.0 is reached at every
// address), so its port is refused on every address.
func (b *backend) devtoolsEndpoint(ws string) (netip.AddrPort, bool) {
	ap, ok := devtoolsAddr(ws)
	if !ok {
		return netip.AddrPort{}, false
	}
	if b.key.connect == "live" {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port()), true
	}
	return ap, true
}

// newProxy starts an egress proxy on a random loopback port. Its refusals
// go to log (nil: logged only). withBackend (sess nil): closed with the
// backend (the browser-wide proxy), so b.mu must be held (start); otherwise
// its session closes it, and sessions call this without the lock.
func (b *backend) newProxy(log *blockLog, sess *sessionEgress) (*egress.Proxy, string, error) {
	withBackend := sess == nil
	p, err := b.newDialProxy(log, sess)
	if err != nil {
		return nil, "", err
	}
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		b.listeners.add(ap, "an egress proxy of browsergate's")
	}
	if withBackend {
		b.cancel = append(b.cancel, func() {
			p.Close()
			b.forgetProxy(addr)
		})
	}
	return p, addr, nil
}

// newDialProxy is newProxy's egress proxy without its listener: the
// browserless engine dials through it (Proxy.DialContext). Its refusals
// go to log.
func (b *backend) newDialProxy(log *blockLog, sess *sessionEgress) (*egress.Proxy, error) {
	logger, denied := b.logger, slog.Leveler(slog.LevelWarn)
	if sess == nil {
		logger, denied = b.logger.With("source", "browser"), browserRefusalLevel(b.key.headless)
	}
	return egress.New(egress.Config{
		Policy:   policyRef{b: b, s: sess},
		Resolver: b.resolver,
		OnDecision: func(d egress.Decision) {
			if !d.Allowed && sess != nil && isUnreachableRule(d.Rule) {
				// The site did not answer: no refusal (unreachable.go).
				sess.unreachable.note(d.Target, d.Reason)
				return
			}
			if !d.Allowed && log != nil {
				log.add(Blocked{Time: d.Time, URL: d.Target, Rule: d.Rule, Reason: d.Reason, Layer: "proxy"})
			}
		},
		Logger:      logger,
		DeniedLevel: denied,
	})
}

// browserRefusalLevel is the level the browser-wide proxy logs its
// refusals at. That proxy carries the launched browser's own requests,
// never a session's: each session's browser context has a proxy of its
// own (set when the context is made, so nothing a page does moves its
// requests to another proxy), and its refusals stay warnings, whatever
// host or URL they name. What reaches the browser-wide proxy is what no
// session's page asked for: Chromium's background services ask for
// Google's hosts in every run (the accounts list of its profile, the
// component updater, safe browsing, the optimization guide), and no
// switch stops all of them. In a headless browser nothing else can reach
// it (there is no window outside the sessions' contexts), so those are
// logged at debug: refused as any request is, they tell the operator
// nothing. A visible browser's first window is a person's, whose pages
// share that proxy and cannot be told from the browser's services by
// anything the proxy sees, so there they stay at info.
func browserRefusalLevel(headless bool) slog.Level {
	if headless {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func (b *backend) forgetProxy(addr string) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		b.listeners.remove(ap)
	}
}

// policyRef lets a proxy read the backend's current scope, and refuses the
// daemon's own endpoints.
type policyRef struct {
	b *backend
	s *sessionEgress // the session whose pages the proxy carries (nil: the browser's own traffic)
}

func (r policyRef) CheckHost(host string, port uint16) scope.Verdict {
	v := r.b.scope.Load().CheckHost(host, port)
	if r.s != nil {
		// An origin a human approved for the session (only what the
		// scope marked askable is lifted); its addresses are judged as
		// every answer is (CheckAddrPort).
		v = r.s.outside.CheckHost(v)
	}
	if v.Allowed {
		if deny, ok := r.b.listeners.hostVerdict(v.Host, port); ok {
			return deny
		}
	}
	// A document a secret was typed into sends only to the secret's
	// domains (WebSockets come here, not through interception). The
	// agent's own navigation away is let through, to the hosts
	// interception saw it go to, and nothing else.
	if r.s != nil && v.Allowed && !r.s.bound.IsLeavingTo(host) {
		if refuse, ok := r.s.bound.Judge(host, false); ok {
			return refuse
		}
	}
	return v
}

func (r policyRef) CheckAddrPort(ap netip.AddrPort) scope.Verdict {
	if deny, ok := r.b.listeners.verdict(ap); ok {
		return deny
	}
	return r.b.scope.Load().CheckAddrPort(ap)
}

// devtoolsAddr is the address of a live DevTools endpoint (ws:// URL).
func devtoolsAddr(ws string) (netip.AddrPort, bool) {
	u, err := url.Parse(ws)
	if err != nil {
		return netip.AddrPort{}, false
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return netip.AddrPort{}, false
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ap, err := netip.ParseAddrPort(net.JoinHostPort(host, port))
	return ap, err == nil
}

// manifestScope is a manifest's scope with extra endpoints that are
// always refused (the browser's DevTools port).
func manifestScope(m *toolclad.Manifest, deny []netip.AddrPort) (*scope.Scope, error) {
	sc, err := m.Scope().WithDenied(deny...)
	if err != nil {
		return nil, fmt.Errorf("%s: [browser.scope]: %w", m.Path, err)
	}
	return sc, nil
}

// sessionEgress is the session's share of the request guard.
type sessionEgress struct {
	proxy   *egress.Proxy       // the session's own egress proxy
	blocked *blockLog           // requests the guard refused for this session
	acting  *actingGuard        // what the gate judged of the action running now
	bound   *gate.SecretBinding // the document a secret was typed into, held to its domains
	// outside are the origins outside allowed_domains a human approved a
	// navigate to: reachable by the session's pages until it ends
	// (scopeask.go).
	outside *gate.OutsideOrigins
	// unreachable are the session's dials that failed: sites that did
	// not answer, kept apart from blocked (unreachable.go).
	unreachable unreachableLog
	guard       *targetGuard // the session's target guard (nil before the first tab)
	// ic is the current tab's interceptor (nil before the first tab): its
	// docGen tells the tab's document apart.
	ic atomic.Pointer[interceptor]
}
