package executor

import (
	"fmt"
	"net/netip"
	"strconv"
	"sync"

	"github.com/browsergate/browsergate/scope"
)

// listeners are the daemon's own network endpoints: the DevTools endpoint
// of every browser it drives and every egress proxy of every backend.
// Every backend refuses all of them, not only its own, so that an agent
// of one manifest cannot read another backend's DevTools (/json/list
// hands out session URLs), close its tabs, or use its proxy.
type listeners struct {
	mu sync.RWMutex
	// byPort are endpoints on loopback or on every address: reachable on
	// any loopback address (127.0.0.0/8, ::1) and on the unspecified
	// addresses of the port.
	byPort map[uint16]string
	// exact are endpoints on another address.
	exact map[netip.AddrPort]string
}

// add registers an endpoint; what names it in refusals.
func (l *listeners) add(ap netip.AddrPort, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byPort == nil {
		l.byPort, l.exact = map[uint16]string{}, map[netip.AddrPort]string{}
	}
	if a := ap.Addr().Unmap(); a.IsLoopback() || a.IsUnspecified() {
		l.byPort[ap.Port()] = what
		return
	}
	l.exact[ap] = what
}

// remove forgets an endpoint (its port may be reused at once).
func (l *listeners) remove(ap netip.AddrPort) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := ap.Addr().Unmap(); a.IsLoopback() || a.IsUnspecified() {
		delete(l.byPort, ap.Port())
		return
	}
	delete(l.exact, ap)
}

// verdict refuses ap when it reaches one of the daemon's endpoints.
func (l *listeners) verdict(ap netip.AddrPort) (scope.Verdict, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	what, ok := l.exact[ap]
	if a := ap.Addr().Unmap(); !ok && (a.IsLoopback() || a.IsUnspecified()) {
		what, ok = l.byPort[ap.Port()]
	}
	if !ok {
		return scope.Verdict{}, false
	}
	return scope.Verdict{Allowed: false, Host: ap.Addr().String(), Rule: "browsergate endpoint",
		Reason: fmt.Sprintf("%s is %s", ap, what)}, true
}

// urlVerdict is verdict for an IP-literal URL's address and port (the
// scheme's default port when it names none).
func (l *listeners) urlVerdict(ip netip.Addr, port, scheme string) (scope.Verdict, bool) {
	p := port
	if p == "" {
		p = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[scheme]
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return scope.Verdict{}, false
	}
	return l.verdict(netip.AddrPortFrom(ip, uint16(n)))
}
