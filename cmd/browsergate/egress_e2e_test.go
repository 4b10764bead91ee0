package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/examples/demosite"
)

// The egress suite proves absence. A canary on 127.0.0.2, outside the
// manifest's scope, counts every TCP connection and every HTTP or WebSocket
// request it receives; each attack page on the allowed site tries to reach
// it one way (see demosite.Attacks), and the case passes only if the canary
// saw nothing while the allowed site kept working. The suite runs once
// against a browser browsergate launches (request interception and the
// egress proxy) and once attached to a running Chromium (interception
// alone, for the user's browser; the session's own context may sit behind
// the proxy too).

// egressManifest grants the demo site on 127.0.0.1 and a second allowed
// site on 127.0.0.3 (so that an iframe can be cross-site, out of process,
// and still in scope). The canary's 127.0.0.2 is granted nowhere.
const egressManifest = `
[tool]
name = "egress"
mode = "browser"
description = "egress test browser"
timeout_seconds = 30

[browser]
connect = %q
%s
startup_timeout_seconds = 30
max_interactions = 100000

[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.wait_for]
[browser.commands.submit_form]
`

// egressFixture is the end-to-end fixture with a connection-counting
// canary, the attack pages, and the serve process's id (to find the
// browser it launched).
// egressFixture is the end-to-end fixture; its canary counts connections
// and the attack pages are mounted on both allowed sites.
type egressFixture struct {
	*fixture
	// tcpMeasured: a TCP connection to the canary without a request is
	// measured, not a failure (the user's context, with no proxy: see
	// TestEgressLive); tcpCases names the cases that made one.
	tcpMeasured bool
	tcpCases    []string
	// beforeCase, when set, runs before each case of runEgressSuite.
	beforeCase func(t *testing.T)
}

// startManifest is start with the manifest body as a parameter (formatted
// with connect and the live_endpoint line, as e2eManifest is).
func startManifest(t testing.TB, manifestBody, connect, endpoint string) *egressFixture {
	t.Helper()
	live := ""
	if endpoint != "" {
		live = fmt.Sprintf("live_endpoint = %q", endpoint)
	}
	return &egressFixture{fixture: startWith(t, fmt.Sprintf(manifestBody, connect, live))}
}

// attackCase is one way for a page to reach the canary.
type attackCase struct {
	name  string
	path  string // under /attack/
	click bool   // click #go after the page loads (the attempt needs a gesture)
	// leaves is set when the attempt is a navigation of the tab itself: the
	// page is gone (or replaced by an error page) afterwards, so it cannot
	// report. Every other page must print "done", or the case proved
	// nothing.
	leaves bool
}

// attackCases covers every request path in SECURITY-TESTS.md §8 and the
// encoded host spellings of §2, each as a page on the allowed site.
func attackCases() []attackCase {
	cases := []attackCase{
		{name: "redirect 301", path: "redirect/301"},
		{name: "redirect 302", path: "redirect/302"},
		{name: "redirect 303", path: "redirect/303"},
		{name: "redirect 307", path: "redirect/307"},
		{name: "redirect 308", path: "redirect/308"},
		{name: "redirect chain allowed-allowed-canary", path: "chain", leaves: true},
		{name: "meta refresh", path: "meta-refresh", leaves: true},
		{name: "js location", path: "js-location", leaves: true},
		{name: "js location on a timer", path: "js-location-timer", leaves: true},
		{name: "window.open", path: "window-open", click: true},
		{name: "link click", path: "link-click", click: true, leaves: true},
		{name: "form GET", path: "form-get", click: true, leaves: true},
		{name: "form POST", path: "form-post", click: true, leaves: true},
		{name: "img", path: "img"},
		{name: "script", path: "script"},
		{name: "stylesheet", path: "stylesheet"},
		{name: "fetch", path: "fetch"},
		{name: "XHR", path: "xhr"},
		{name: "WebSocket", path: "websocket"},
		{name: "EventSource", path: "eventsource"},
		{name: "sendBeacon", path: "beacon"},
		{name: "link prefetch", path: "prefetch"},
		{name: "link preconnect", path: "preconnect"},
		{name: "Link header preconnect", path: "preconnect-header"},
		{name: "link dns-prefetch", path: "dns-prefetch"},
		{name: "service worker", path: "service-worker"},
		{name: "download link", path: "download", click: true, leaves: true},
	}
	for _, s := range demosite.EncodedSpellings() {
		cases = append(cases, attackCase{name: "img and fetch to encoded host " + s, path: "encoded/" + s})
	}
	// Last: today every navigate after a page with an out-of-process
	// iframe (the canary's 127.0.0.2 is another site too) takes about 3 s,
	// which would slow every case after these.
	return append(cases,
		attackCase{name: "iframe", path: "iframe"},
		attackCase{name: "cross-site iframe subresources", path: "cross-site-iframe"},
		attackCase{name: "cross-site iframe navigates itself", path: "cross-site-iframe-navigate"},
	)
}

