package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/browsergate/browsergate/internal/testkit"
)

// A page's synthesized Control-click on a link the early hold in the page
// (no_new_tab.js) cannot see: the browser makes the tab, and the target
// guard closes it before it runs (guard_newtabs.go).

// ctrlClick is a script that dispatches a Control-click on the element
// the expression el names, in the window w.
func ctrlClick(el, w string) string {
	return "(" + el + ").dispatchEvent(new (" + w + ").MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: " + w + "}))"
}

// unseenCtrlClicks serves pages, on 127.0.0.1 and (the last) on
// 127.0.0.3, whose button "b" dispatches, when clicked, a Control-click
// on a link that leads to away where no listener of browsergate's early
// hold sees it: a link never attached to the document; one in a closed
// shadow root (the event does not leave it); a detached link to a blob:
// page the script made, which would fetch away itself; a link inside a
// frame the script made and wrote (its about:blank document never ran
// browsergate's page scripts), the button in that frame; and a detached
// link in a frame of another site, in its own process. The blob: page
// fetches /from-blob of its own site and of away. It returns the pages'
// URLs, by name, and the log of the 127.0.0.1 site.
func unseenCtrlClicks(t *testing.T, away string) (map[string]string, *siteLog) {
	t.Helper()
	onB := func(handler string) string {
		return "<title>page</title><script>function go() { " + handler + " }</script><button id=b onclick=\"go()\">b</button>"
	}
	detached := "const a = document.createElement('a'); a.href = '" + away + "/detached'; " + ctrlClick("a", "window")
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{"/detached": onB(detached)})
	site, log := serveLogged(t, map[string]string{
		"/detached": onB(detached),
		"/shadow": `<title>page</title><div id=host></div><script>
window.inner = document.getElementById('host').attachShadow({mode: 'closed'});
inner.innerHTML = '<a href="` + away + `/shadow">x</a>';
</script>` + onB(ctrlClick("inner.querySelector('a')", "window")),
		"/blob": onB("const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob(['<script>fetch(\\'/from-blob\\'); fetch(\\'" + away + "/from-blob\\')</' + 'script>'], {type: 'text/html'})); " + ctrlClick("a", "window")),
		"/blank-frame": `<title>page</title><iframe id=f></iframe><script>
const d = document.getElementById('f').contentDocument;
d.body.innerHTML = '<a id=l href="` + away + `/blank-frame">x</a><button id=b>b</button>';
d.getElementById('b').onclick = () => d.getElementById('l').dispatchEvent(new d.defaultView.MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: d.defaultView}));
</script>`,
		"/other-site-frame": `<title>page</title><iframe src="` + other + `/detached"></iframe>`,
	})
	pages := map[string]string{}
	for _, p := range []string{"/detached", "/shadow", "/blob", "/blank-frame", "/other-site-frame"} {
		pages[p] = site + p
	}
	return pages, log
}

// closedAndReported waits, after the click whose reply was out, until
// list_tabs reports the tab the browser made closed (when reported) or
// for 1.5 s (when not: the tab's requests, had one run), and returns what
// list_tabs said last.
func closedAndReported(t *testing.T, f *fixture, out string, reported bool) string {
	t.Helper()
	if !reported {
		time.Sleep(1500 * time.Millisecond)
		return f.mustAllow(t, "e2e.list_tabs", nil)
	}
	seen := out
	var tabs string
	testkit.Eventually(t, func() string {
		tabs = f.mustAllow(t, "e2e.list_tabs", nil)
		if seen += tabs; !strings.Contains(seen, "browser-made tab") {
			return "the closed tab is not reported:\n" + seen
		}
		return ""
	})
	time.Sleep(500 * time.Millisecond) // its requests, had it run
	return tabs
}

