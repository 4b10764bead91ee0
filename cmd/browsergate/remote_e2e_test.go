package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// remoteManifest serves a pool host's browser (connect = "remote"); its
// scope grants the whole lab network, so that only the deny class of a
// remote browser (the pool's network and the daemon's own addresses)
// stands between a page and the pool host or the daemon.
var remoteManifest = labManifest("egress", "a browser on a pool host", "", `provider = "cdp-url"
endpoints = [%q]`)

// labManifest is a remote manifest of the lab's tests: the tool name,
// described so, with browserExtra added to [browser], and remote's lines
// and the lab's pool network in [browser.remote]; its scope and commands
// are labScopeAndCommands.
func labManifest(name, description, browserExtra, remote string) string {
	return `
[tool]
name = "` + name + `"
mode = "browser"
description = "` + description + `"
timeout_seconds = 30

[browser]
connect = "remote"
startup_timeout_seconds = 30
max_interactions = 100000
` + browserExtra + `

[browser.remote]
` + remote + `
pool_cidrs = ["10.77.1.0/24"]

` + labScopeAndCommands
}

// labScopeAndCommands ends the remote tests' manifests: labScope and the
// egress suite's commands (labCommands).
const labScopeAndCommands = labScope + labCommands

// labScope grants the whole lab network (and names the pool host and the
// gate), so that only the deny class of browsers elsewhere stands between
// a page and the pool or the daemon.
const labScope = `[browser.scope]
allowed_domains = ["10.77.3.2", "10.77.3.4", "10.77.1.1", "10.77.1.2"]
allow_private_cidrs = ["10.77.0.0/16"]
allowed_ports = ["1-65535"]

`

// labCommands are the commands the egress suite calls.
const labCommands = `[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.wait_for]
[browser.commands.submit_form]
`

// remoteLab is a daemon host D, a pool host P running Chromium behind a
// forwarder, a web host W serving the allowed sites, and a canary host C
// that P reaches straight (and D only through P): a request from a
// session's page that went around the gate, and one the gate let through
// wrongly, both reach it.
//
//	D 10.77.1.1 ── 10.77.1.2 P 10.77.2.1 ── 10.77.2.2 C
//	D 10.77.3.1 ── 10.77.3.2 W (and 10.77.3.4)
type remoteLab struct {
	lab        *netlab.Lab
	d, p, w, c *netlab.Host
	devtools   string // the pool host's DevTools, through its forwarder
	gate       string // the daemon's gate
}

// inside is the command prefix that runs a program in h's namespace.
func (r *remoteLab) inside(h *netlab.Host) []string {
	return []string{"nsenter", "--net=/run/netns/" + h.Netns(), "--"}
}

func newRemoteLab(t *testing.T) *remoteLab {
	t.Helper()
	r := newLabHosts(t)
	r.p.Chromium(t, 9222)
	r.p.Forward(t, "10.77.1.2:9223", "127.0.0.1:9222")
	r.devtools = "http://10.77.1.2:9223"
	return r
}

// newLabHosts makes the hosts of a remoteLab, with nothing running on
// the pool host yet.
func newLabHosts(t testing.TB) *remoteLab {
	t.Helper()
	lab := netlab.New(t)
	r := &remoteLab{lab: lab, d: lab.Host("daemon"), p: lab.Host("pool"), w: lab.Host("web"), c: lab.Host("canary")}
	lab.Link(r.d, "10.77.1.1/24", r.p, "10.77.1.2/24")
	lab.Link(r.p, "10.77.2.1/24", r.c, "10.77.2.2/24")
	wd, _ := lab.Link(r.w, "10.77.3.2/24", r.d, "10.77.3.1/24")
	r.w.AddAddr(wd, "10.77.3.4/24")
	r.p.SetForwarding(true)
	r.d.Route("10.77.2.0/24", "10.77.1.2")
	r.c.Route("10.77.1.0/24", "10.77.2.1")
	r.gate = "10.77.1.1:8118"
	// The canary host must be in reach of the pool host (a request
	// around the gate) and of the daemon (one the gate let through), or
	// a clean canary proves nothing.
	ln, err := r.c.Listen("tcp", "10.77.2.2:7")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, h := range []*netlab.Host{r.p, r.d} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := h.Dial(ctx, "tcp", "10.77.2.2:7")
		cancel()
		if err != nil {
			t.Fatalf("the canary host is out of reach of %s: %v", h.Name(), err)
		}
		c.Close()
	}
	return r
}

