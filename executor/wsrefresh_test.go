package executor

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/scope"
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
// connection from the session's page, nor from a frame of another site
// (a target of its own, prepared after the endpoint came). Control
// canaries, not registered, show that both reach such a port. Targets
// that are gone (the frames of the pages left) are forgotten at the next
// change, and the tab is not taken for one that refused the rules.
func TestLiveWebSocketRulesFollowNewEndpoints(t *testing.T) {
	t.Parallel()
	r := newLiveWSRig(t)
	e, site, navigate, register := r.e, r.site, r.navigate, r.register
	navigate(site + "/") // the session, its guard and its rules exist

	tabControl, frameControl := startCanary(t), startCanary(t)
	navigate(fmt.Sprintf("%s/?port=%d&frame=%d", site, tabControl.port, frameControl.port))
	deadline := time.Now().Add(5 * time.Second)
	for (tabControl.Conns() == 0 || frameControl.Conns() == 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if tabControl.Conns() == 0 || frameControl.Conns() == 0 {
		t.Fatalf("the WebSockets of the page (%d connections) and of its frame (%d) did not both reach a port the scope allows: the test proves nothing",
			tabControl.Conns(), frameControl.Conns())
	}

	guarded := startCanary(t)
	register(guarded, "an endpoint the daemon opened after the session began")
	for range 2 {
		navigate(fmt.Sprintf("%s/?port=%d&frame=%d", site, guarded.port, guarded.port))
		time.Sleep(500 * time.Millisecond)
	}
	if n := guarded.Conns(); n != 0 {
		t.Errorf("the daemon's endpoint registered after the session began saw %d connection(s) from the session's page and its frame", n)
	}

	// The frames are gone with their pages: the next change forgets them
	// and keeps the tab.
	navigate(site + "/")
	register(startCanary(t), "another endpoint")
	s, err := e.session(&toolclad.Call{SessionID: "s", Manifest: r.m})
	if err != nil {
		t.Fatal(err)
	}
	g := s.egress.guard
	g.wsMu.Lock()
	n := len(g.wsSessions)
	g.wsMu.Unlock()
	if n != 1 {
		t.Errorf("the guard holds %d targets to WebSocket rules after the frames were gone, want 1 (the tab)", n)
	}
	navigate(site + "/?again") // the tab is still the session's
}

// liveWSRig is a live session in a user's Chromium (context "user"), on a
// site of 127.0.0.1 whose page at ?port= opens WebSockets to that port of
// 127.0.0.1, and at &frame= adds a frame of another site (127.0.0.2) that
// opens them to the port it names.
type liveWSRig struct {
	e    *Executor
	m    *toolclad.Manifest
	site string
	t    *testing.T
}

func newLiveWSRig(t *testing.T) *liveWSRig {
	t.Helper()
	port, _ := testkit.StartChromium(t, testkit.ChromiumFlags()...)
	var frameSite string
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		q := r.URL.Query()
		fmt.Fprint(w, `<!doctype html><title>ws</title><p>ws</p>`)
		if p := q.Get("port"); p != "" {
			fmt.Fprintf(w, `<script>
for (const u of ["ws://127.0.0.1:%[1]s/", "ws://localhost:%[1]s/", "wss://127.0.0.1:%[1]s/"]) {
  try { new WebSocket(u); } catch (e) {}
}
</script>`, p)
		}
		if f := q.Get("frame"); f != "" {
			fmt.Fprintf(w, `<iframe src="%s/?port=%s"></iframe>`, frameSite, f)
		}
	})
	frameSite = serveOn(t, "127.0.0.2:0", page)
	site := serveOn(t, "127.0.0.1:0", page)
	m := testkit.Manifest(t, fmt.Sprintf(`[tool]
name = "live"
[browser]
connect = "live"
live_endpoint = "http://127.0.0.1:%d"
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.2", "localhost"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.2/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`, port))
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return &liveWSRig{e: e, m: m, site: site, t: t}
}

