package netlab

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Host is one network namespace of a lab.
type Host struct {
	lab   *Lab
	name  string
	netns string

	resolvConf string // a resolv.conf the programs h starts see (UseResolver)
}

// Name is the host's name in the lab ("P1").
func (h *Host) Name() string { return h.name }

// Netns is the name of the host's namespace, for tools that take one
// (`ip -n`, `ip netns exec`).
func (h *Host) Netns() string { return h.netns }

// path is the host's namespace file.
func (h *Host) path() string { return filepath.Join(netnsDir, h.netns) }

// AddAddr adds an address (cidr such as "10.0.0.1/32" or "fd00::1/64") to
// the interface dev of h: "lo", or a name Link returned. An IPv6 address
// skips duplicate address detection, which would keep it unusable
// ("tentative") for about a second; nothing else on a lab link holds it.
func (h *Host) AddAddr(dev, cidr string) {
	h.lab.t.Helper()
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		h.lab.t.Fatalf("netlab: address for %s: %v", h.name, err)
	}
	args := []string{"-n", h.netns, "addr", "add", cidr, "dev", dev}
	if p.Addr().Is6() {
		args = append(args, "nodad")
	}
	h.lab.must(args...)
}

// Route adds a route in h to dst ("10.77.3.0/24", "default") through the
// gateway via.
func (h *Host) Route(dst, via string) {
	h.lab.t.Helper()
	h.lab.must("-n", h.netns, "route", "add", dst, "via", via)
}

// SetForwarding turns IP forwarding (IPv4 and IPv6) in h on or off: a host
// forwards between its links only as a router.
func (h *Host) SetForwarding(on bool) {
	h.lab.t.Helper()
	value := []byte("0\n")
	if on {
		value = []byte("1\n")
	}
	// Files under /proc/sys/net belong to the namespace of the thread
	// that opens them.
	err := h.inside(func() error {
		for _, f := range []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding"} {
			err := os.WriteFile(f, value, 0)
			if errors.Is(err, fs.ErrNotExist) && strings.Contains(f, "ipv6") {
				continue // a kernel without IPv6
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		h.lab.t.Fatalf("netlab: forwarding in %s: %v", h.name, err)
	}
}

// Command is exec.CommandContext for a program run inside h (through
// nsenter --net, which execs it: the process's pid is the program's).
// Whatever still runs inside h when the lab ends is killed.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	enter := append([]string{h.lab.nsenter, "--net=" + h.path(), "--", name}, args...)
	if h.resolvConf == "" {
		return exec.CommandContext(ctx, enter[0], enter[1:]...)
	}
	// A mount namespace of the program's own, with h's resolv.conf bound
	// over the machine's; unshare and sh exec, so the pid is still the
	// program's.
	return exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "--",
		"sh", "-c", `mount --bind "$0" /etc/resolv.conf && exec "$@"`, h.resolvConf}, enter...)...)
}

// UseResolver makes the programs h runs from now on (Command, Run,
// Chromium, Forward) resolve names by asking nameserver (an IP address)
// only: each runs in a mount namespace of its own where /etc/resolv.conf
// names it. Goroutines of the test (Dial, Listen) are not affected.
func (h *Host) UseResolver(t testing.TB, nameserver string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(f, []byte("nameserver "+nameserver+"\noptions timeout:1 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.resolvConf = f
}

// Run runs a program inside h and returns what it wrote to stdout; it
// fails t, with the program's stderr, if the program fails.
func (h *Host) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := h.Command(context.Background(), name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("netlab: in %s: %s %s: %v\n%s", h.name, name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.String()
}

// Nft loads an nftables ruleset into h (`nft -f -`). It skips t when nft
// is not installed.
func (h *Host) Nft(t testing.TB, ruleset string) {
	t.Helper()
	nft := lookPath("nft")
	if nft == "" {
		t.Skip("netlab: nftables' nft is not installed")
	}
	cmd := h.Command(context.Background(), nft, "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("netlab: nft in %s: %v\n%s", h.name, err, out)
	}
}