// remoteFixture starts the sites, the canary and browsergate serve in the
// lab: serve runs in D with its gate on D's address towards the pool;
// serveArgs are more of serve's flags.
func remoteFixture(t *testing.T, r *remoteLab, serveArgs ...string) *egressFixture {
	t.Helper()
	return remoteFixtureWith(t, r, fmt.Sprintf(remoteManifest, r.devtools), serveArgs...)
}

// serveIn serves h on addr (an address of host lab) until t ends, and
// returns its base URL.
func serveIn(t *testing.T, lab *netlab.Host, addr string, h http.Handler) string {
	t.Helper()
	ln, err := lab.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// remoteFixtureWith is remoteFixture with the manifest's text.
func remoteFixtureWith(t *testing.T, r *remoteLab, manifest string, serveArgs ...string) *egressFixture {
	t.Helper()
	ln, err := r.c.Listen("tcp", "10.77.2.2:8080")
	if err != nil {
		t.Fatalf("listen on 10.77.2.2:8080: %v", err)
	}
	nc, canaryURL, stop := demosite.ServeCanary(ln)
	t.Cleanup(stop)
	f := &fixture{canary: &nc.Canary, canaryTo: canaryURL, net: nc}
	f.site = demosite.New(demosite.Options{ForbiddenURL: canaryURL + "/"})
	f.xsite = serveIn(t, r.w, "10.77.3.4:8080", demosite.NewAttackSite(f.site, &demosite.Attacks{Canary: canaryURL}))
	f.siteURL = serveIn(t, r.w, "10.77.3.2:8080", demosite.NewAttackSite(f.site, &demosite.Attacks{Canary: canaryURL, CrossSite: f.xsite}))
	f.startServe(t, manifest, nil, nil, r.inside(r.d), append([]string{"--gate-listen", r.gate}, serveArgs...)...)
	return &egressFixture{fixture: f}
}

// TestRemotePoolGoesOutOnlyThroughTheGate: a session on a pool host's
// browser works (navigate, snapshot, click through the daemon's gate), and
// every request path of the egress suite leaves the canary at zero TCP
// connections — the canary the pool host reaches straight, so that a
// request around the gate would reach it too. The pool host's DevTools
// port, its forwarder and the daemon's gate are refused to pages though
// the scope grants them.
func TestRemotePoolGoesOutOnlyThroughTheGate(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	f := remoteFixture(t, r)
	f.stillWorks(t)
	for _, tc := range []struct{ name, url, rule string }{
		{"the pool host's DevTools forwarder", r.devtools + "/json/version", "denied network 10.77.1.0/24"},
		{"the daemon's gate", "http://" + r.gate + "/", "denied network"},
		{"the daemon's address towards the sites", "http://10.77.3.1:8118/", "denied network"},
	} {
		t.Run("navigate to "+tc.name, func(t *testing.T) {
			m := f.mark()
			f.mustRefuse(t, "egress.navigate", map[string]any{"url": tc.url}, tc.rule)
			f.checkCanary(t, m)
		})
	}
	runEgressSuite(t, f)
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("the canary the pool host reaches saw: %s", f.net)
	}
}

