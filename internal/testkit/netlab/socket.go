package netlab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"

	"golang.org/x/sys/unix"
)

// Listen makes a listener inside h (network "tcp", "tcp4" or "tcp6"; addr
// an IP literal and port, or ":port" for every address of h). A socket
// stays in the namespace it was made in, so the listener accepts h's
// connections whichever goroutine uses it. It is closed when the lab ends.
func (h *Host) Listen(network, addr string) (net.Listener, error) {
	if err := literal(addr, true); err != nil {
		return nil, err
	}
	var ln net.Listener
	err := h.inside(func() (err error) {
		ln, err = net.Listen(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", h.name, err)
	}
	h.lab.track(ln)
	return ln, nil
}

// ListenPacket makes a packet socket inside h (network "udp", "udp4" or
// "udp6"; addr as for Listen). It is closed when the lab ends.
func (h *Host) ListenPacket(network, addr string) (net.PacketConn, error) {
	if err := literal(addr, true); err != nil {
		return nil, err
	}
	var pc net.PacketConn
	err := h.inside(func() (err error) {
		pc, err = net.ListenPacket(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", h.name, err)
	}
	h.lab.track(pc)
	return pc, nil
}

// Dial connects from inside h (network "tcp", "udp" and their 4 and 6
// forms; addr an IP literal and port). Its signature is
// http.Transport.DialContext's. The connection is closed when the lab
// ends.
func (h *Host) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := literal(addr, false); err != nil {
		return nil, err
	}
	var c net.Conn
	err := h.inside(func() (err error) {
		// With one literal address the dialer makes its one socket on
		// this goroutine: no resolver, no parallel attempts elsewhere.
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", h.name, err)
	}
	h.lab.track(c)
	return c, nil
}

// inside runs fn on a goroutine of its own whose OS thread has entered h's
// network namespace, so sockets fn makes are made in h. The caller's
// goroutine never changes namespace, even when something fails.
func (h *Host) inside(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		// Locked, the goroutine alone runs on this thread, and no other
		// goroutine runs in h while it is there. (Since Go 1.10 the
		// runtime never clones a new thread from a locked one.)
		runtime.LockOSThread()
		own, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer unix.Close(own)
		lab, err := unix.Open(h.path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open %s: %w", h.path(), err)
			return
		}
		defer unix.Close(lab)
		if err := unix.Setns(lab, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread() // setns failed: the thread is where it was
			done <- fmt.Errorf("enter %s: %w", h.netns, err)
			return
		}
		err = fn()
		if serr := unix.Setns(own, unix.CLONE_NEWNET); serr != nil {
			// The thread could not go back to its own namespace. Left
			// locked, it ends with this goroutine (runtime.LockOSThread:
			// a goroutine that exits locked takes its thread with it),
			// rather than going back to the scheduler and running other
			// goroutines' sockets in the lab. What fn made is still
			// good: a socket keeps the namespace it was made in.
			done <- err
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// literal checks that addr ("host:port") names its host by an IP literal;
// an empty host passes when emptyOK (a listener on every address).
func literal(addr string, emptyOK bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "" && emptyOK {
		return nil
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Errorf("%w: %q", ErrNotLiteral, addr)
	}
	return nil
}
