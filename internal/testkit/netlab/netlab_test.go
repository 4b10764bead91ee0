package netlab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// echo answers every connection ln accepts with what it reads.
func echo(ln net.Listener) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
}

// reach dials addr from h and has a line echoed back; it fails within
// half a second when nothing answers.
func reach(h *netlab.Host, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	c, err := h.Dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return err
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "ping\n" {
		return fmt.Errorf("echoed %q", buf)
	}
	return nil
}

// listen makes an echoing listener in h and returns its address.
func listen(t *testing.T, h *netlab.Host, addr string) string {
	t.Helper()
	ln, err := h.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	echo(ln)
	return ln.Addr().String()
}

// rootLinks names the root namespace's interfaces (this goroutine's
// thread is in the root namespace: the lab never leaves one elsewhere).
func rootLinks(t *testing.T) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	return names
}

// needIPv6 skips an IPv6 case on a kernel without IPv6.
func needIPv6(t *testing.T, addr string) {
	t.Helper()
	if strings.Contains(addr, ":") {
		if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
			t.Skip("this kernel has no IPv6")
		}
	}
}

// running reports whether process pid exists and has not ended.
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	return i >= 0 && !strings.HasPrefix(string(data[i+1:]), " Z")
}

// TestLinkedHostsReachOnlyEachOther: a listener inside A accepts a
// connection dialled from inside B at A's address on their link; C, a
// host of the same lab on no link, cannot reach it; and the root
// namespace holds neither address. (The root namespace is not dialled:
// there the address would be routed to the default gateway, off the
// machine, which the project's rule forbids. That no lab interface is
// ever in the root namespace is TestCleanupLeavesNothing's check.)
func TestLinkedHostsReachOnlyEachOther(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		aCIDR, bCIDR string
	}{
		{"IPv4", "10.77.1.1/24", "10.77.1.2/24"},
		{"IPv6", "fd00:77:1::1/64", "fd00:77:1::2/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			needIPv6(t, tc.aCIDR)
			lab := netlab.New(t)
			a, b, c := lab.Host("A"), lab.Host("B"), lab.Host("C")
			lab.Link(a, tc.aCIDR, b, tc.bCIDR)
			aAddr, _, _ := strings.Cut(tc.aCIDR, "/")
			bAddr, _, _ := strings.Cut(tc.bCIDR, "/")
			addr := listen(t, a, net.JoinHostPort(aAddr, "0"))
			if err := reach(b, addr); err != nil {
				t.Errorf("B did not reach A's listener at %s: %v", addr, err)
			}
			if err := reach(c, addr); err == nil {
				t.Errorf("C, on no link, reached A at %s", addr)
			}
			local, err := net.InterfaceAddrs()
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range local {
				if ip, _, _ := strings.Cut(l.String(), "/"); ip == aAddr || ip == bAddr {
					t.Errorf("the root namespace holds the lab's address %s", l)
				}
			}
		})
	}
}

// TestHostsInALineDoNotForward: in A–B–C, A cannot reach C without a
// route, nor with routes both ways through B while B does not forward;
// once B forwards, it can (so the routes were right).
func TestHostsInALineDoNotForward(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	a, b, c := lab.Host("A"), lab.Host("B"), lab.Host("C")
	lab.Link(a, "10.77.2.1/24", b, "10.77.2.2/24")
	lab.Link(b, "10.77.3.1/24", c, "10.77.3.2/24")
	addr := listen(t, c, "10.77.3.2:0")
	if err := reach(a, addr); err == nil {
		t.Fatal("A reached C with no route to it")
	}
	a.Route("10.77.3.0/24", "10.77.2.2")
	c.Route("10.77.2.0/24", "10.77.3.1")
	if err := reach(a, addr); err == nil {
		t.Fatal("A reached C through B, which does not forward")
	}
	rootBefore, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	b.SetForwarding(true)
	if err := reach(a, addr); err != nil {
		t.Fatalf("A did not reach C through B forwarding: %v", err)
	}
	if got := b.Run(t, "cat", "/proc/sys/net/ipv4/ip_forward"); got != "1\n" {
		t.Errorf("B's ip_forward is %q after SetForwarding(true)", got)
	}
	if rootAfter, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); err != nil || string(rootAfter) != string(rootBefore) {
		t.Errorf("the root namespace's ip_forward went from %q to %q (%v)", rootBefore, rootAfter, err)
	}
}

