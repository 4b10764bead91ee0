package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/internal/testkit"
)

// Browsing-context groups in the user's own browser: a session governs whole
// groups, never one tab of a group. Each test runs a user's Chromium started
// as the README says (Preload pages off, so no speculative preconnect), a
// live session in its default context, and the fixture's canary on 127.0.0.2
// (outside the scope), which must see no TCP connection at all.

// usersEndpoint starts the user's Chromium with preloading off
// (startUsersChromium) and returns its DevTools endpoint.
func usersEndpoint(t *testing.T) string {
	t.Helper()
	port, _ := startUsersChromium(t)
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// usersBrowser is a chromedp context on the user's browser at endpoint,
// driven as the user would (over CDP, not through browsergate).
func usersBrowser(t *testing.T, endpoint string) context.Context {
	t.Helper()
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	t.Cleanup(cancelAlloc)
	user, cancelUser := chromedp.NewContext(alloc)
	t.Cleanup(cancelUser)
	return user
}

// waitListed waits until list_tabs shows a user's tab whose URL holds part.
func (f *fixture) waitListed(t *testing.T, part string) string {
	t.Helper()
	testkit.Eventually(t, func() string {
		if text, _ := f.call(t, "e2e.list_tabs", nil); !strings.Contains(text, part) {
			return "list_tabs does not show " + part + " yet:\n" + text
		}
		return ""
	})
	return f.tabID(t, "e2e", "user", part)
}

// settleAndCheckCanary gives a navigation the page started a moment to
// reach the network, then fails the test if the canary saw anything: a
// request, an upgrade or a bare TCP connection.
func (f *fixture) settleAndCheckCanary(t *testing.T, what string) {
	t.Helper()
	f.mustAllow(t, "e2e.list_tabs", nil)
	time.Sleep(time.Second)
	if !f.net.Clean() {
		t.Errorf("%s: the canary saw %s", what, f.net)
	}
}

// TestAdoptionRefusedWhenAnUnguardedTabCanScriptIt: a user's tab outside the
// scope opens an in-scope popup; the popup's script sets
// window.opener.location to the canary on the adoption's reload. The opener
// is the user's, never attached, so nothing would stop it: the adoption is
// refused at stage scope, naming the group, and the popup is never reloaded.
func TestAdoptionRefusedWhenAnUnguardedTabCanScriptIt(t *testing.T) {
	t.Parallel()
	endpoint := usersEndpoint(t)
	f := start(t, "live", endpoint)
	site, _ := serveLogged(t, map[string]string{
		// Only on a reload: the user's own first load is the user's.
		"/popup": fmt.Sprintf(`<title>popup</title><script>
if (performance.getEntriesByType('navigation')[0].type === 'reload' && window.opener) window.opener.location = %q;
</script>`, f.canaryTo+"/opener-on-reload"),
	})
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{
		"/opener": fmt.Sprintf(`<title>elsewhere</title><button id=o onclick="window.open('%s/popup', 'pp')">open</button>`, site),
	})
	user := usersBrowser(t, endpoint)
	if err := chromedp.Do(user, chromedp.Navigate(elsewhere+"/opener"), chromedp.Click("#o")); err != nil {
		t.Fatal(err)
	}
	popup := f.waitListed(t, "/popup")
	out, refused := f.call(t, "e2e.switch_tab", map[string]any{"tab": popup})
	t.Logf("switch_tab %s:\n%s", popup, out)
	for _, want := range []string{"DENIED at scope", "browsing-context group", "tab " + popup} {
		if !refused || !strings.Contains(out, want) {
			t.Errorf("switch_tab was not refused naming %q", want)
		}
	}
	if strings.Contains(out, "127.0.0.4") {
		t.Errorf("the refusal names the user's tab outside the scope:\n%s", out)
	}
	f.settleAndCheckCanary(t, "after the refused adoption")
	// The user's tabs are as they were: the popup was not reloaded, and
	// the session still acts in its own tab.
	if tabs, _ := f.tabs(t, "e2e"); len(tabs) == 0 || !tabs[0].Active || tabs[0].Owner != "session" {
		t.Errorf("the session is not on its own tab after the refusal: %+v", tabs)
	}
}

