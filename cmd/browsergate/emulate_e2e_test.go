package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// emulate end to end: what a page sees of the device it runs on, on real
// pages through the real binary. emulationPage (surface_emulate_e2e_test.go)
// reports it.

// emulateManifest is the e2e manifest with emulate declared, reload, and
// a [browser.permissions] body (none when grants is "").
func emulateManifest(connect, browserKeys, grants string) string {
	return permissionsManifest(connect, browserKeys, grants) + "[browser.commands.emulate]\n[browser.commands.reload]\n[browser.commands.extract_html]\n"
}

// emulateSite serves emulationPage, a page that opens it in a popup, a
// page that keeps its main thread busy, with a link in scope and one to
// the canary (outside it), and a page that sends requests to the canary.
// canary is read as the pages are served: the fixture's canary, known
// once the fixture has started on a manifest that names the site.
func emulateSite(t *testing.T, canary *atomic.Value) string {
	t.Helper()
	mux := http.NewServeMux()
	emulationPages(mux)
	mux.HandleFunc("/opener", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>opener</title><a id=pop href="/emulation?popup" target=_blank>Open the popup</a>`)
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>busy</title>
<a id=out href=%q>Leave</a> <a id=in href="/emulation?from-busy">Stay</a>
<button id=count onclick="document.getElementById('n').textContent = 'clicked'">Count</button><p id=n>not clicked</p>
<script>setInterval(() => { const end = Date.now() + 40; while (Date.now() < end) {} }, 50);</script>`, canary.Load().(string)+"/busy-leak")
	})
	mux.HandleFunc("/leak", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>leak</title>
<button id=go onclick="fetch(%[1]q).catch(() => {}); new Image().src = %[1]q + '?img'; navigator.sendBeacon(%[1]q + '?beacon');
document.getElementById('done').textContent = 'sent'">Send</button><p id=done>not sent</p>`, canary.Load().(string)+"/offline-leak")
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>ws</title>
<button id=open onclick="const out = document.getElementById('ws'); try { const s = new WebSocket('%s'); s.onopen = () => { out.textContent = 'socket opened'; out.className = 'done' }; s.onerror = () => { out.textContent = 'socket failed'; out.className = 'done' } } catch (e) { out.textContent = 'socket failed ' + e; out.className = 'done' }">Open</button><p id=ws>not opened</p>`,
			"ws"+strings.TrimPrefix(canary.Load().(string), "http")+"/ws-leak")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// startEmulating serves two emulateSites (site, and other on another
// port: another origin) and starts a session on emulateManifest, its
// [browser.permissions] body grants(site) ("" for none).
func startEmulating(t *testing.T, connect, browserKeys string, grants func(site string) string) (f *fixture, site, other string) {
	t.Helper()
	var canary atomic.Value
	site, other = emulateSite(t, &canary), emulateSite(t, &canary)
	body := ""
	if grants != nil {
		body = grants(site)
	}
	f = startWith(t, emulateManifest(connect, browserKeys, body))
	canary.Store(f.canaryTo)
	return f, site, other
}

// grantGeolocation grants geolocation to site.
func grantGeolocation(site string) string { return fmt.Sprintf("geolocation = [%q]", site) }

// mustAllowSaying is mustAllow, and checks the reply says each of wants.
func (f *fixture) mustAllowSaying(t *testing.T, tool string, args map[string]any, wants ...string) string {
	t.Helper()
	out := f.mustAllow(t, tool, args)
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s %v: the reply does not say %q:\n%s", tool, args, w, out)
		}
	}
	return out
}

// emulateRecord is the args of the session's emulate call that gave
// device, from its evidence (which ends the session).
func emulateRecord(t *testing.T, f *fixture, device string) map[string]any {
	t.Helper()
	for _, e := range endedRecords(t, f) {
		if e.Command == "emulate" && e.Args["device"] == device {
			return e.Args
		}
	}
	t.Fatalf("the evidence has no emulate record with device %s", device)
	return nil
}

// TestEmulateReachesEveryTabOfTheSession: a device preset, a locale, a
// timezone and a position show on the page (innerWidth, the user agent,
// Intl's timezone, navigator.language, touch, the position), in the tab
// the call was made in, in a tab opened afterwards (new_tab) and in a
// popup a page opens; reset gives every page the browser's own back. The
// record of the call carries what was emulated, in its args.
func TestEmulateReachesEveryTabOfTheSession(t *testing.T) {
	t.Parallel()
	f, site, _ := startEmulating(t, "launch", "", grantGeolocation)
	page := site + "/emulation"
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": page})
	before := measure(t, f, "e2e")
	if before.geo != "error3" && before.geo != "error2" {
		t.Errorf("before emulate the granted page got position %s, want none to give (error 2 or 3)", before.geo)
	}
	out := f.mustAllow(t, "e2e.emulate", map[string]any{"device": "iphone-15", "locale": "fr-FR", "timezone": "America/New_York", "geolocation": "48.8566,2.3522"})
	for _, want := range []string{"device iphone-15", "locale fr-FR", "timezone America/New_York", "geolocation 48.8566,2.3522", "touch"} {
		if !strings.Contains(out, want) {
			t.Errorf("emulate's reply does not say %q:\n%s", want, out)
		}
	}
	want := measured{width: "393", tz: "America/New_York", lang: "fr-FR", coarse: "true", touch: "5", geo: "48.857,2.352", fetch: "ok"}
	check := func(where string, got measured) {
		t.Helper()
		if !strings.Contains(got.ua, "iPhone_OS_17_0") {
			t.Errorf("%s: user agent %s, want the iPhone 15 preset's", where, got.ua)
		}
		got.ua = ""
		if got != want {
			t.Errorf("%s: the page saw %+v, want %+v", where, got, want)
		}
	}
	f.mustAllow(t, "e2e.reload", nil)
	check("the tab emulate ran in", measure(t, f, "e2e"))
	f.mustAllow(t, "e2e.new_tab", map[string]any{"url": page + "?new-tab"})
	check("a tab opened after emulate", measure(t, f, "e2e"))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/opener"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#pop"})
	var popup string
	testkit.Eventually(t, func() string {
		if text, _ := f.call(t, "e2e.list_tabs", nil); !strings.Contains(text, "?popup") {
			return "list_tabs does not show the popup yet:\n" + text
		}
		return ""
	})
	popup = f.tabID(t, "e2e", "session", "?popup")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": popup})
	check("a popup a page opened", measure(t, f, "e2e"))

	f.mustAllow(t, "e2e.emulate", map[string]any{"reset": true})
	f.mustAllow(t, "e2e.reload", nil)
	got := measure(t, f, "e2e")
	if got.width != before.width || got.ua != before.ua || got.tz != before.tz || got.lang != before.lang || got.touch != before.touch {
		t.Errorf("after reset the popup saw %+v, want what the first tab saw before emulate, %+v", got, before)
	}
	args := emulateRecord(t, f, "iphone-15")
	if args["locale"] != "fr-FR" || args["timezone"] != "America/New_York" || args["geolocation"] != "48.8566,2.3522" {
		t.Errorf("the emulate record's args are %v, want what was emulated", args)
	}
}

// TestEmulateGeolocationOnlyWhereThePermissionGrantsIt: [browser.permissions]
// grants geolocation to one origin. On a page of another origin (the same
// host, another port) a position is refused, naming the rule, and the page
// still gets none; on the granted origin's page it is emulated, and the
// page reads it.
func TestEmulateGeolocationOnlyWhereThePermissionGrantsIt(t *testing.T) {
	t.Parallel()
	f, granted, other := startEmulating(t, "launch", "", grantGeolocation)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": other + "/emulation"})
	f.mustRefuse(t, "e2e.emulate", map[string]any{"geolocation": "35.6762,139.6503"},
		`rule permissions "geolocation"`, "does not grant geolocation", other)
	f.mustAllow(t, "e2e.reload", nil)
	if got := measure(t, f, "e2e"); got.geo != "error1" {
		t.Errorf("after the refusal the other origin's page got position %s, want a denial (error1)", got.geo)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": granted + "/emulation"})
	f.mustAllowSaying(t, "e2e.emulate", map[string]any{"geolocation": "35.6762,139.6503"}, "geolocation 35.6762,139.6503")
	f.mustAllow(t, "e2e.reload", nil)
	if got := measure(t, f, "e2e"); got.geo != "35.676,139.650" {
		t.Errorf("the granted origin's page got position %s, want the emulated 35.676,139.650", got.geo)
	}
}

// TestEmulateRefusesBadInput: each malformed or unknown value is refused
// with an error that names the argument and what was wrong, and changes
// nothing: a timezone Chromium does not know, a user agent with a line
// break (it would go into a request header), a viewport out of bounds, a
// CPU rate above the bound, a position off the globe, a call with
// nothing to emulate, and the peers' width and height (emulate takes a
// viewport).
func TestEmulateRefusesBadInput(t *testing.T) {
	t.Parallel()
	f, site, _ := startEmulating(t, "launch", "", nil)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation"})
	before := measure(t, f, "e2e")
	for _, tc := range []struct {
		args  map[string]any
		wants []string
	}{
		{map[string]any{"timezone": "Mars/Olympus_Mons", "locale": "de-DE"}, []string{`timezone "Mars/Olympus_Mons"`, "IANA timezone", "nothing was changed"}},
		{map[string]any{"user_agent": "Mozilla/5.0\r\nX-Injected: 1"}, []string{"user_agent", "pattern"}},
		{map[string]any{"viewport": "50x9999"}, []string{`viewport "50x9999"`, "100 to 4096"}},
		{map[string]any{"cpu": 21}, []string{"cpu"}},
		{map[string]any{"geolocation": "91,0"}, []string{"latitude must be -90 to 90"}},
		{map[string]any{}, []string{"give at least one of"}},
		{map[string]any{"width": 800, "height": 600}, []string{"viewport", "<width>x<height>"}},
	} {
		f.mustRefuse(t, "e2e.emulate", tc.args, tc.wants...)
	}
	f.mustAllow(t, "e2e.reload", nil)
	if got := measure(t, f, "e2e"); got != before {
		t.Errorf("after the refusals the page saw %+v, want what it saw before, %+v", got, before)
	}
}

// TestEmulateOfflineSendsNothingPastTheGate: with the network offline the
// page's own fetch fails, and a page that sends requests to the canary
// (fetch, an image, a beacon), outside the scope on a forbidden loopback
// address, reaches nothing: the gate judges each request before the
// browser's network conditions apply, and the canary sees no connection.
// Slow 3G and none then let the page's fetch through again (the time it
// took is reported, never judged).
func TestEmulateOfflineSendsNothingPastTheGate(t *testing.T) {
	t.Parallel()
	f, site, _ := startEmulating(t, "launch", "", nil)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation"})
	if got := measure(t, f, "e2e"); got.fetch != "ok" {
		t.Fatalf("before emulate the page's fetch: %s, want ok", got.fetch)
	}
	f.mustAllowSaying(t, "e2e.emulate", map[string]any{"network": "offline"}, "network offline")
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#again"})
	if got := measure(t, f, "e2e"); got.fetch != "failed" {
		t.Errorf("offline, the page's fetch: %s, want failed", got.fetch)
	}
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": site + "/leak"}) // offline: the page cannot load
	f.mustAllow(t, "e2e.emulate", map[string]any{"network": "none"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/leak"})
	f.mustAllow(t, "e2e.emulate", map[string]any{"network": "offline"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#go"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "sent", "timeout_ms": 10000})
	f.settleAndCheckCanary(t, "offline")
	f.mustAllowSaying(t, "e2e.emulate", map[string]any{"network": "slow-3g"}, "network slow-3g")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation"})
	if got := measure(t, f, "e2e"); got.fetch != "ok" {
		t.Errorf("slow 3G, the page's fetch: %s, want ok", got.fetch)
	}
	f.mustAllow(t, "e2e.emulate", map[string]any{"network": "none"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#again"})
	if got := measure(t, f, "e2e"); got.fetch != "ok" {
		t.Errorf("after network none, the page's fetch: %s, want ok", got.fetch)
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw %s", f.net)
	}
}

// TestEmulateCPUThrottleStillDecides: at the strongest CPU throttle
// allowed, on a page whose script keeps the main thread busy, governed
// calls are still observed, decided and answered within the call's bound:
// a click on a link out of the scope is refused (the gate read where it
// leads) and the canary sees nothing; a click on a button and on a link in
// the scope do what they do; a tab opened under the throttle is governed
// the same way.
func TestEmulateCPUThrottleStillDecides(t *testing.T) {
	t.Parallel()
	f, site, _ := startEmulating(t, "launch", "", nil)
	f.mustAllowSaying(t, "e2e.emulate", map[string]any{"cpu": toolclad.MaxCPUThrottle}, fmt.Sprintf("cpu %dx slower", toolclad.MaxCPUThrottle))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/busy"})
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#out"}, "busy-leak")
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#count"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "clicked", "timeout_ms": 20000})
	f.mustAllowSaying(t, "e2e.click", map[string]any{"selector": "#in"}, `title="emulation"`)
	// A tab opened under the throttle is prepared (held, intercepted,
	// given the throttle) before it runs, and governed the same way.
	f.mustAllow(t, "e2e.new_tab", map[string]any{"url": site + "/busy"})
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#out"}, "busy-leak")
	f.settleAndCheckCanary(t, "a click under CPU throttling")
}

// TestEmulateLiveOnlyTheSessionsTabs: in the user's own browser (live,
// the user's context) emulate changes the session's tab and never the
// user's: the user's tab on the same page keeps its width and timezone,
// and once the session adopts it (switch_tab) emulate refuses to run
// there, saying why, nor does its network go offline with the session's.
// Network throttling keeps the WebSocket rules that
// stand in for the egress proxy there: the throttle is a rule after them,
// so a WebSocket to the canary (outside the scope) still connects to
// nothing.
func TestEmulateLiveOnlyTheSessionsTabs(t *testing.T) {
	t.Parallel()
	endpoint := usersEndpoint(t)
	f, site, _ := startEmulating(t, "live", fmt.Sprintf("live_endpoint = %q", endpoint), nil)
	user := usersBrowser(t, endpoint)
	userSees := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(user, 30*time.Second)
		defer cancel()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/emulation-data?' + Math.random(), {cache: 'no-store'}).then(() => 'fetch ok', () => 'fetch failed')
  .then(f => innerWidth + ' ' + Intl.DateTimeFormat().resolvedOptions().timeZone + ' ' + f)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("the user's tab: %v", err)
		}
		return got
	}
	ctx, cancel := context.WithTimeout(user, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/emulation?user")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	usersBefore := userSees()

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation"})
	// A timezone, a locale and a CPU rate are a renderer process's, which
	// the user's tab of the same site may share: refused here.
	for _, name := range []string{"timezone", "locale", "cpu"} {
		args := map[string]any{"viewport": "500x400", "timezone": "Pacific/Auckland", "locale": "fr-FR", "cpu": 4}
		for _, other := range []string{"timezone", "locale", "cpu"} {
			if other != name {
				delete(args, other)
			}
		}
		f.mustRefuse(t, "e2e.emulate", args, name+" is refused in the user's browser context", "renderer process")
	}
	f.mustAllow(t, "e2e.emulate", map[string]any{"viewport": "500x400", "network": "fast-4g"})
	f.mustAllow(t, "e2e.reload", nil)
	if got := measure(t, f, "e2e"); got.width != "500" || got.fetch != "ok" {
		t.Errorf("the session's tab saw %+v, want width 500 and its fetch through", got)
	}
	if got := userSees(); got != usersBefore {
		t.Errorf("the user's tab sees %q after the session's emulate, want %q as before", got, usersBefore)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ws"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#open"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"selector": "#ws.done", "timeout_ms": 10000})
	f.mustAllowSaying(t, "e2e.extract_html", map[string]any{"selector": "#ws"}, "socket failed")
	f.settleAndCheckCanary(t, "a WebSocket to the canary while the network is throttled")

	tab := f.waitListed(t, "?user")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": tab})
	f.mustRefuse(t, "e2e.emulate", map[string]any{"viewport": "500x400"}, "the user's own", "only to the session's own tabs")
	if got := userSees(); got != usersBefore {
		t.Errorf("the user's tab sees %q after the refusal, want %q as before", got, usersBefore)
	}
	// Back on the session's tab, the network goes offline: the user's tab,
	// still the session's, keeps the user's network.
	first := f.tabID(t, "e2e", "session", "/ws")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": first})
	f.mustAllow(t, "e2e.emulate", map[string]any{"network": "offline"})
	if got := userSees(); got != usersBefore {
		t.Errorf("the user's adopted tab sees %q with the session offline, want %q as before", got, usersBefore)
	}
}

// TestEmulationOutlivesTheSessionsLostTab: the session's first tab is
// closed from outside (as when it crashes; here by the browser's owner,
// in live mode with a browser context of the session's own); the next
// call opens the session a new context and tab, which keeps the
// session's emulation (emulate says "the session's tabs").
func TestEmulationOutlivesTheSessionsLostTab(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f, site, _ := startEmulating(t, "live", fmt.Sprintf("live_endpoint = %q\ncontext = \"isolated\"", endpoint), nil)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation"})
	f.mustAllow(t, "e2e.emulate", map[string]any{"viewport": "500x400"})
	f.mustAllow(t, "e2e.reload", nil)
	if got := measure(t, f, "e2e"); got.width != "500" {
		t.Fatalf("the session's tab saw width %s, want 500", got.width)
	}
	ctx, cancel := context.WithTimeout(usersBrowser(t, endpoint), 30*time.Second)
	defer cancel()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	for _, i := range infos {
		if i.Type == "page" && strings.HasSuffix(i.URL, "/emulation") {
			if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: i.TargetID}); err != nil {
				t.Fatal(err)
			}
			closed++
		}
	}
	if closed != 1 {
		t.Fatalf("closed %d of the session's tabs, want 1: %v", closed, infos)
	}
	time.Sleep(500 * time.Millisecond) // the session learns its tab is gone
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/emulation?again"})
	if got := measure(t, f, "e2e"); got.width != "500" {
		t.Errorf("the tab the session got after its first was lost saw width %s, want the session's 500", got.width)
	}
}