// TestNftDropsOutputToOneAddress: B reaches both of A's addresses; after a
// ruleset in B drops its output to one of them, B's dial to that one
// fails and to the other still works.
func TestNftDropsOutputToOneAddress(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	a, b := lab.Host("A"), lab.Host("B")
	lab.Link(a, "10.77.4.1/24", b, "10.77.4.2/24")
	a.AddAddr("lo", "10.77.4.9/32")
	b.Route("10.77.4.9/32", "10.77.4.1")
	_, port, _ := net.SplitHostPort(listen(t, a, ":0"))
	dropped, kept := net.JoinHostPort("10.77.4.9", port), net.JoinHostPort("10.77.4.1", port)
	if err := reach(b, dropped); err != nil {
		t.Fatalf("before the ruleset, B did not reach %s: %v", dropped, err)
	}
	b.Nft(t, `table inet lab {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 10.77.4.9 drop
	}
}`)
	if err := reach(b, dropped); err == nil {
		t.Errorf("B reached %s, which its ruleset drops", dropped)
	}
	if err := reach(b, kept); err != nil {
		t.Errorf("B did not reach %s, which its ruleset keeps: %v", kept, err)
	}
}

// TestUseResolverAsksOnlyTheNameserver: a program A runs after
// UseResolver asks B's nameserver address for a name (the query reaches
// B's UDP port 53), and the machine's resolv.conf is left as it was.
func TestUseResolverAsksOnlyTheNameserver(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	a, b := lab.Host("A"), lab.Host("B")
	lab.Link(a, "10.77.5.1/24", b, "10.77.5.2/24")
	before, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := b.ListenPacket("udp", "10.77.5.2:53")
	if err != nil {
		t.Fatal(err)
	}
	queries := make(chan []byte, 8)
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			queries <- append([]byte(nil), buf[:n]...)
		}
	}()
	a.UseResolver(t, "10.77.5.2")
	// No answer comes: getent fails, having asked.
	_ = a.Command(context.Background(), "getent", "hosts", "asked-by-a.test").Run()
	select {
	case q := <-queries:
		if !bytes.Contains(q, []byte("asked-by-a")) {
			t.Errorf("B's port 53 received %q, not the query for asked-by-a.test", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's nameserver address received no query from A's program")
	}
	if after, _ := os.ReadFile("/etc/resolv.conf"); !bytes.Equal(before, after) {
		t.Errorf("the machine's resolv.conf changed: %q, was %q", after, before)
	}
}

// TestForwardCarriesToLoopback: a listener on B's loopback is out of A's
// reach at B's link address, and within it through B's forwarder.
func TestForwardCarriesToLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, aCIDR, bCIDR, loopback, bAddr string
	}{
		{"IPv4", "10.77.5.1/24", "10.77.5.2/24", "127.0.0.1", "10.77.5.2"},
		{"IPv6", "fd00:77:5::1/64", "fd00:77:5::2/64", "::1", "fd00:77:5::2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			needIPv6(t, tc.aCIDR)
			lab := netlab.New(t)
			a, b := lab.Host("A"), lab.Host("B")
			lab.Link(a, tc.aCIDR, b, tc.bCIDR)
			target := listen(t, b, net.JoinHostPort(tc.loopback, "0"))
			_, port, _ := net.SplitHostPort(target)
			if err := reach(a, net.JoinHostPort(tc.bAddr, port)); err == nil {
				t.Errorf("A reached B's loopback listener at B's address")
			}
			from := net.JoinHostPort(tc.bAddr, "9223")
			b.Forward(t, from, target)
			if err := reach(a, from); err != nil {
				t.Errorf("A did not reach %s through B's forwarder at %s: %v", target, from, err)
			}
		})
	}
}

// TestChromiumAnswersThroughForward: Chromium in a pool host P1 binds
// DevTools to P1's loopback, so D reaches it only through P1's forwarder,
// and there /json/version answers.
func TestChromiumAnswersThroughForward(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("/usr/bin/chromium is not installed")
	}
	lab := netlab.New(t)
	d, p1 := lab.Host("D"), lab.Host("P1")
	lab.Link(d, "10.77.6.1/24", p1, "10.77.6.2/24")
	p1.Chromium(t, 9222)
	p1.Forward(t, "10.77.6.2:9223", "127.0.0.1:9222")
	tr := &http.Transport{DialContext: d.Dial}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	if _, err := client.Get("http://10.77.6.2:9222/json/version"); err == nil {
		t.Error("D reached DevTools at P1's link address, past the forwarder")
	}
	resp, err := client.Get("http://10.77.6.2:9223/json/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var version struct{ Browser, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&version); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(version.Browser, "Chrome/") {
		t.Errorf("/json/version through the forwarder: %s %+v", resp.Status, version)
	}
}