// canaryMark is what the canary had seen before a case, so that a failure
// names what this case let through.
type canaryMark struct{ hits, conns int }

func (f *egressFixture) mark() canaryMark {
	return canaryMark{hits: len(f.net.Seen()), conns: len(f.net.Peers())}
}

// checkCanary fails the test if the canary saw anything since m.
func (f *egressFixture) checkCanary(t *testing.T, m canaryMark) {
	t.Helper()
	seen, peers := f.net.Seen(), f.net.Peers()
	if f.tcpMeasured && len(seen) == m.hits && len(peers) > m.conns {
		t.Logf("TCP: the canary saw %d connection(s) without a request", len(peers)-m.conns)
		f.tcpCases = append(f.tcpCases, fmt.Sprintf("%s (%d)", t.Name(), len(peers)-m.conns))
		return
	}
	if len(seen) > m.hits || len(peers) > m.conns {
		t.Errorf("LEAK: the canary on 127.0.0.2 saw %d new request(s) %q and %d new connection(s) from %v",
			len(seen)-m.hits, seen[m.hits:], len(peers)-m.conns, peers[m.conns:])
	}
}

// settle gives the page its moment: it waits, bounded by ms, for the page's
// "done" marker (the attempt has been made), so that asynchronous attempts
// reach the network before the canary is read. The outcome is informative
// only: a page that navigated away (or was stopped) never prints "done".
func (f *egressFixture) settle(t *testing.T, ms int) bool {
	t.Helper()
	text, refused := f.call(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": ms})
	if refused && strings.Contains(text, "had left the scope and were closed") {
		// The gate closed a popup before this call (a slow machine let the
		// popup commit its URL after the click's own check): ask again.
		t.Logf("wait_for done: %s", firstLine(text))
		text, refused = f.call(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": ms})
	}
	if refused {
		t.Logf("wait_for done: %s", firstLine(text))
	}
	return !refused
}

// stillWorks navigates to the allowed docs page: the gate must not have
// broken the session while it stopped the attack.
func (f *egressFixture) stillWorks(t *testing.T) {
	t.Helper()
	text := f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/docs"})
	if !strings.Contains(text, `title="Documentation"`) {
		t.Errorf("after the attack the allowed docs page did not load:\n%s", text)
	}
}

// runAttack opens the attack page, clicks when the case needs it, lets the
// page settle, and checks that the canary saw nothing and that the allowed
// site still works. Refusals along the way are fine (a redirect to the
// canary is refused at the gate); only the canary decides.
func (f *egressFixture) runAttack(t *testing.T, tc attackCase) {
	t.Helper()
	m := f.mark()
	start := time.Now()
	text, refused := f.call(t, "egress.navigate", map[string]any{"url": f.siteURL + "/attack/" + tc.path})
	t.Logf("navigate refused=%v (%v): %s", refused, time.Since(start).Round(time.Millisecond), firstLine(text))
	if tc.click && !refused {
		start = time.Now()
		text, refused := f.call(t, "egress.click", map[string]any{"selector": "#go"})
		t.Logf("click #go refused=%v (%v): %s", refused, time.Since(start).Round(time.Millisecond), firstLine(text))
	}
	start = time.Now()
	// wait_for answers as soon as "done" appears; the bound only matters
	// on a slow, loaded machine.
	bound := 20000 // a page that stays prints done: wait long for it on a loaded machine
	if tc.leaves {
		bound = 8000 // a page that leaves may never print it
	}
	done := f.settle(t, bound)
	t.Logf("settled in %v", time.Since(start).Round(time.Millisecond))
	switch {
	case done:
		status, _ := f.call(t, "egress.snapshot", map[string]any{"selector": "#status"})
		t.Logf("the page says: %s", strings.Join(strings.Fields(status), " "))
	case !tc.leaves && !refused:
		t.Errorf("the attack page never printed done: the attempt was not made, so this case proves nothing")
	}
	start = time.Now()
	f.stillWorks(t)
	t.Logf("docs in %v", time.Since(start).Round(time.Millisecond))
	f.checkCanary(t, m)
}

// probePort opens a page that fetches http://127.0.0.1:port from script
// and fails if the page says the port answered, or the canary saw anything.
func (f *egressFixture) probePort(t *testing.T, path string, port int) {
	t.Helper()
	m := f.mark()
	f.mustAllow(t, "egress.navigate", map[string]any{"url": fmt.Sprintf("%s/attack/%s?port=%d", f.siteURL, path, port)})
	if text, refused := f.call(t, "egress.wait_for", map[string]any{"text": "done:", "timeout_ms": 3000}); refused {
		t.Fatalf("the probe page did not finish: %s", text)
	}
	snap := f.mustAllow(t, "egress.snapshot", nil)
	if strings.Contains(snap, "done: reached") {
		t.Errorf("LEAK: a page reached 127.0.0.1:%d from script", port)
	} else if !strings.Contains(snap, "done: blocked") {
		t.Errorf("the probe page printed neither result:\n%s", snap)
	}
	f.stillWorks(t)
	f.checkCanary(t, m)
}

// encodedNavigations are the canary's address spelled so that a naive
// check misses it, given straight to navigate: each must be refused before
// the browser moves.
func encodedNavigations(canary string) map[string]string {
	port := canaryPort(canary)
	urls := map[string]string{}
	for name, u := range demosite.EncodedCanaryURLs(canary) {
		urls[name] = u + "/"
	}
	for name, u := range map[string]string{
		"plain":              "http://127.0.0.2:%s/",
		"uppercase scheme":   "HTTP://127.0.0.2:%s/",
		"userinfo":           "http://127.0.0.1@127.0.0.2:%s/",
		"userinfo with port": "http://127.0.0.1:80@127.0.0.2:%s/",
		"backslash userinfo": `http://127.0.0.2:%s\@127.0.0.1/`,
		"tab in host":        "http://127.0.0.\t2:%s/",
		"fullwidth digits":   "http://１２７.０.０.２:%s/",
		"ideographic stops":  "http://127。0。0。2:%s/",
		"hex mapped IPv6":    "http://[::ffff:7f00:2]:%s/",
	} {
		urls[name] = fmt.Sprintf(u, port)
	}
	return urls
}

func canaryPort(canary string) string {
	u, err := url.Parse(canary)
	if err != nil {
		return ""
	}
	return u.Port()
}

// runEgressSuite gives the encoded navigations, then runs every attack,
// against one session.
func runEgressSuite(t *testing.T, f *egressFixture) {
	navs := encodedNavigations(f.canaryTo)
	for _, name := range slices.Sorted(maps.Keys(navs)) {
		u := navs[name]
		t.Run("navigate to "+name, func(t *testing.T) {
			if f.beforeCase != nil {
				f.beforeCase(t)
			}
			m := f.mark()
			f.mustRefuse(t, "egress.navigate", map[string]any{"url": u})
			f.stillWorks(t)
			f.checkCanary(t, m)
		})
	}
	for _, tc := range attackCases() {
		t.Run(tc.name, func(t *testing.T) {
			if f.beforeCase != nil {
				f.beforeCase(t)
			}
			f.runAttack(t, tc)
		})
	}
}

// TestEgressLaunch runs the attacks in a browser that browsergate launches:
// request interception and the egress proxy both stand in the way.
func TestEgressLaunch(t *testing.T) {
	t.Parallel()
	f := startManifest(t, egressManifest, "launch", "")
	f.stillWorks(t) // starts the browser
	flags := launchedBrowserFlags(t, f.pid)

	t.Run("launched browser is behind the egress proxy", func(t *testing.T) {
		if flags == nil {
			t.Fatal("found no Chromium process under browsergate serve")
		}
		if !strings.HasPrefix(flags["proxy-server"], "http://127.0.0.1:") {
			t.Errorf("--proxy-server = %q, want the egress proxy on 127.0.0.1", flags["proxy-server"])
		}
		if !strings.Contains(flags["proxy-bypass-list"], "<-loopback>") {
			t.Errorf("--proxy-bypass-list = %q, want <-loopback> so loopback goes through the proxy too", flags["proxy-bypass-list"])
		}
	})
	t.Run("devtools port from a page", func(t *testing.T) {
		port := devToolsPort(flags)
		if port == 0 {
			// --remote-debugging-port=0: the browser wrote the port it
			// chose into its profile.
			if data, err := os.ReadFile(filepath.Join(flags["user-data-dir"], "DevToolsActivePort")); err == nil {
				fmt.Sscanf(string(data), "%d", &port)
			}
		}
		if port == 0 {
			t.Fatalf("could not find the launched browser's DevTools port (flags %v)", flags)
		}
		f.probePort(t, "devtools-port", port)
	})
	t.Run("proxy port from a page", func(t *testing.T) {
		port := proxyPort(flags)
		if port == 0 {
			t.Skip("the launched browser has no --proxy-server")
		}
		f.probePort(t, "proxy-port", port)
	})
	runEgressSuite(t, f)
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("over the whole run the canary saw %s", f.net)
	}
}

// TestEgressLive runs the attacks in a Chromium that browsergate attaches
// to, as a user's own browser would run, in the user's own browser context
// (live mode's default): no egress proxy stands there, so request
// interception and the WebSocket rules are the gate. The browser is
// started as the README says, with "Preload pages" off, so that it opens
// no speculative TCP connection to a host a page names (which no DevTools
// interception sees): the canary must see nothing at all, not even a TCP
// connection. TestLivePreconnects measures what the setting left on lets
// through.
func TestEgressLive(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	f := startManifest(t, egressManifest, "live", fmt.Sprintf("http://127.0.0.1:%d", port))
	t.Run("devtools port from a page", func(t *testing.T) { f.probePort(t, "devtools-port", port) })
	runEgressSuite(t, f)
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("over the whole run the canary saw %s", f.net)
	}
}