// TestAdoptionTakesTheWholeGroup: a user's in-scope tab opened an in-scope
// popup (with an opener) and a page outside the scope (noopener: a group
// of its own). Adopting the popup takes the opener with it; the popup's
// handlers then move the opener to the canary, by its handle and by its
// window name, and nothing reaches the canary; moving it within the scope
// during a click judged to lead nowhere is refused by the acting guard
// (stage destination), and the site never sees the request. The noopener
// page stays the user's, unnamed.
func TestAdoptionTakesTheWholeGroup(t *testing.T) {
	t.Parallel()
	endpoint := usersEndpoint(t)
	f := start(t, "live", endpoint)
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/x": `<title>elsewhere</title>x`})
	site, log := serveLogged(t, map[string]string{
		"/opener": fmt.Sprintf(`<title>opener</title><script>window.name = 'op'</script>
<button id=o1 onclick="window.open('/member', 'm')">o1</button><button id=o2 onclick="window.open('%s/x', 'x', 'noopener')">o2</button>`, elsewhere),
		"/member": fmt.Sprintf(`<title>member</title>
<button id=byhandle onclick="opener.location = '%[1]s/by-handle'">by handle</button>
<button id=byname onclick="window.open('%[1]s/by-name', 'op')">by name</button>
<button id=inscope onclick="opener.location = '/unjudged-by-handle'">in scope</button>
<button id=inscopename onclick="window.open('/unjudged-by-name', 'op')">in scope by name</button>`, f.canaryTo),
	})
	user := usersBrowser(t, endpoint)
	if err := chromedp.Do(user, chromedp.Navigate(site+"/opener"), chromedp.Click("#o1"), chromedp.Click("#o2")); err != nil {
		t.Fatal(err)
	}
	member := f.waitListed(t, "/member")
	opener := f.tabID(t, "e2e", "user", "/opener")
	out := f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": member})
	t.Logf("switch_tab %s:\n%s", member, out)
	if !strings.Contains(out, opener+", of its browsing-context group") {
		t.Errorf("switch_tab does not say it took the opener (%s) with the popup:\n%s", opener, out)
	}
	text, _ := f.call(t, "e2e.list_tabs", nil)
	if strings.Contains(text, "127.0.0.4") {
		t.Errorf("list_tabs names the noopener page outside the scope:\n%s", text)
	}
	f.call(t, "e2e.click", map[string]any{"selector": "#byhandle"})
	f.call(t, "e2e.click", map[string]any{"selector": "#byname"})
	f.settleAndCheckCanary(t, "the popup moving its opener")
	// By name first (a refused navigation may clear the opener's name).
	// The refusal resets the popup, which may cut its opener: the second
	// click is held to the site's log only.
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#inscopename"}, "DENIED at destination")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/member"})
	f.call(t, "e2e.click", map[string]any{"selector": "#inscope"})
	for _, path := range []string{"/unjudged-by-handle", "/unjudged-by-name"} {
		if n := log.count(path); n != 0 {
			t.Errorf("the site saw %s %d time(s): the acting guard let the popup move its opener", path, n)
		}
	}
	infos, err := chromedp.Targets(user)
	if err != nil {
		t.Fatal(err)
	}
	var kept bool
	for _, ti := range infos {
		kept = kept || strings.Contains(ti.URL, "127.0.0.4")
	}
	if !kept {
		t.Errorf("the user's noopener page outside the scope was closed")
	}
}

