package netlab

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"
)

// Link joins a and b with a veth pair, gives each end its address
// (aCIDR, bCIDR such as "10.77.1.1/24"; "" for none), brings both up and
// returns once both carry traffic, IPv6 included. It returns the
// interfaces' names in a and in b (v<n>a and v<n>b), for AddAddr.
func (l *Lab) Link(a *Host, aCIDR string, b *Host, bCIDR string) (aDev, bDev string) {
	l.t.Helper()
	if a.lab != l || b.lab != l || a == b {
		l.t.Fatalf("netlab: link %s to %s: want two different hosts of this lab", a.name, b.name)
	}
	l.mu.Lock()
	l.links++
	n := l.links
	l.mu.Unlock()
	aDev, bDev = fmt.Sprintf("v%da", n), fmt.Sprintf("v%db", n)
	// Made in a with its peer made in b: neither end is ever in the root
	// namespace, not even for a moment.
	l.must("-n", a.netns, "link", "add", aDev, "type", "veth", "peer", "name", bDev, "netns", b.netns)
	if aCIDR != "" {
		a.AddAddr(aDev, aCIDR)
	}
	if bCIDR != "" {
		b.AddAddr(bDev, bCIDR)
	}
	l.must("-n", a.netns, "link", "set", aDev, "up")
	l.must("-n", b.netns, "link", "set", bDev, "up")
	// The kernel acts on the carrier's coming on in a batch of link
	// events that may run up to a second later (net/core/link_watch.c);
	// asking for one device by name, not in a dump, has it act on that
	// device's event at once (rtnl_getlink calls linkwatch_sync_dev).
	l.must("-n", a.netns, "link", "show", "dev", aDev)
	l.must("-n", b.netns, "link", "show", "dev", bDev)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		aUp, err := a.linkReady(aDev)
		if err != nil {
			l.t.Fatalf("netlab: link %s-%s: %v", a.name, b.name, err)
		}
		bUp, err := b.linkReady(bDev)
		if err != nil {
			l.t.Fatalf("netlab: link %s-%s: %v", a.name, b.name, err)
		}
		if aUp && bUp {
			return aDev, bDev
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("netlab: link %s-%s: not ready 10 s after it was brought up", a.name, b.name)
		}
	}
}

// linkReady reports whether h's end dev of a link carries traffic: it is
// running (both ends up, the carrier on) and, where IPv6 is on, the kernel
// has configured it for IPv6, which it marks by giving it a link-local
// address. The kernel does this when it acts on the carrier's coming on,
// after `ip link set up` has returned; until then an IPv6 packet arriving
// on the link, the first neighbour solicitation included, is dropped for
// want of a route, and its sender tries again only a second later.
func (h *Host) linkReady(dev string) (bool, error) {
	ready := false
	err := h.inside(func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		if ifi.Flags&net.FlagRunning == 0 {
			return nil
		}
		off, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + dev + "/disable_ipv6")
		if errors.Is(err, fs.ErrNotExist) || strings.TrimSpace(string(off)) == "1" {
			ready = true // no IPv6 here
			return nil
		}
		if err != nil {
			return err
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast() {
				ready = true
			}
		}
		return nil
	})
	return ready, err
}