// TestEgressLiveAdopted runs the attacks in a user's tab the session
// adopted with switch_tab (live, the user's context, "Preload pages" off
// as in TestEgressLive): the guard must be as complete there as in the
// session's own tab, and the canary see nothing at all.
func TestEgressLiveAdopted(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := startManifest(t, strings.Replace(egressManifest, "[browser.commands.snapshot]", "[browser.commands.snapshot]\n[browser.commands.list_tabs]\n[browser.commands.switch_tab]", 1),
		"live", endpoint)
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	defer cancelAlloc()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	if err := chromedp.Do(user, chromedp.Navigate(f.siteURL+"/?users-own-tab")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	// Each case starts in the user's tab, adopted. A case that leaves the
	// tab outside the scope (an error page) has the session let it go (a
	// user's tab is never reset): the user then takes it back to the site
	// and the session adopts it again.
	readopted := 0
	f.beforeCase = func(t *testing.T) {
		tabs, _ := f.tabs(t, "egress")
		if slices.ContainsFunc(tabs, func(tb listedTab) bool { return tb.Owner == "user" && tb.Active }) {
			return
		}
		readopted++
		if err := chromedp.Do(user, chromedp.Navigate(f.siteURL+"/?users-own-tab")); err != nil {
			t.Fatalf("the user's tab: %v", err)
		}
		f.mustAllow(t, "egress.switch_tab", map[string]any{"tab": f.tabID(t, "egress", "user", "users-own-tab")})
	}
	f.beforeCase(t)
	readopted = 0
	runEgressSuite(t, f)
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("over the whole run the canary saw %s", f.net)
	}
	t.Logf("the session let the user's tab go (and adopted it again) %d time(s)", readopted)
}