// TestSecretTypedOnlyWhereNoUnguardedPageReachesIt: a secret is typed only
// into a page whose group and origin are wholly the session's. With a
// user's tab of the same origin open beside the adopted one (it shares
// the page's storage, and is not guarded), type_text with the secret is
// refused at stage secrets naming that tab; once the user closes it, the
// secret is typed.
func TestSecretTypedOnlyWhereNoUnguardedPageReachesIt(t *testing.T) {
	t.Parallel()
	endpoint := usersEndpoint(t)
	f := startWith(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))+`[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
`)
	site, _ := serveLogged(t, map[string]string{
		"/form":  `<title>form</title><input type=password id=pw aria-label=Password>`,
		"/other": `<title>other</title>the user's other page of the site`,
	})
	usersTab(t, endpoint, site+"/form")
	other, cancelOther := chromedp.NewContext(usersBrowser(t, endpoint))
	defer cancelOther()
	if err := chromedp.Do(other, chromedp.Navigate(site+"/other")); err != nil {
		t.Fatal(err)
	}
	form := f.waitListed(t, "/form")
	otherID := f.tabID(t, "e2e", "user", "/other")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": form})
	out := f.mustRefuse(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"},
		"DENIED at secrets", "tab "+otherID, "sharing its storage")
	t.Logf("type_text beside the user's tab of the origin:\n%s", out)
	cancelOther() // the user closes it
	testkit.Eventually(t, func() string {
		if text, _ := f.call(t, "e2e.list_tabs", nil); strings.Contains(text, "/other") {
			return "the user's other tab is still open"
		}
		return ""
	})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
}

// TestAdoptionReloadIsNotSeenByTheUsersServiceWorker: a service worker the
// user's own browsing registered on the in-scope origin answers every
// navigation with a document of its own and tells a server of its own. The
// adoption's reload is fetched by the guard, not by the worker: the server
// hears nothing and the tab shows the site's document. (A reload by the user
// first shows that the worker does answer navigations.)
func TestAdoptionReloadIsNotSeenByTheUsersServiceWorker(t *testing.T) {
	t.Parallel()
	endpoint := usersEndpoint(t)
	f := start(t, "live", endpoint)
	var told atomic.Int64
	spy, stopSpy, err := serveOn("127.0.0.5:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		told.Add(1)
		fmt.Fprint(w, "ok")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSpy)
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sw.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => {
  if (e.request.mode !== 'navigate') return;
  fetch(%q + '?u=' + encodeURIComponent(e.request.url), {mode: 'no-cors'}).catch(() => {});
  e.respondWith(new Response('<title>forged</title>forged by the worker', {headers: {'Content-Type': 'text/html'}}));
});`, spy+"/fetch-event")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>site</title><p id=s>the site's own document</p><script>navigator.serviceWorker.register('/sw.js')</script>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	user := usersTab(t, endpoint, site+"/page")
	testkit.Eventually(t, func() string {
		ok, err := chromedp.Run(user, chromedp.Evaluate[bool](`!!navigator.serviceWorker.controller`))
		if err != nil || !ok {
			return fmt.Sprintf("the user's service worker does not control the page yet (%v)", err)
		}
		return ""
	})
	if err := chromedp.Do(user, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(user, chromedp.Title())
	if err != nil || title != "forged" {
		t.Fatalf("the worker does not answer the user's own reload (title %q, %v): the test shows nothing", title, err)
	}
	testkit.Eventually(t, func() string {
		if told.Load() == 0 {
			return "the worker has not told its server of the user's reload"
		}
		return ""
	})
	before := told.Load()
	tab := f.waitListed(t, "/page")
	out := f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": tab})
	t.Logf("switch_tab %s:\n%s", tab, out)
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	if strings.Contains(snap, "forged") || !strings.Contains(snap, "the site's own document") {
		t.Errorf("the adopted tab shows the worker's document, not the site's:\n%s", snap)
	}
	time.Sleep(time.Second)
	if n := told.Load() - before; n != 0 {
		t.Errorf("the user's service worker saw %d navigation(s) of the adopted tab", n)
	}
}
