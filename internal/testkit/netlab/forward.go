package netlab

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// Forward makes h accept TCP connections on listenAddr and carry each to
// target, as a pool host carries the gate's connections to the DevTools
// port its Chromium binds on loopback (DESIGN.md, "Past one machine"):
// socat, with TCP_NODELAY on both sides so that small DevTools messages
// are not held back by Nagle's algorithm. Both addresses are an IP literal
// and a port ("10.77.1.2:9223", "127.0.0.1:9222"). Forward returns once
// the forwarder listens (it has not connected to target yet); it is
// stopped when t ends, and skips t when socat is not installed.
func (h *Host) Forward(t testing.TB, listenAddr, target string) {
	t.Helper()
	socat := lookPath("socat")
	if socat == "" {
		t.Skip("netlab: socat is not installed")
	}
	from, err := netip.ParseAddrPort(listenAddr)
	if err != nil || from.Port() == 0 {
		t.Fatalf("netlab: forward from %q: want an IP literal and a port", listenAddr)
	}
	to, err := netip.ParseAddrPort(target)
	if err != nil || to.Port() == 0 {
		t.Fatalf("netlab: forward to %q: want an IP literal and a port", target)
	}
	listen := fmt.Sprintf("TCP%s-LISTEN:%d,bind=%s,nodelay,fork,reuseaddr", family(from), from.Port(), socatHost(from))
	connect := fmt.Sprintf("TCP%s:%s:%d,nodelay", family(to), socatHost(to), to.Port())
	p := h.start(t, socat, listen, connect)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if listening(p.cmd.Process.Pid, h.path(), from) {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("netlab: the forwarder from %s to %s in %s ended: %s", listenAddr, target, h.name, p.ended())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("netlab: the forwarder from %s to %s in %s did not listen within 10 s", listenAddr, target, h.name)
		}
	}
}

// family is socat's suffix for ap's address family.
func family(ap netip.AddrPort) string {
	if ap.Addr().Is6() {
		return "6"
	}
	return "4"
}

// socatHost writes ap's address as socat reads it (IPv6 in brackets).
func socatHost(ap netip.AddrPort) string {
	if ap.Addr().Is6() {
		return "[" + ap.Addr().String() + "]"
	}
	return ap.Addr().String()
}
