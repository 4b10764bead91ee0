package executor

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/browsergate/browsergate/scope"
)

// listeners are the daemon's own network endpoints: the DevTools endpoint
// of every browser it drives and every egress proxy of every backend.
// Every backend refuses all of them, not only its own, so that an agent
// of one manifest cannot read another backend's DevTools (/json/list
// hands out session URLs), close its tabs, or use its proxy.
//
// An endpoint is registered as what it listens on. One on an address
// (the proxies and a launched browser's DevTools port, on 127.0.0.1) is
// reached at that address and at the unspecified addresses, which a
// connection takes to this machine's loopback; the same port on another
// address (127.0.0.3, where a site may listen) is someone else's. One on
// every address (0.0.0.0, ::), or whose address is not known (a live
// browser's DevTools port), is reached at every loopback address and at
// each of this machine's interface addresses as well (every address an
// interface had as an endpoint on every address was registered, then or
// earlier). Each registration is counted: an endpoint
// registered twice stays refused until both are removed.
type listeners struct {
	mu sync.RWMutex
	// at are the endpoints by key: on one address, its IPv4 address
	// unmapped; on every address, 0.0.0.0 (everywhere).
	at map[netip.AddrPort]*listener
	// local are this machine's interface addresses, as read at each
	// registration of an endpoint on every address, all kept.
	local map[netip.Addr]bool
	// gen counts the changes to what is refused; watchers are called
	// after each (watch).
	gen      uint64
	watchers map[int]func()
	nextW    int
}

type listener struct {
	what string // names it in refusals
	n    int    // registrations not yet removed
}

// key is ap's address unmapped, without a zone, and 0.0.0.0 for both
// unspecified addresses; every says ap is on every address.
func key(ap netip.AddrPort) (k netip.AddrPort, every bool) {
	a := ap.Addr().Unmap().WithZone("")
	if a.IsUnspecified() {
		return everywhere(ap.Port()), true
	}
	return netip.AddrPortFrom(a, ap.Port()), false
}

// everywhere is the key of an endpoint on every address at port.
func everywhere(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.IPv4Unspecified(), port)
}

// add registers an endpoint; what names it in refusals.
func (l *listeners) add(ap netip.AddrPort, what string) {
	k, every := key(ap)
	var local []netip.Addr
	if every {
		local = interfaceAddrs()
	}
	l.mu.Lock()
	if l.at == nil {
		l.at, l.local = map[netip.AddrPort]*listener{}, map[netip.Addr]bool{}
	}
	changed := false
	for _, a := range local {
		if !l.local[a] {
			l.local[a] = true // added to, never taken from: an interface down now may be up again
			changed = true
		}
	}
	e := l.at[k]
	if e == nil {
		e = &listener{}
		l.at[k] = e
		changed = true
	}
	e.what = what // the latest: a port's earlier holder may be closing
	e.n++
	l.changedLocked(changed)
}

// changedLocked ends a change made under l.mu: when it changed what is
// refused, it counts it and calls the watchers, outside the lock.
func (l *listeners) changedLocked(changed bool) {
	var fns []func()
	if changed {
		l.gen++
		for _, fn := range l.watchers {
			fns = append(fns, fn)
		}
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// watch has fn called after each change to what is refused (an endpoint
// registered where none was, or forgotten), once the change is made, on
// the goroutine that made it. It returns the generation at the call (fn
// is called for every change after it) and a func that stops the calls.
func (l *listeners) watch(fn func()) (gen uint64, stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchers == nil {
		l.watchers = map[int]func(){}
	}
	l.nextW++
	id := l.nextW
	l.watchers[id] = fn
	return l.gen, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.watchers, id)
	}
}

// generation counts the changes to what is refused so far.
func (l *listeners) generation() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.gen
}

// interfaceAddrs are this machine's interface addresses, unmapped (none
// when they cannot be read).
func interfaceAddrs() []netip.Addr {
	var out []netip.Addr
	addrs, _ := net.InterfaceAddrs()
	for _, ia := range addrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
}

// remove takes back one registration of an endpoint; once none is left,
// the endpoint is forgotten (its port may be reused at once).
func (l *listeners) remove(ap netip.AddrPort) {
	l.mu.Lock()
	k, _ := key(ap)
	changed := false
	if e := l.at[k]; e != nil {
		if e.n--; e.n <= 0 {
			delete(l.at, k)
			changed = true
		}
	}
	l.changedLocked(changed)
}

// verdict refuses ap when it reaches one of the daemon's endpoints.
func (l *listeners) verdict(ap netip.AddrPort) (scope.Verdict, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	k, unspecified := key(ap)
	e := l.at[k]
	if a := k.Addr(); e == nil && (a.IsLoopback() || l.local[a]) {
		e = l.at[everywhere(k.Port())]
	}
	if e == nil && unspecified {
		// 0.0.0.0 and :: reach this machine's loopback: every endpoint
		// on the port, on whatever address.
		for at, x := range l.at {
			if at.Port() == k.Port() {
				e = x
				break
			}
		}
	}
	if e == nil {
		return scope.Verdict{}, false
	}
	return scope.Verdict{Allowed: false, Host: ap.Addr().String(), Rule: "browsergate endpoint",
		Reason: fmt.Sprintf("%s is %s", ap, e.what)}, true
}

// hostVerdict is verdict for a host the scope has judged (Verdict.Host,
// canonical: an IP literal, bracketed if IPv6, or a name) at port. A
// localhost name is judged at 127.0.0.1 and ::1, where Chromium connects
// it without asking DNS; another name is judged where it is resolved
// (policyRef.CheckAddrPort).
func (l *listeners) hostVerdict(host string, port uint16) (scope.Verdict, bool) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return l.verdict(netip.AddrPortFrom(a, port))
	}
	if !scope.IsLocalhost(host) {
		return scope.Verdict{}, false
	}
	for _, a := range localhostAddrs {
		if v, deny := l.verdict(netip.AddrPortFrom(a, port)); deny {
			v.Host = host
			return v, true
		}
	}
	return scope.Verdict{}, false
}

// refusedPorts are the ports at which hostVerdict refuses host. Only an
// endpoint's own port can be refused, so only those are asked.
func (l *listeners) refusedPorts(host string) map[uint16]bool {
	l.mu.RLock()
	ports := map[uint16]bool{}
	for k := range l.at {
		ports[k.Port()] = true
	}
	l.mu.RUnlock()
	out := map[uint16]bool{}
	for p := range ports {
		if _, deny := l.hostVerdict(host, p); deny {
			out[p] = true
		}
	}
	return out
}

// localhostAddrs are where Chromium connects a localhost name.
var localhostAddrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
