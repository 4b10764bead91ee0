package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Addresses outside 127.0.0.0/8 are used only inside a private network
// namespace whose one interface is lo (DESIGN.md, "Testing"): inNetns runs
// a test again in one, made with unshare(1), so that nothing it sends can
// leave the machine.

const (
	// netnsTestEnv names the test an inner run is for.
	netnsTestEnv = "BROWSERGATE_NETNS_TEST"
	// netnsOuterEnv holds the outer run's network and mount namespaces,
	// which the inner run checks it is not in before it changes anything.
	netnsOuterEnv = "BROWSERGATE_NETNS_OUTER"
	// netnsBinaryEnv is the browsergate binary the outer run built.
	netnsBinaryEnv = "BROWSERGATE_E2E_BINARY"
)

// inNetns runs the calling (top-level) test again, alone, in a new network
// and mount namespace: lo up with addrs (each a /32 or /128), and
// /etc/resolv.conf, in that mount namespace only, naming a DNS server at
// nameserver on lo (an address of addrs or loopback; "" leaves it as it
// is). In that inner run it returns true and the test goes on there; in
// the outer run it waits for the inner one, passes its output on, fails
// or skips as it did, and returns false (the caller returns). Without
// root or unshare the test is skipped.
func inNetns(t *testing.T, addrs []string, nameserver string) bool {
	t.Helper()
	if os.Getenv(netnsTestEnv) == t.Name() {
		enterNetns(t, addrs, nameserver)
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, for a network namespace of its own (unshare -n)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1), for a network namespace of its own")
	}
	cmd := exec.Command("unshare", "--net", "--mount", "--propagation", "private", "--",
		os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), netnsTestEnv+"="+t.Name(), netnsOuterEnv+"="+namespaces(t), netnsBinaryEnv+"="+binary)
	out, err := cmd.CombinedOutput()
	t.Logf("inside a private network namespace:\n%s", out)
	switch {
	case err != nil:
		t.Fatalf("the run inside the network namespace failed: %v", err)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Skip("skipped inside the network namespace")
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("the run inside the network namespace did not run %s", t.Name())
	}
	return false
}

// namespaces are this process's network and mount namespaces.
func namespaces(t *testing.T) string {
	t.Helper()
	var ids []string
	for _, ns := range []string{"net", "mnt"} {
		id, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return strings.Join(ids, " ")
}

// enterNetns sets the inner run's namespaces up, once it has made sure
// they are not the outer run's.
func enterNetns(t *testing.T, addrs []string, nameserver string) {
	t.Helper()
	outer := os.Getenv(netnsOuterEnv)
	mine := strings.Fields(namespaces(t))
	if outer == "" || slicesOverlap(strings.Fields(outer), mine) {
		t.Fatalf("not in namespaces of its own (outer %q, this run %q): nothing is changed", outer, mine)
	}
	// Asked over netlink (ip): /sys/class/net shows the namespace that
	// mounted /sys, the outer one.
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatalf("ip link show: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(links)), "\n") {
		// "1: lo: <LOOPBACK> ..."; a new namespace may hold tunnel
		// devices (sit0, ip6tnl0), down: anything else up is a way out.
		fields := strings.Fields(l)
		if len(fields) < 3 || strings.TrimSuffix(fields[1], ":") == "lo" {
			continue
		}
		if flags := strings.Trim(fields[2], "<>"); slices.Contains(strings.Split(flags, ","), "UP") {
			t.Fatalf("the namespace has an interface up besides lo: %s", l)
		}
	}
	run := func(args ...string) {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "link", "set", "lo", "up")
	for _, a := range addrs {
		run("ip", "addr", "add", a, "dev", "lo")
	}
	if nameserver == "" {
		return
	}
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte("nameserver "+nameserver+"\noptions timeout:2 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(conf, "/etc/resolv.conf", "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s over /etc/resolv.conf in the test's mount namespace: %v", conf, err)
	}
}

func slicesOverlap(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}
