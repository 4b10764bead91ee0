package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/testkit"
)

// Probes of the tabs the browser makes for a page of the session in the
// user's context, and of what may be taken for one (guard_newtabs.go).

// TestALateAskStillClosesTheBrowsersTab, TestTabsTheBrowserMakesOtherwiseSendNothingUnjudged,
// TestAltActivationSendsNothingUnjudged.

// TestALateAskStillClosesTheBrowsersTab: the page's
// synthesized Control-click on a detached link is followed, in the same
// task, by a 1 s busy loop, in case the renderer held its ask
// (Page.frameRequestedNavigation) until the task ends while the browser
// made the tab at once. It does not: the ask comes first, the tab is
// closed and reported.
func TestALateAskStillClosesTheBrowsersTab(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	away := f.canaryTo
	site, _ := serveLogged(t, map[string]string{
		"/late": `<title>page</title><script>function go() {
const a = document.createElement('a'); a.href = '` + away + `/late';
` + ctrlClick("a", "window") + `;
const t0 = performance.now(); while (performance.now() - t0 < 1000) {}
}</script><button id=b onclick="go()">b</button>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/late"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	out := f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "b"`)})
	tabs := closedAndReported(t, f, out, true)
	t.Logf("out: %s\ntabs: %s", out, tabs)
	if f.net.Hits() != 0 || f.net.Conns() != 0 || strings.Contains(tabs, "t2") {
		t.Fatalf("a tab the browser made for the page ran (its ask came late): canary %s\n%s\n%s", f.net, out, tabs)
	}
}

// pdfWithOpenJS is a PDF whose document-open action runs js (PDFium's
// JavaScript, which Chromium's PDF viewer runs).
func pdfWithOpenJS(js string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
		"<< /Type /Action /S /JavaScript /JS (" + js + ") >>",
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offs := []int{}
	for i, o := range objs {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, x)
	return []byte(b.String())
}

// TestTabsTheBrowserMakesOtherwiseSendNothingUnjudged probes, in the user's context, tabs the
// browser makes for a session's page with no Page.frameRequestedNavigation
// new-tab ask the guard can match: each variant's canary hits are logged,
// and the test fails if any reached the canary.
func TestTabsTheBrowserMakesOtherwiseSendNothingUnjudged(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	away := f.canaryTo
	onB := func(handler string) string {
		return "<title>page</title><script>function go() { " + handler + " }</script><button id=b onclick=\"go()\">b</button>"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(pdfWithOpenJS("app.launchURL('" + away + "/pdf-launch', true);"))
		case "/alt":
			fmt.Fprint(w, onB("const a = document.createElement('a'); a.href = '"+away+"/alt'; a.dispatchEvent(new MouseEvent('click', {altKey: true, bubbles: true, cancelable: true, view: window}))"))
		case "/shadow-form":
			fmt.Fprint(w, `<title>page</title><div id=host></div><script>
window.inner = document.getElementById('host').attachShadow({mode: 'closed'});
inner.innerHTML = '<form method=post action="`+away+`/form"><input name=q value=x><button id=s>s</button></form>';
</script>`+onB("inner.getElementById('s').dispatchEvent(new MouseEvent('click', {shiftKey: true, bubbles: true, cancelable: true, view: window}))"))
		default:
			fmt.Fprint(w, "<title>x</title>x")
		}
	}))
	t.Cleanup(srv.Close)
	var leaks []string
	for _, page := range []string{"/alt", "/shadow-form", "/doc.pdf"} {
		before := f.net.Hits()
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": srv.URL + page})
		out := ""
		if page != "/doc.pdf" {
			snap := f.mustAllow(t, "e2e.snapshot", nil)
			out, _ = f.call(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "b"`)})
		}
		time.Sleep(2 * time.Second)
		tabs := f.mustAllow(t, "e2e.list_tabs", nil)
		t.Logf("%s: canary hits %d -> %d (%s)\n%s\n%s", page, before, f.net.Hits(), f.net, out, tabs)
		if f.net.Hits() != before {
			leaks = append(leaks, page)
		}
	}
	if len(leaks) > 0 {
		t.Fatalf("the canary was reached by: %v", leaks)
	}
}

// TestAPagesAsksForBlankTabsCloseNoneOfTheUsers: the session's page (no user
// activation: no tab is made) names, every 100 ms, about:blank and
// chrome://newtab/ in Control-clicks on detached links. A new tab the
// user's tools open at either (Target.createTarget, as chromedp and
// extensions' chrome.tabs.create do) is closed by the guard as the page's.
func TestAPagesAsksForBlankTabsCloseNoneOfTheUsers(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	site, _ := serveLogged(t, map[string]string{
		"/page": `<title>page</title><script>setInterval(() => { for (const u of ['about:blank', 'chrome://newtab/']) {
const a = document.createElement('a'); a.href = u;
a.dispatchEvent(new MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: window})); } }, 100)</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	time.Sleep(time.Second)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	var gone []string
	for _, c := range []struct{ url, shown string }{{"about:blank", "about:blank"}, {"chrome://newtab/", "chrome://new"}} {
		user := usersBrowser(t, endpoint)
		ctx, cancel := context.WithTimeout(user, 20*time.Second)
		// chromedp's first run opens its own tab at about:blank.
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			return chromedp.FromContext(ctx).Browser.Call(ctx, "Target.createTarget", map[string]any{"url": c.url}, nil)
		}))
		if err != nil {
			t.Logf("%s: the user's tool's own tab at about:blank: %v", c.url, err)
			gone = append(gone, "about:blank (chromedp's tab)")
			cancel()
			continue
		}
		time.Sleep(2 * time.Second)
		infos, err := chromedp.Targets(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, i := range infos {
			found = found || i.Type == "page" && strings.HasPrefix(i.URL, c.shown)
		}
		if !found {
			gone = append(gone, c.url)
		}
	}
	tabs, _ := f.call(t, "e2e.list_tabs", nil)
	if len(gone) > 0 {
		t.Fatalf("the user's new tabs at %v were closed\n%s", gone, tabs)
	}
}

// TestAltActivationSendsNothingUnjudged probes the download disposition
// (Alt held: Chromium saves the link rather than opening it), which the
// guard's asks leave out: the agent's Alt+click and Alt+Enter on an
// in-scope link whose href the page turns to the canary as it acts
// (mousedown, keydown), in the user's context.
func TestAltActivationSendsNothingUnjudged(t *testing.T) {
	t.Parallel()
	port, _ := testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	away := f.canaryTo
	site, _ := serveLogged(t, map[string]string{
		"/alt": `<title>page</title><a id=l href="/fine">fine link</a><script>
const l = document.getElementById('l');
for (const e of ['mousedown', 'keydown']) l.addEventListener(e, () => { l.href = '` + away + `/alt-' + e; });
</script>`,
	})
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"e2e.click", map[string]any{"modifiers": "Alt"}},
		{"e2e.press_key", map[string]any{"key": "Alt+Enter"}},
	} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/alt"})
		snap := f.mustAllow(t, "e2e.snapshot", nil)
		step.args["ref"] = findRef(snap, "fine link")
		out, _ := f.call(t, step.tool, step.args)
		time.Sleep(2 * time.Second)
		tabs, _ := f.call(t, "e2e.list_tabs", nil)
		t.Logf("%s %v: canary %s\n%s\n%s", step.tool, step.args, f.net, out, tabs)
	}
	if f.net.Hits() != 0 {
		t.Fatalf("an Alt activation reached the canary: %s", f.net)
	}
}