// withOtherSite is manifest with 127.0.0.3 in its scope.
func withOtherSite(manifest string) string {
	m := strings.Replace(manifest, `allowed_domains = ["127.0.0.1"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]`, 1)
	return strings.Replace(m, `allow_private_cidrs = ["127.0.0.1/32"]`, `allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1)
}

// TestAPagesUnseenModifiedClickOpensNoTabInTheUsersContext: in the user's
// context (its "Preload pages" off, as the README says), the agent's plain
// click on a button (in a frame too) has the page dispatch a Control-click
// no listener of browsergate's sees; the browser makes a tab for it with
// no opener, which the guard closes before it runs or sends anything: the
// canary sees nothing, no tab stays, and the refusal is reported (but for
// the frame the script wrote, where the early hold does run, and no tab
// is made).
func TestAPagesUnseenModifiedClickOpensNoTabInTheUsersContext(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	f := startWith(t, withOtherSite(liveManifest(richInputManifest(""), port)))
	pages, log := unseenCtrlClicks(t, f.canaryTo)
	for _, page := range []string{"/detached", "/shadow", "/blob", "/blank-frame", "/other-site-frame"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": pages[page]})
		snap := f.mustAllow(t, "e2e.snapshot", nil)
		out := f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "b"`)})
		// The early hold sees the link in the frame the script wrote (it
		// runs there too): no tab is made, nothing to report.
		tabs := closedAndReported(t, f, out, page != "/blank-frame")
		if f.net.Hits() != 0 || f.net.Conns() != 0 || log.count("/from-blob") != 0 || strings.Contains(tabs, "t2") {
			t.Fatalf("%s: a tab the browser made for the page ran: canary %s, /from-blob %d\n%s", page, f.net, log.count("/from-blob"), tabs)
		}
	}
}

// TestAPagesUnseenModifiedClickOpensNoTabLaunched: the same in a launched
// browser, where the tab the browser makes is in the session's own browser
// context: its first request goes through the session's egress proxy,
// which holds it to the scope, and the tab is closed before it runs (the
// blob: page fetches nothing, not even on its own site), with the refusal
// reported.
func TestAPagesUnseenModifiedClickOpensNoTabLaunched(t *testing.T) {
	t.Parallel()
	f := startWith(t, withOtherSite(richInputManifest("")))
	pages, log := unseenCtrlClicks(t, f.canaryTo)
	for _, page := range []string{"/detached", "/blob", "/other-site-frame"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": pages[page]})
		snap := f.mustAllow(t, "e2e.snapshot", nil)
		out := f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "b"`)})
		tabs := closedAndReported(t, f, out, true)
		if f.net.Hits() != 0 || log.count("/from-blob") != 0 {
			t.Fatalf("%s: a tab the browser made for the page ran: canary %s, /from-blob %d\n%s\n%s", page, f.net, log.count("/from-blob"), out, tabs)
		}
	}
}

// TestUsersOwnModifiedClickStillOpensATab: while a session works in the
// user's browser, the user's own Control-click on a link in a tab of
// theirs opens the link in a new tab as ever: the guard holds only the
// tabs the session's pages asked for.
func TestUsersOwnModifiedClickStillOpensATab(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	site, log := serveLogged(t, map[string]string{
		"/users":  `<title>users</title><a id=l href="/users-link">a link of the user's</a>`,
		"/page":   `<title>page</title><p>the session's page</p>`,
		"/opened": `<title>opened</title>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	user := usersBrowser(t, fmt.Sprintf("http://127.0.0.1:%d", port))
	ctx, cancel := context.WithTimeout(user, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/users"),
		chromedp.QueryAfter("#l", func(ctx context.Context, _ *chromedp.Target, nodes []*chromedp.Node) (chromedp.Void, error) {
			return chromedp.Void{}, chromedp.Do(ctx, chromedp.MouseClickNode(nodes[0], chromedp.ButtonModifiers(kb.ModifierCtrl)))
		})); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for log.count("/users-link") == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if log.count("/users-link") != 1 {
		t.Fatalf("the user's Control-click opened no tab that loaded its link (/users-link requested %d times)", log.count("/users-link"))
	}
	// The tab stays (the browser may report its URL a moment after the
	// load began).
	testkit.Eventually(t, func() string {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			return err.Error()
		}
		var urls []string
		for _, i := range infos {
			if i.Type == "page" && strings.HasSuffix(i.URL, "/users-link") {
				return ""
			}
			urls = append(urls, i.Type+" "+i.URL)
		}
		return "the user's new tab is gone: " + strings.Join(urls, ", ")
	})
}