// TestCleanupLeavesNothing: while a lab lives, the root namespace has no
// interface it did not have before; once the lab's test has ended, its
// namespaces are gone, every process that ran inside them (one started by
// the test, a forwarder and the connection it forked) has ended, its
// listener is closed, and the root namespace's interfaces are as before.
func TestCleanupLeavesNothing(t *testing.T) {
	t.Parallel()
	before := rootLinks(t)
	var (
		netns   []string
		pids    []int
		sleeper *exec.Cmd
		ln      net.Listener
	)
	t.Run("lab", func(t *testing.T) {
		lab := netlab.New(t)
		a, b := lab.Host("A"), lab.Host("B")
		lab.Link(a, "10.77.7.1/24", b, "10.77.7.2/24")
		if got := rootLinks(t); !slices.Equal(got, before) {
			t.Errorf("with the lab linked, the root namespace's interfaces are %v, were %v", got, before)
		}
		sleeper = a.Command(context.Background(), "sleep", "60")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		var err error
		if ln, err = b.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		echo(ln)
		b.Forward(t, "10.77.7.2:9000", ln.Addr().String())
		// A connection held open keeps a forked forwarder running.
		c, err := a.Dial(context.Background(), "tcp", "10.77.7.2:9000")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "ping\n")
		io.ReadFull(c, make([]byte, 5))
		netns = []string{a.Netns(), b.Netns()}
		for _, name := range netns {
			out, err := exec.Command("ip", "netns", "pids", name).Output()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range strings.Fields(string(out)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
		}
		if len(pids) < 3 {
			t.Errorf("inside the lab run %v; want the sleeper, the forwarder and its fork", pids)
		}
	})
	if t.Skipped() || sleeper == nil {
		return
	}
	var exit *exec.ExitError
	if err := sleeper.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the process started inside the lab ended with %v, want killed", err)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("process %d, inside the lab, still runs", pid)
		}
	}
	for _, name := range netns {
		if _, err := os.Stat("/var/run/netns/" + name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s is still there (%v)", name, err)
		}
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the lab's listener accepts after the lab ended: %v", err)
	}
	if after := rootLinks(t); !slices.Equal(after, before) {
		t.Errorf("after the lab, the root namespace's interfaces are %v, were %v", after, before)
	}
}

// TestNewSweepsDeadLabs: New removes a namespace named for a process that
// has ended, killing the process still inside it, and one named for this
// process that this process did not make (a dead process's with the same
// pid); it keeps one named for another process that runs. Not parallel:
// another test's New would sweep the dead labs before this one's does.
func TestNewSweepsDeadLabs(t *testing.T) {
	netlab.New(t) // skips here if no lab can be made
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("bglab-%d-1-stale", dead.ProcessState.Pid())
	kept := fmt.Sprintf("bglab-%d-1-kept", live.Process.Pid)
	ownPid := fmt.Sprintf("bglab-%d-0-notmine", os.Getpid()) // hosts are numbered from 1
	t.Cleanup(func() {
		live.Process.Kill()
		live.Wait()
		for _, name := range []string{stale, kept, ownPid} {
			exec.Command("ip", "netns", "delete", name).Run()
		}
	})
	for _, name := range []string{stale, kept, ownPid} {
		if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v %s", name, err, out)
		}
	}
	inside := exec.Command("nsenter", "--net=/var/run/netns/"+stale, "sleep", "60")
	if err := inside.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if out, _ := exec.Command("ip", "netns", "pids", stale).Output(); strings.TrimSpace(string(out)) == strconv.Itoa(inside.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process did not enter the dead lab's namespace")
		}
	}

	netlab.New(t)

	for _, name := range []string{stale, ownPid} {
		if _, err := os.Stat("/var/run/netns/" + name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dead lab's namespace %s is still there (%v)", name, err)
		}
	}
	var exit *exec.ExitError
	if err := inside.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the process inside the dead lab ended with %v, want killed", err)
	}
	if _, err := os.Stat("/var/run/netns/" + kept); err != nil {
		t.Errorf("the namespace %s of a running process was swept: %v", kept, err)
	}
}
