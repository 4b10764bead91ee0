package executor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestListenersWatch: a watcher is called after each change to what is
// refused (a new endpoint, the last registration of one taken back), not
// after a registration that changes nothing, and not once stopped; the
// generation counts the same changes.
func TestListenersWatch(t *testing.T) {
	t.Parallel()
	var l listeners
	var calls atomic.Int32
	gen, stop := l.watch(func() {
		calls.Add(1)
		if _, refused := l.verdict(netip.MustParseAddrPort("127.0.0.1:40101")); !refused && calls.Load() == 1 {
			t.Error("the watcher ran before the endpoint was refused")
		}
	})
	if gen != 0 {
		t.Fatalf("generation %d before any change", gen)
	}
	ap := netip.MustParseAddrPort("127.0.0.1:40101")
	l.add(ap, "a proxy")
	l.add(ap, "a proxy again") // refuses nothing more
	l.remove(ap)               // one registration is left
	if n := calls.Load(); n != 1 {
		t.Errorf("watcher called %d times after one new endpoint, want 1", n)
	}
	l.remove(ap)
	if n, g := calls.Load(), l.generation(); n != 2 || g != 2 {
		t.Errorf("after the endpoint was forgotten: %d calls, generation %d; want 2 and 2", n, g)
	}
	stop()
	l.add(ap, "a proxy")
	if n := calls.Load(); n != 2 {
		t.Errorf("watcher called after it was stopped (%d calls)", n)
	}
}

// TestLiveWebSocketRulesFollowNewEndpoints: in the user's browser context
// (live) WebSockets are held to the scope by rules set on each target, and
// the rules never allow one of the daemon's own endpoints. An endpoint the
// daemon opens after the session began (another session's egress proxy,
// another manifest's browser) must be refused too: a canary registered as
// one once the session runs, on a port the scope allows, must see no
// connection from the session's page. A control canary, not registered,
// shows that the page's WebSocket does reach such a port.
func TestLiveWebSocketRulesFollowNewEndpoints(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromium(t, testkit.ChromiumFlags...)
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		p := r.URL.Query().Get("port")
		if p == "" {
			fmt.Fprint(w, `<!doctype html><title>start</title><p>start</p>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>ws</title><script>
for (const u of ["ws://127.0.0.1:%[1]s/", "ws://localhost:%[1]s/", "wss://127.0.0.1:%[1]s/"]) {
  try { new WebSocket(u); } catch (e) {}
}
</script><p>ws</p>`, p)
	})
	m := testkit.Manifest(t, fmt.Sprintf(`[tool]
name = "live"
[browser]
connect = "live"
live_endpoint = "http://127.0.0.1:%d"
[browser.scope]
allowed_domains = ["127.0.0.1", "localhost"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`, port))
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	navigate := func(u string) {
		t.Helper()
		raw := map[string]any{"url": u}
		args, err := m.Command("navigate").Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		if reply := e.Run(context.Background(), &toolclad.Call{SessionID: "s", Manifest: m, Command: m.Command("navigate"),
			Tool: "live.navigate", Args: args, RawArgs: raw}); reply.IsError {
			t.Fatalf("navigate %s: %s", u, reply.Text)
		}
	}
	navigate(site + "/") // the session, its guard and its rules exist

	control := startCanary(t)
	navigate(fmt.Sprintf("%s/?port=%d", site, control.port))
	deadline := time.Now().Add(5 * time.Second)
	for control.seen.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if control.seen.Load() == 0 {
		t.Fatal("the page's WebSocket never reached a port the scope allows: the test proves nothing")
	}

	guarded := startCanary(t)
	e.GuardEndpoint(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(guarded.port)), "an endpoint the daemon opened after the session began")
	for range 2 {
		navigate(fmt.Sprintf("%s/?port=%d", site, guarded.port))
		time.Sleep(500 * time.Millisecond)
	}
	if n := guarded.seen.Load(); n != 0 {
		t.Errorf("the daemon's endpoint registered after the session began saw %d connection(s) from the session's page", n)
	}
}

// canary counts the TCP connections made to a port of 127.0.0.1.
type canary struct {
	port int
	seen atomic.Int32
}

func startCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := &canary{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.seen.Add(1)
			conn.Close()
		}
	}()
	return c
}
