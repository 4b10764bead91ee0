package executor

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// TestListenersRefuseWhereTheyListen: an endpoint on one address is
// refused at that address (in every spelling) and at the unspecified
// addresses, which reach this machine's loopback, and not on another
// address; one on every address is refused on every loopback address.
// A registration made twice holds until both are taken back.
func TestListenersRefuseWhereTheyListen(t *testing.T) {
	t.Parallel()
	var l listeners
	l.add(netip.MustParseAddrPort("127.0.0.1:40001"), "a proxy")
	l.add(netip.MustParseAddrPort("0.0.0.0:9222"), "a live DevTools endpoint")
	l.add(netip.MustParseAddrPort("[::1]:40002"), "an IPv6 front")
	l.add(netip.MustParseAddrPort("10.1.2.3:40003"), "a front on an interface")
	for _, tc := range []struct {
		ap      string
		refused bool
	}{
		{"127.0.0.1:40001", true},
		{"[::ffff:127.0.0.1]:40001", true},
		{"0.0.0.0:40001", true},
		{"[::]:40001", true},
		{"[::ffff:0.0.0.0]:40001", true},
		{"127.0.0.3:40001", false},
		{"[::1]:40001", false},
		{"127.0.0.1:40004", false},
		{"127.0.0.1:9222", true},
		{"127.0.0.3:9222", true},
		{"[::1]:9222", true},
		{"0.0.0.0:9222", true},
		{"10.9.9.9:9222", false},
		{"[::1]:40002", true},
		{"[::]:40002", true},
		{"127.0.0.1:40002", false},
		{"10.1.2.3:40003", true},
		{"0.0.0.0:40003", true},
		{"10.1.2.4:40003", false},
	} {
		_, refused := l.verdict(netip.MustParseAddrPort(tc.ap))
		if refused != tc.refused {
			t.Errorf("verdict(%s): refused=%v, want %v", tc.ap, refused, tc.refused)
		}
	}

	// An endpoint on every address is reached at this machine's interface
	// addresses too; one on an address only there. (192.0.2.9 stands for
	// an interface address that is not loopback: this machine may have
	// none.)
	for _, a := range interfaceAddrs() {
		if _, refused := l.verdict(netip.AddrPortFrom(a, 9222)); !refused {
			t.Errorf("verdict(%s:9222): not refused, though the endpoint is on every address and %s is this machine's", a, a)
		}
	}
	l.mu.Lock()
	l.local[netip.MustParseAddr("192.0.2.9")] = true
	l.mu.Unlock()
	if _, refused := l.verdict(netip.MustParseAddrPort("192.0.2.9:9222")); !refused {
		t.Error("verdict(192.0.2.9:9222): not refused at an interface address, though the endpoint is on every address")
	}
	if _, refused := l.verdict(netip.MustParseAddrPort("192.0.2.9:40001")); refused {
		t.Error("verdict(192.0.2.9:40001): refused at an interface address, though the endpoint is on 127.0.0.1 only")
	}
	// A later registration keeps the addresses read before.
	l.add(netip.MustParseAddrPort("[::]:9444"), "another endpoint on every address")
	if _, refused := l.verdict(netip.MustParseAddrPort("192.0.2.9:9222")); !refused {
		t.Error("a later registration on every address dropped an interface address read before")
	}
	// Hosts as the scope names them: a localhost name is judged at
	// 127.0.0.1 and ::1, another name only where it is resolved.
	for _, tc := range []struct {
		host    string
		port    uint16
		refused bool
	}{
		{"localhost", 40001, true},
		{"app.localhost", 40002, true},
		{"localhost", 40004, false},
		{"[::ffff:7f00:1]", 40001, true},
		{"[::]", 40003, true},
		{"127.0.0.3", 40001, false},
		{"example.com", 40001, false},
	} {
		if _, refused := l.hostVerdict(tc.host, tc.port); refused != tc.refused {
			t.Errorf("hostVerdict(%s, %d): refused=%v, want %v", tc.host, tc.port, refused, tc.refused)
		}
	}

	twice := netip.MustParseAddrPort("0.0.0.0:9333")
	l.add(twice, "named by its manifest")
	l.add(twice, "attached")
	l.remove(twice)
	if _, refused := l.verdict(netip.MustParseAddrPort("127.0.0.1:9333")); !refused {
		t.Error("an endpoint registered twice is no longer refused after one removal")
	}
	l.remove(twice)
	if _, refused := l.verdict(netip.MustParseAddrPort("127.0.0.1:9333")); refused {
		t.Error("an endpoint is still refused after every registration was removed")
	}
}