// TestRemotePoolIsRefusedToTheDaemonsOtherManifests: the pool's networks
// and the gate are refused to the pages of every manifest the daemon
// serves, not only the remote one's: a launched browser's manifest whose
// scope grants the whole lab network (and names the pool host and the
// gate) cannot reach the pool host's DevTools forwarder or the gate,
// while the sites of that network load.
func TestRemotePoolIsRefusedToTheDaemonsOtherManifests(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	other := filepath.Join(t.TempDir(), "local.toml")
	if err := os.WriteFile(other, []byte(`[tool]
name = "local"
mode = "browser"
description = "a launched browser beside the pool"
timeout_seconds = 30

[browser]
connect = "launch"
startup_timeout_seconds = 30

[browser.scope]
allowed_domains = ["10.77.3.2", "10.77.1.1", "10.77.1.2"]
allow_private_cidrs = ["10.77.0.0/16"]
allowed_ports = ["1-65535"]

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := remoteFixture(t, r, "--manifest", other)
	if text := f.mustAllow(t, "local.navigate", map[string]any{"url": f.siteURL + "/docs"}); !strings.Contains(text, `title="Documentation"`) {
		t.Errorf("the launched browser's manifest did not load an allowed site:\n%s", text)
	}
	f.mustRefuse(t, "local.navigate", map[string]any{"url": r.devtools + "/json/list"}, "denied network 10.77.1.0/24")
	f.mustRefuse(t, "local.navigate", map[string]any{"url": "http://" + r.gate + "/"}, "denied network")
	f.stillWorks(t) // the remote manifest's session, beside it
}

// TestRemoteGateRefusesWrongCredentials: the gate lets nothing through
// for a request from the pool host without a session's credentials, with
// made-up ones, or from a browser context made on the pool browser with
// the gate as its proxy but no session's guard to answer the challenge:
// the site behind the gate sees none of them, and the daemon's log warns
// of the made-up credentials.
func TestRemoteGateRefusesWrongCredentials(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	f := remoteFixture(t, r)
	f.stillWorks(t) // a session is open: the gate has credentials to guess at
	var hits atomic.Int64
	target := serveIn(t, r.w, "10.77.3.2:8081", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<title>behind the gate</title>reached")
	})) + "/"
	for _, tc := range []struct{ name, header string }{
		{"no credentials", ""},
		{"made-up credentials", "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("session:guess")) + "\r\n"},
		{"another scheme", "Proxy-Authorization: Bearer abc\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := r.p.Dial(ctx, "tcp", r.gate)
			if err != nil {
				t.Fatalf("dial the gate from the pool host: %v", err)
			}
			defer c.Close()
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 10.77.3.2:8081\r\n%s\r\n", target, tc.header)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("read the gate's answer: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusProxyAuthRequired {
				t.Errorf("the gate answered %s, want 407", resp.Status)
			}
		})
	}
	t.Run("a browser context with the gate and no guard", func(t *testing.T) {
		if got := bareNavigate(t, r, target); strings.Contains(got, "reached") {
			t.Errorf("a page loaded through the gate without a session's credentials: %q", got)
		}
	})
	if n := hits.Load(); n != 0 {
		t.Errorf("the site behind the gate saw %d request(s) without a session's credentials", n)
	}
	f.stillWorks(t) // and the session's own requests still go through
	// The made-up credentials are a warning in the daemon's log (the
	// missing ones are a browser's ordinary first request).
	if log := f.stderr.String(); !strings.Contains(log, "the gate refused a request: unknown user name") || !strings.Contains(log, `"remote":"10.77.1.2:`) {
		t.Errorf("the daemon's log does not warn of the made-up credentials from the pool host:\n%s", log)
	}
}

// bareNavigate makes a browser context on the pool host's browser with
// the gate as its proxy, as a session's is made, but with no guard to
// answer the gate's challenge; it navigates a tab of it to url and
// returns the page's text ("" when nothing loaded).
func bareNavigate(t *testing.T, r *remoteLab, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DialContext: r.p.Dial}}
	resp, err := client.Get("http://127.0.0.1:9222/json/version")
	if err != nil {
		t.Fatalf("DevTools of the pool host: %v", err)
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	dialer := websocket.Dialer{NetDialContext: r.p.Dial}
	conn, _, err := dialer.DialContext(ctx, v.WS, nil)
	if err != nil {
		t.Fatalf("DevTools WebSocket of the pool host: %v", err)
	}
	defer conn.Close()
	var id int64
	call := func(session, method string, params map[string]any) json.RawMessage {
		id++
		msg := map[string]any{"id": id, "method": method, "params": params}
		if session != "" {
			msg["sessionId"] = session
		}
		if err := conn.WriteJSON(msg); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			var reply struct {
				ID     int64                     `json:"id"`
				Result json.RawMessage           `json:"result"`
				Error  *struct{ Message string } `json:"error"`
			}
			if err := conn.ReadJSON(&reply); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			if reply.ID != id {
				continue
			}
			if reply.Error != nil {
				t.Fatalf("%s: %s", method, reply.Error.Message)
			}
			return reply.Result
		}
	}
	var bc struct{ BrowserContextID string }
	json.Unmarshal(call("", "Target.createBrowserContext", map[string]any{"proxyServer": "http://" + r.gate, "proxyBypassList": "<-loopback>"}), &bc)
	defer call("", "Target.disposeBrowserContext", map[string]any{"browserContextId": bc.BrowserContextID})
	var tg struct{ TargetID string }
	json.Unmarshal(call("", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": bc.BrowserContextID}), &tg)
	var at struct{ SessionID string }
	json.Unmarshal(call("", "Target.attachToTarget", map[string]any{"targetId": tg.TargetID, "flatten": true}), &at)
	call(at.SessionID, "Page.navigate", map[string]any{"url": url})
	time.Sleep(2 * time.Second) // the 407 comes back at once; give a load every chance
	var ev struct {
		Result struct{ Value string }
	}
	json.Unmarshal(call(at.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.body ? document.body.innerText : ''", "returnByValue": true}), &ev)
	return ev.Result.Value
}

// TestDoctorProbesThePoolBrowsers: doctor --gate-listen runs the
// conformance probe on every endpoint of a remote manifest's pool: the
// pool host's Chromium passes it, an endpoint where no browser answers
// fails it, and doctor then fails saying so.
func TestDoctorProbesThePoolBrowsers(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	manifest := filepath.Join(t.TempDir(), "pool.toml")
	body := strings.Replace(fmt.Sprintf(remoteManifest, r.devtools), fmt.Sprintf("endpoints = [%q]", r.devtools),
		fmt.Sprintf("endpoints = [%q, %q]", r.devtools, "http://10.77.1.2:9224"), 1)
	if err := os.WriteFile(manifest, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(r.inside(r.d), binary, "doctor", "--manifest", manifest, "--policies", repoPath("policies"), "--gate-listen", r.gate)
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err == nil {
		t.Errorf("doctor passed with a pool endpoint where no browser answers:\n%s", out)
	}
	for _, want := range []string{
		r.devtools + ": passed the conformance probe",
		"http://10.77.1.2:9224: FAILED the conformance probe",
		"1 pool browser(s) failed the conformance probe",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
}

// TestRemotePageDownloadIsRefusedWithTheReason: a download a page starts
// by itself in a pool host's browser is refused, saying why (the file
// would be saved on the pool host), and nothing reaches download_dir.
func TestRemotePageDownloadIsRefusedWithTheReason(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	down := t.TempDir()
	f := remoteFixtureWith(t, r, fmt.Sprintf(remoteManifest, r.devtools)+fmt.Sprintf(`[browser.commands.download]
[browser.files]
download_dir = %q
`, down))
	mux := http.NewServeMux()
	mux.HandleFunc("/auto", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<title>auto</title><a id=l href="/file">file</a><script>document.getElementById('l').click()</script>`)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="pool.txt"`)
		fmt.Fprint(w, "bytes")
	})
	site := serveIn(t, r.w, "10.77.3.2:8082", mux)
	out := f.mustAllow(t, "egress.navigate", map[string]any{"url": site + "/auto"})
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out, `("pool.txt") refused`) || !strings.Contains(out, "not fetched back"); {
		if time.Now().After(deadline) {
			t.Fatalf("the replies do not say the page's download was refused and why:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
		out += "\n" + f.mustAllow(t, "egress.snapshot", nil)
	}
	if names, _ := os.ReadDir(down); len(names) > 0 {
		t.Errorf("download_dir holds %v", names)
	}
}

// TestRemotePoolPagesSendNothingOverUDP: WebRTC's STUN and WebTransport's
// QUIC are UDP, which no proxy carries, and this lab's pool host reaches
// the canary host straight (no firewall): a pool host's pages get no
// WebRTC (in the tab, a cross-site frame and a popup) and their
// WebTransport reaches nothing. A UDP canary on the canary host, shown to
// receive a datagram the pool host sends it, receives none from a page.
func TestRemotePoolPagesSendNothingOverUDP(t *testing.T) {
	t.Parallel()
	r := newRemoteLab(t)
	f := remoteFixture(t, r)
	udp, err := r.c.ListenPacket("udp", "10.77.2.2:3478")
	if err != nil {
		t.Fatal(err)
	}
	packets := countDatagrams(t, udp, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	probe, err := r.p.Dial(ctx, "udp", "10.77.2.2:3478")
	if err != nil {
		t.Fatal(err)
	}
	probe.Write([]byte("reach"))
	probe.Close()
	for deadline := time.Now().Add(5 * time.Second); packets.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if packets.Load() != 1 {
		t.Fatalf("the UDP canary did not receive the pool host's datagram (%d): a clean canary would prove nothing", packets.Load())
	}
	packets.Store(0)

	for _, page := range []string{"webrtc", "webrtc-frame", "webrtc-popup"} {
		f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/attack/" + page + "?stun=10.77.2.2:3478"})
		if page == "webrtc-popup" {
			f.mustAllow(t, "egress.click", map[string]any{"selector": "#go"})
		}
		text := f.mustAllow(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
		if status, _ := f.call(t, "egress.snapshot", map[string]any{"selector": "#status"}); !strings.Contains(status, "no RTCPeerConnection") {
			t.Errorf("%s: the page had WebRTC (%s)\n%s", page, strings.Join(strings.Fields(status), " "), text)
		}
	}

	wt := serveIn(t, r.w, "10.77.3.2:8082", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<title>wt</title><p id=out>trying</p><script>
const out = document.getElementById('out');
try {
  const t = new WebTransport('https://10.77.2.2:3478/attack-webtransport');
  t.ready.then(() => out.textContent = 'READY', e => out.textContent = 'ERR ' + e);
} catch (e) { out.textContent = 'ERR ' + e }
setTimeout(() => out.textContent += ' done', 2000);
</script>`)
	}))
	f.mustAllow(t, "egress.navigate", map[string]any{"url": wt + "/"})
	f.mustAllow(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 10000})
	out := f.mustAllow(t, "egress.snapshot", map[string]any{"selector": "#out"})
	if strings.Contains(out, "READY") || !strings.Contains(out, "ERR ") {
		t.Errorf("the page's WebTransport did not fail:\n%s", out)
	}
	f.settle(t, 1000)
	if n := packets.Load(); n != 0 {
		t.Errorf("LEAK: the UDP canary the pool host reaches received %d datagram(s) from its pages", n)
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw: %s", f.net)
	}
}

// TestRemotePoolPagesMakeNoDNSQuery: a pool host's browser resolves no
// name for its sessions' pages (the gate resolves, on the daemon's host):
// with the pool host's resolver pointed at a UDP canary on the canary host
// (shown to receive the pool host's own query), names a page uses — in
// resources, fetch, WebSockets, dns-prefetch and preconnect hints, a frame
// and a navigation, both out of the scope and in it — bring no query to it.
func TestRemotePoolPagesMakeNoDNSQuery(t *testing.T) {
	t.Parallel()
	r := newLabHosts(t)
	udp, err := r.c.ListenPacket("udp", "10.77.2.2:53")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	queries := countDatagrams(t, udp, func(q []byte) { // every query, also the browser's own
		mu.Lock()
		asked = append(asked, dnsQueryName(q))
		mu.Unlock()
	})
	r.p.UseResolver(t, "10.77.2.2")
	r.p.Chromium(t, 9222)
	r.p.Forward(t, "10.77.1.2:9223", "127.0.0.1:9222")
	r.devtools = "http://10.77.1.2:9223"
	_ = r.p.Command(context.Background(), "getent", "hosts", "control.dns.test").Run()
	for deadline := time.Now().Add(5 * time.Second); queries.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if queries.Load() == 0 {
		t.Fatal("the DNS canary received no query from the pool host's own lookup: a clean canary would prove nothing")
	}
	queries.Store(0)

	manifest := strings.Replace(fmt.Sprintf(remoteManifest, r.devtools), `allowed_domains = [`, `allowed_domains = ["allowed.dns.test", `, 1)
	f := remoteFixtureWith(t, r, manifest)
	names := []string{"allowed.dns.test", "refused.dns.test"}
	var tags strings.Builder
	for i, n := range names {
		fmt.Fprintf(&tags, `<img src="http://img%[1]d.%[2]s/x.png"><script src="http://script%[1]d.%[2]s/x.js"></script>
<link rel=dns-prefetch href="//prefetch%[1]d.%[2]s"><link rel=preconnect href="http://preconnect%[1]d.%[2]s">
<iframe src="http://frame%[1]d.%[2]s/"></iframe>
<script>fetch("http://fetch%[1]d.%[2]s/").catch(() => {}); try { new WebSocket("ws://ws%[1]d.%[2]s/") } catch (e) {}</script>
`, i, n)
	}
	namesPage := serveIn(t, r.w, "10.77.3.2:8083", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintf(w, `<title>names</title>%s<p id=out>loaded</p><script>setTimeout(() => location = "http://go.%s/", 1000)</script>`, tags.String(), names[0])
	}))
	f.call(t, "egress.navigate", map[string]any{"url": namesPage + "/"})
	f.call(t, "egress.navigate", map[string]any{"url": "http://allowed.dns.test/"})
	f.settle(t, 2000)
	// The browser's own lookups (its update and sign-in services, asked
	// for even with --disable-background-networking) are the pool host's
	// firewall's to stop; no name of a page may be asked for.
	mu.Lock()
	for _, name := range asked {
		if strings.HasSuffix(name, ".dns.test") && name != "control.dns.test" {
			t.Errorf("LEAK: the pool host's resolver (the DNS canary) was asked for a page's name: %s", name)
		}
	}
	t.Logf("the pool host's resolver was asked for: %q", asked)
	mu.Unlock()
	if !f.net.Clean() {
		t.Errorf("the canary saw: %s", f.net)
	}
}

// dnsQueryName is the name a DNS query asks for ("?" if it cannot be read).
func dnsQueryName(q []byte) string {
	if len(q) < 13 {
		return "?"
	}
	var labels []string
	for i := 12; i < len(q) && q[i] != 0; {
		n := int(q[i])
		if i+1+n > len(q) {
			return "?"
		}
		labels = append(labels, string(q[i+1:i+1+n]))
		i += 1 + n
	}
	return strings.Join(labels, ".")
}

// TestPoolHostRecipeLetsItReachOnlyTheGate applies docs/remote.md's
// nftables ruleset for a pool host, as written there (its addresses
// swapped for the lab's), to the lab's pool host: a session still works
// through the gate, while the pool host no longer reaches the canary host
// over TCP or UDP, and the canary host (which reached the pool host's
// DevTools forwarder before) no longer does.
func TestPoolHostRecipeLetsItReachOnlyTheGate(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(repoPath("docs/remote.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n```\ntable inet pool {")
	ruleset, _, ok2 := strings.Cut(rest, "\n```")
	if !ok || !ok2 {
		t.Fatal("docs/remote.md has no ```-fenced `table inet pool` ruleset")
	}
	ruleset = "table inet pool {" + strings.ReplaceAll(ruleset, "10.0.5.1", "10.77.1.1")

	r := newRemoteLab(t)
	udp, err := r.c.ListenPacket("udp", "10.77.2.2:3478")
	if err != nil {
		t.Fatal(err)
	}
	datagrams := countDatagrams(t, udp, nil)
	reachable := func(from *netlab.Host, addr string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := from.Dial(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	sendUDP := func() {
		c, err := r.p.Dial(context.Background(), "udp", "10.77.2.2:3478")
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("out"))
		c.Close()
	}
	// Before the ruleset each path is open, or its closing would prove
	// nothing.
	if !reachable(r.p, "10.77.2.2:7") || !reachable(r.c, "10.77.1.2:9223") {
		t.Fatal("before the ruleset the pool host and the canary host do not reach each other")
	}
	sendUDP()
	for deadline := time.Now().Add(5 * time.Second); datagrams.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if datagrams.Load() != 1 {
		t.Fatalf("before the ruleset the UDP canary received %d datagrams from the pool host, want 1", datagrams.Load())
	}

	r.p.Nft(t, ruleset)
	f := remoteFixture(t, r)
	f.stillWorks(t)
	if reachable(r.p, "10.77.2.2:7") {
		t.Error("with the ruleset the pool host still reaches the canary host over TCP")
	}
	if reachable(r.c, "10.77.1.2:9223") {
		t.Error("with the ruleset the canary host still reaches the pool host's DevTools forwarder")
	}
	sendUDP()
	f.settle(t, 500)
	if n := datagrams.Load(); n != 1 {
		t.Errorf("with the ruleset the pool host's datagram still reached the UDP canary (%d in all)", n)
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw: %s", f.net)
	}
}