// TestEgressLiveIsolated runs the attacks attached to a running Chromium
// with context = "isolated": each session in a browser context of its own
// behind its own egress proxy, so the canary must see nothing at all, not
// even a TCP connection.
func TestEgressLiveIsolated(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	f := startManifest(t, strings.Replace(egressManifest, "connect = %q\n", "connect = %q\ncontext = \"isolated\"\n", 1),
		"live", fmt.Sprintf("http://127.0.0.1:%d", port))
	t.Run("devtools port from a page", func(t *testing.T) { f.probePort(t, "devtools-port", port) })
	runEgressSuite(t, f)
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("over the whole run the canary saw %s", f.net)
	}
}

// TestEgressWebTransport: WebTransport runs over QUIC (UDP), which no
// HTTP proxy sees and Fetch interception does not intercept: from a page
// and from a dedicated worker, a UDP canary on 127.0.0.2 must receive
// nothing.
func TestEgressWebTransport(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, connect, endpoint string) {
		udp, packets := udpCanary(t)
		f := startManifest(t, egressManifest, connect, endpoint)
		for _, query := range []string{"", "&worker=1"} {
			f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/attack/webtransport?quic=" + udp.LocalAddr().String() + query})
			f.mustAllow(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
			status, _ := f.call(t, "egress.snapshot", map[string]any{"selector": "#status"})
			t.Logf("webtransport%s: %s", query, strings.Join(strings.Fields(status), " "))
		}
		if n := packets.Load(); n != 0 {
			t.Fatalf("the UDP canary received %d packet(s): WebTransport went around the egress gate", n)
		}
	})
}