// TestOwnPortsOnAnotherLoopbackAddressAreSites: the launched browser's
// DevTools port and the egress proxies' ports are on 127.0.0.1. Even with
// a grant of all of loopback, of 0.0.0.0 and of ::, navigating to none of
// them is allowed there, at 0.0.0.0 or ::, as a mapped IPv6 address or as
// localhost; but a site that happens to listen on the same port of
// another loopback address (127.0.0.3) is not browsergate's, and
// navigating to it works. Once the executor is closed, none of them is
// registered any more.
func TestOwnPortsOnAnotherLoopbackAddressAreSites(t *testing.T) {
	t.Parallel()
	home := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<title>home</title>"))
	}) + "/"
	m := testkit.Manifest(t, `[tool]
name = "ports"
[browser]
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3", "0.0.0.0", "localhost", "[::]", "[::ffff:7f00:1]", "[::ffff:0:0]"]
allow_private_cidrs = ["127.0.0.0/8", "0.0.0.0/32", "::/128", "::1/128"]
[browser.commands.navigate]
`)
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	cmd := m.Command("navigate")
	navigate := func(u string) *toolclad.Reply {
		t.Helper()
		args, err := cmd.Validate(map[string]any{"url": u})
		if err != nil {
			t.Fatal(err)
		}
		return e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: "s", Args: args, Progress: func(string) {}})
	}
	if r := navigate(home); r.IsError {
		t.Fatalf("navigate home: %s", r.Text)
	}
	// The daemon's own endpoints, now that the browser and the session
	// run: the DevTools port and every proxy.
	e.listeners.mu.RLock()
	var own []netip.AddrPort
	everywhere := 0
	for ap := range e.listeners.at {
		if ap.Addr().IsUnspecified() {
			everywhere++
		} else {
			own = append(own, ap)
		}
	}
	e.listeners.mu.RUnlock()
	if everywhere != 0 {
		t.Errorf("%d endpoint(s) of a launched browser are registered as on every address", everywhere)
	}
	e.mu.Lock()
	devtools := e.backendLocked(m).devtools
	e.mu.Unlock()
	if !devtools.IsValid() || !strings.Contains(fmt.Sprint(own), devtools.String()) {
		t.Fatalf("the DevTools endpoint %v is not among the registered endpoints %v", devtools, own)
	}
	if len(own) < 2 {
		t.Fatalf("registered endpoints %v: want the DevTools endpoint and at least one proxy", own)
	}
	for _, ap := range own {
		if ap.Addr() != netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("endpoint %v is not on 127.0.0.1", ap)
		}
		port := ap.Port()
		var hits atomic.Int64
		site := serveOn(t, fmt.Sprintf("127.0.0.3:%d", port), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Write([]byte("<title>elsewhere</title>"))
		}))
		if r := navigate(site + "/"); r.IsError || !strings.Contains(r.Text, `title="elsewhere"`) || hits.Load() == 0 {
			t.Errorf("a site on 127.0.0.3 at port %d (browsergate's %v) was not reached: %s", port, ap, r.Text)
		}
		for _, host := range []string{"127.0.0.1", "0.0.0.0", "[::]", "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]", "localhost"} {
			u := fmt.Sprintf("http://%s:%d/json/version", host, port)
			// The DevTools port is in the scope's own deny list; every
			// endpoint is in the daemon's.
			if r := navigate(u); !r.IsError || !strings.Contains(r.Text, "rule: browsergate endpoint") && !strings.Contains(r.Text, "rule: deny_addr_ports") {
				t.Errorf("navigate %s (browsergate's %v) was not refused as browsergate's endpoint: %s", u, ap, r.Text)
			}
		}
	}
	e.Close()
	e.listeners.mu.RLock()
	defer e.listeners.mu.RUnlock()
	if len(e.listeners.at) != 0 {
		t.Errorf("endpoints still registered after the executor closed: %v", e.listeners.at)
	}
}

