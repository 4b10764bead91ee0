package netlab

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps the namespaces it names (iproute2's
// NETNS_RUN_DIR).
const netnsDir = "/var/run/netns"

// prefix begins the name of every namespace a lab makes:
// bglab-PID-N-NAME.
const prefix = "bglab-"

// hostSeq numbers hosts across the process, so two labs of one process
// (parallel tests) never name a namespace alike.
var hostSeq atomic.Int64

// made holds the names of the namespaces this process has made and not
// yet removed. A namespace named for this process's pid but not among
// them was left by a dead process that had the same pid.
var made sync.Map

// hostName is what a host may be called: short, and safe in a file name.
var hostName = regexp.MustCompile(`^[A-Za-z0-9_]{1,24}$`)

// A Lab is a set of hosts made for one test. Its methods that take no
// testing.TB fail the test that made the lab, so call them from that
// test's goroutine; they are safe to call from several goroutines.
type Lab struct {
	t       testing.TB
	ip      string // iproute2's ip
	nsenter string // util-linux's nsenter

	mu      sync.Mutex
	hosts   []*Host
	names   map[string]bool
	links   int
	sockets []io.Closer
}

// New makes an empty lab whose hosts and processes are removed when t
// ends. It first removes the namespaces of labs whose process has died (a
// killed test's). It skips t, saying why, when this process cannot make
// namespaces (not root, no ip or nsenter), and fails t when it could but
// something went wrong.
func New(t testing.TB) *Lab {
	t.Helper()
	ip, nsenter, reason := tools()
	if reason != "" {
		t.Skip("netlab: " + reason)
	}
	l := &Lab{t: t, ip: ip, nsenter: nsenter, names: map[string]bool{}}
	if err := sweep(ip); err != nil {
		t.Fatalf("netlab: remove the namespaces of dead labs: %v", err)
	}
	t.Cleanup(l.cleanup)
	return l
}

// tools finds ip and nsenter, or says why no lab can be made here.
func tools() (ip, nsenter, reason string) {
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return "", "", "this kernel has no network namespaces"
	}
	if caps, err := effectiveCaps(); err != nil || caps&(1<<unix.CAP_SYS_ADMIN) == 0 || caps&(1<<unix.CAP_NET_ADMIN) == 0 {
		return "", "", "making network namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN (run the test as root)"
	}
	if ip = lookPath("ip"); ip == "" {
		return "", "", "iproute2's ip is not installed"
	}
	if nsenter = lookPath("nsenter"); nsenter == "" {
		return "", "", "util-linux's nsenter is not installed"
	}
	return ip, nsenter, ""
}

// effectiveCaps reads this process's effective capability set.
func effectiveCaps() (uint64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// lookPath finds a program on PATH or in the system directories, which a
// test's PATH may lack.
func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Host makes a new host: a namespace of its own with lo up and IP
// forwarding off (a new namespace copies the root namespace's setting, so
// it is set, not assumed). name (letters, digits, _) names it in messages
// and in its namespace's name.
func (l *Lab) Host(name string) *Host {
	l.t.Helper()
	if !hostName.MatchString(name) {
		l.t.Fatalf("netlab: host name %q: want 1-24 letters, digits or _", name)
	}
	l.mu.Lock()
	dup := l.names[name]
	l.names[name] = true
	l.mu.Unlock()
	if dup {
		l.t.Fatalf("netlab: two hosts named %q", name)
	}
	h := &Host{lab: l, name: name, netns: fmt.Sprintf("%s%d-%d-%s", prefix, os.Getpid(), hostSeq.Add(1), name)}
	made.Store(h.netns, true) // before it exists, so no sweep takes it
	l.must("netns", "add", h.netns)
	l.mu.Lock()
	l.hosts = append(l.hosts, h)
	l.mu.Unlock()
	l.must("-n", h.netns, "link", "set", "lo", "up")
	h.SetForwarding(false)
	return h
}

// must runs ip with args and fails the lab's test if it fails.
func (l *Lab) must(args ...string) {
	l.t.Helper()
	if out, err := exec.Command(l.ip, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("netlab: ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// track keeps a socket to close when the lab ends: an open socket keeps
// its namespace alive after the namespace's name is deleted.
func (l *Lab) track(c io.Closer) {
	l.mu.Lock()
	l.sockets = append(l.sockets, c)
	l.mu.Unlock()
}

// cleanup closes the lab's sockets and removes its hosts.
func (l *Lab) cleanup() {
	l.mu.Lock()
	sockets, hosts := l.sockets, l.hosts
	l.sockets, l.hosts = nil, nil
	l.mu.Unlock()
	for _, c := range sockets {
		c.Close()
	}
	for _, h := range hosts {
		if err := removeNetns(l.ip, h.netns); err != nil {
			l.t.Errorf("netlab: remove host %s: %v", h.name, err)
			continue
		}
		made.Delete(h.netns)
	}
}

// removeNetns kills every process inside the named namespace, then
// deletes it. `ip netns delete` only unmounts the name: a process still
// inside would keep the namespace and its links alive.
func removeNetns(ip, name string) error {
	path := filepath.Join(netnsDir, name)
	for deadline := time.Now().Add(10 * time.Second); ; {
		pids, err := pidsIn(path)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v are still inside 10 s after SIGKILL", pids)
		}
		for _, pid := range pids {
			unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out, err := exec.Command(ip, "netns", "delete", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns delete %s: %v: %s", name, err, out)
	}
	return nil
}

// sweep removes the namespaces named for a process that no longer runs,
// and those named for this process that it did not make. Those of any
// other process alive (even one that only reuses a dead lab's pid) are
// left alone.
func sweep(ip string) error {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, ok := ownerPid(e.Name())
		if !ok {
			continue
		}
		if pid == os.Getpid() {
			if _, mine := made.Load(e.Name()); mine {
				continue
			}
		} else if alive(pid) {
			continue
		}
		if err := removeNetns(ip, e.Name()); err != nil {
			// Another process's New may have swept it first.
			if _, serr := os.Stat(filepath.Join(netnsDir, e.Name())); errors.Is(serr, fs.ErrNotExist) {
				continue
			}
			return err
		}
	}
	return nil
}

// ownerPid is the pid in a lab namespace's name.
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// alive reports whether a process with this pid exists.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