// navigate runs a navigate of the rig's session through the whole loop.
func (r *liveWSRig) navigate(u string) {
	r.t.Helper()
	raw := map[string]any{"url": u}
	args, err := r.m.Command("navigate").Validate(raw)
	if err != nil {
		r.t.Fatal(err)
	}
	if reply := r.e.Run(context.Background(), &toolclad.Call{SessionID: "s", Manifest: r.m, Command: r.m.Command("navigate"),
		Tool: "live.navigate", Args: args, RawArgs: raw}); reply.IsError {
		r.t.Fatalf("navigate %s: %s", u, reply.Text)
	}
}

// register makes the canary's port one of the daemon's endpoints.
func (r *liveWSRig) register(c *canary, what string) {
	r.e.GuardEndpoint(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(c.port)), what)
}

// TestLiveWebSocketRulesSeeAnEndpointOfTheirStart: an endpoint registered
// after a session's first rules were built and before the session watched
// the endpoints is refused all the same: the session sends new rules as
// it begins to watch.
func TestLiveWebSocketRulesSeeAnEndpointOfTheirStart(t *testing.T) {
	t.Parallel()
	r := newLiveWSRig(t)
	guarded := startCanary(t)
	r.e.mu.Lock()
	b := r.e.backendLocked(r.m)
	r.e.mu.Unlock()
	b.rulesBuilt = func() { r.register(guarded, "an endpoint registered as the session began") }
	r.navigate(r.site + "/") // the session: its rules are built, then the endpoint comes
	control := startCanary(t)
	r.navigate(fmt.Sprintf("%s/?port=%d", r.site, control.port))
	deadline := time.Now().Add(5 * time.Second)
	for control.Conns() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if control.Conns() == 0 {
		t.Fatal("the page's WebSocket never reached a port the scope allows: the test proves nothing")
	}
	for range 2 {
		r.navigate(fmt.Sprintf("%s/?port=%d", r.site, guarded.port))
		time.Sleep(500 * time.Millisecond)
	}
	if n := guarded.Conns(); n != 0 {
		t.Errorf("an endpoint registered between the session's first rules and its watch saw %d connection(s) from the session's page", n)
	}
}

// canary is a canary of demosite's (every TCP connection counted) on a
// port of 127.0.0.1.
type canary struct {
	*demosite.NetCanary
	port int
}

func startCanary(t *testing.T) *canary {
	t.Helper()
	c, base, stop, err := demosite.ListenCanary("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return &canary{NetCanary: c, port: port}
}

// TestWSAllowedAsTheChecks: the allowed func WebSocket rules are built
// from, which keeps the scope's answers and asks the daemon's endpoints
// only at their own ports, answers as the scope and the endpoints do on
// every port, before and after the endpoints change (one on every address
// among them, as a live DevTools port is registered).
func TestWSAllowedAsTheChecks(t *testing.T) {
	t.Parallel()
	b := &backend{listeners: &listeners{}}
	b.scope.Store(mustScope(t, scope.Config{AllowedDomains: []string{"127.0.0.1", "localhost", "::1", "127.0.0.5", "*.localhost"},
		AllowPrivateCIDRs: []string{"127.0.0.0/8", "::1/128"}}))
	b.listeners.add(netip.MustParseAddrPort("127.0.0.1:40001"), "a proxy")
	b.listeners.add(netip.MustParseAddrPort("0.0.0.0:9222"), "a DevTools endpoint on every address")
	b.listeners.add(netip.MustParseAddrPort("[::1]:40002"), "a front on ::1")
	hosts := []string{"127.0.0.1", "localhost", "[::1]", "127.0.0.5", "app.localhost", "127.0.0.9"}
	compare := func(when string) {
		allowed := b.wsAllowed()
		for _, h := range hosts {
			for p := 1; p <= 65535; p++ {
				v := b.scope.Load().CheckHost(h, uint16(p))
				_, deny := b.listeners.hostVerdict(v.Host, uint16(p))
				if want := v.Allowed && !deny; allowed(h, uint16(p)) != want {
					t.Errorf("%s: wsAllowed(%s, %d) = %v, want %v", when, h, p, !want, want)
				}
			}
		}
	}
	compare("at first")
	b.listeners.add(netip.MustParseAddrPort("[::]:40003"), "an endpoint on every address")
	b.listeners.remove(netip.MustParseAddrPort("127.0.0.1:40001"))
	compare("after the endpoints changed")
}