// TestEveryCheckRefusesOwnEndpointsByLocalhost: the navigation and
// interception check, the egress proxy's host check and the WebSocket
// rules all judge a localhost name at 127.0.0.1 and ::1 against the
// daemon's endpoints (a live session in the user's own context has no
// proxy behind it to resolve the name and refuse the address).
func TestEveryCheckRefusesOwnEndpointsByLocalhost(t *testing.T) {
	t.Parallel()
	b := &backend{listeners: &listeners{}}
	b.scope.Store(mustScope(t, scope.Config{AllowedDomains: []string{"localhost", "*.localhost"}, AllowPrivateCIDRs: []string{"127.0.0.1/32", "::1/128"}}))
	b.listeners.add(netip.MustParseAddrPort("127.0.0.1:40001"), "a proxy")
	b.listeners.add(netip.MustParseAddrPort("[::1]:40002"), "a front on ::1")
	for _, tc := range []struct {
		host    string
		port    uint16
		refused bool
	}{
		{"localhost", 40001, true},
		{"LOCALHOST.", 40001, true},
		{"app.localhost", 40002, true},
		{"localhost", 40005, false},
	} {
		u := fmt.Sprintf("http://%s:%d/", tc.host, tc.port)
		if v := b.check(u); v.Allowed == tc.refused || tc.refused && v.Rule != "browsergate endpoint" {
			t.Errorf("check(%s) = %+v, want refused=%v as browsergate's endpoint", u, v, tc.refused)
		}
		if v := (policyRef{b: b}).CheckHost(tc.host, tc.port); v.Allowed == tc.refused {
			t.Errorf("proxy CheckHost(%s, %d) = %+v, want refused=%v", tc.host, tc.port, v, tc.refused)
		}
		if allowed := b.wsAllowed()(tc.host, tc.port); allowed == tc.refused {
			t.Errorf("wsAllowed(%s, %d) = %v, want refused=%v", tc.host, tc.port, allowed, tc.refused)
		}
	}
}

// TestLiveEndpointStaysGuardedAfterRelease: a live browser outlives every
// connection to it, so its DevTools port (here named only by a
// DevToolsActivePort file, which the manifest cannot register ahead of
// time) stays refused, on every address, after its backend lets go of it,
// and attaching again does not register it twice.
func TestLiveEndpointStaysGuardedAfterRelease(t *testing.T) {
	t.Parallel()
	portFile := testkit.WriteFile(t, t.TempDir(), "DevToolsActivePort", "9339\n/devtools/browser/x\n")
	m := testkit.Manifest(t, fmt.Sprintf(`[tool]
name = "live"
[browser]
connect = "live"
live_endpoint = %q
[browser.scope]
allowed_domains = ["127.0.0.3"]
allow_private_cidrs = ["127.0.0.3/32"]
[browser.commands.navigate]
`, portFile))
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	elsewhere := netip.MustParseAddrPort("127.0.0.3:9339")
	if _, refused := e.listeners.verdict(elsewhere); refused {
		t.Fatal("the port is refused before any backend read the file: the test proves nothing")
	}
	e.mu.Lock()
	b := e.backendLocked(m)
	e.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range 2 {
		// No connection is made until a session asks for one.
		if err := b.startLocked("attach"); err != nil {
			t.Fatalf("attach %d: %v", i, err)
		}
		b.release()
		if _, refused := e.listeners.verdict(elsewhere); !refused {
			t.Fatalf("after attach %d and release, the live DevTools port is no longer refused at %v", i, elsewhere)
		}
	}
	e.listeners.mu.RLock()
	n := e.listeners.at[everywhere(9339)].n
	e.listeners.mu.RUnlock()
	if n != 1 {
		t.Errorf("the live endpoint is registered %d times after two attaches, want once", n)
	}
}