// launchedBrowserFlags is the --name=value switches of the Chromium
// browser process under pid (chromedp starts it directly), or nil.
func launchedBrowserFlags(t *testing.T, pid int) map[string]string {
	t.Helper()
	if bs := launchedBrowsers(t, pid); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// devToolsPort reads the DevTools port of a launched browser from its
// profile's DevToolsActivePort file (chromedp asks for port 0).
func devToolsPort(flags map[string]string) int {
	if p, err := strconv.Atoi(flags["remote-debugging-port"]); err == nil && p > 0 {
		return p
	}
	data, err := os.ReadFile(filepath.Join(flags["user-data-dir"], "DevToolsActivePort"))
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]))
	return p
}

// proxyPort is the port of the launched browser's --proxy-server.
func proxyPort(flags map[string]string) int {
	u, err := url.Parse(flags["proxy-server"])
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestEgressCanaryCounts checks the instrument the egress suite trusts: a
// bare TCP connection, an HTTP request and a WebSocket each register, so a
// clean canary means nothing arrived, not that the canary was blind.
func TestEgressCanaryCounts(t *testing.T) {
	t.Parallel()
	c, base, stop, err := demosite.ListenCanary("127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !c.Clean() {
		t.Fatalf("a new canary is not clean: %s", c)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	resp, err := http.Get(base + "/probe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The server accepts in order: once the request is answered, the bare
	// connection before it has been counted too.
	if c.Conns() != 2 || c.Hits() != 1 {
		t.Fatalf("after a bare connection and one request: %s", c)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, _, err := ws.ReadMessage(); err != nil { // sent after the upgrade is counted
		t.Fatal(err)
	}
	if c.Conns() != 3 || c.Hits() != 2 || c.Upgrades() != 1 {
		t.Fatalf("after a WebSocket too: %s", c)
	}
}

// inBothModes runs test as a subtest per connect mode: a browser that
// browsergate launches, and a Chromium it attaches to live (started as
// the README says, "Preload pages" off).
func inBothModes(t *testing.T, test func(t *testing.T, connect, endpoint string)) {
	t.Helper()
	port, _ := startUsersChromium(t)
	t.Run("launch", func(t *testing.T) { test(t, "launch", "") })
	t.Run("live", func(t *testing.T) { test(t, "live", fmt.Sprintf("http://127.0.0.1:%d", port)) })
}

// udpCanary listens for UDP on 127.0.0.2 (out of scope) and counts the
// datagrams it receives until the test ends.
func udpCanary(t *testing.T) (net.PacketConn, *atomic.Int64) {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	return udp, countDatagrams(t, udp, nil)
}

// countDatagrams counts the datagrams udp receives until the test ends,
// when it is closed, and hands each to each (unless nil) first.
func countDatagrams(t *testing.T, udp net.PacketConn, each func([]byte)) *atomic.Int64 {
	t.Cleanup(func() { udp.Close() })
	var packets atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			if each != nil {
				each(buf[:n])
			}
			packets.Add(1)
		}
	}()
	return &packets
}

// TestEgressWebRTC: ICE gathering sends STUN over UDP, which no HTTP proxy
// sees, so the session's pages get no WebRTC at all. A UDP canary on
// 127.0.0.2 must receive nothing.
func TestEgressWebRTC(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, connect, endpoint string) {
		udp, packets := udpCanary(t)
		f := startManifest(t, egressManifest, connect, endpoint)
		// The tab, a cross-site iframe, and a popup (its first script
		// tries at once: only a popup held at start is safe).
		for _, page := range []string{"webrtc", "webrtc-frame", "webrtc-popup"} {
			f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/attack/" + page + "?stun=" + udp.LocalAddr().String()})
			if page == "webrtc-popup" {
				f.mustAllow(t, "egress.click", map[string]any{"selector": "#go"})
			}
			text := f.mustAllow(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
			if status, _ := f.call(t, "egress.snapshot", map[string]any{"selector": "#status"}); !strings.Contains(status, "no RTCPeerConnection") {
				t.Errorf("%s: the page had WebRTC (%s)\n%s", page, strings.Join(strings.Fields(status), " "), text)
			}
		}
		if n := packets.Load(); n != 0 {
			t.Fatalf("the UDP canary received %d packet(s): WebRTC went around the egress gate", n)
		}
	})
}

// TestPopupHeldAtStart: a popup is paused before its first request until
// its requests are intercepted, so a popup opened straight at the canary is
// refused by interception (reported with its full URL), not left to the
// egress proxy. Live mode has the same guard.
func TestPopupHeldAtStart(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, connect, endpoint string) {
		f := startManifest(t, egressManifest, connect, endpoint)
		f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/attack/window-open"})
		clicked, _ := f.call(t, "egress.click", map[string]any{"selector": "#go"})
		f.settle(t, 3000)
		waited, _ := f.call(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 100})
		report := clicked + "\n" + waited
		want := f.canaryTo + "/window-open (address class loopback, interception)"
		if !strings.Contains(report, want) {
			t.Errorf("the popup's first request was not refused by interception; want %q in:\n%s", want, report)
		}
		if strings.Contains(report, "proxy)") {
			t.Errorf("a request of the popup reached the egress proxy before interception:\n%s", report)
		}
		// In the user's context (live's default) no proxy stands behind
		// interception; with "Preload pages" off no speculative TCP
		// connection is made either.
		if !f.net.Clean() {
			t.Fatalf("LEAK: the canary saw %s", f.net)
		}
	})
}
