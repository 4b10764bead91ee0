package main

import (
	"strings"
	"testing"
	"time"
)

// TestAPagesModifiedClickOpensNoTabInTheUsersContext: the agent's plain
// click is not refused in the user's context, and the page's handler
// dispatches a synthesized Control-click on a link out of the scope, which
// Chromium would open in a tab of its own making. The standing part of
// the early hold (no_new_tab.js) cancels it; one dispatched not
// cancelable it cannot cancel, and the target guard closes the tab the
// browser makes before it sends anything (guard_newtabs.go). Either way:
// no tab, and the canary sees nothing.
func TestAPagesModifiedClickOpensNoTabInTheUsersContext(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t) // "Preload pages" off, as the README says
	f := startWith(t, liveManifest(richInputManifest(""), port))
	page := func(cancelable string) string {
		return `<title>page</title>
<a id=away href="` + f.canaryTo + `/opened">x</a>
<button id=b onclick="document.getElementById('away').dispatchEvent(new MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: ` + cancelable + `, view: window}))">b</button>`
	}
	site, log := serveLogged(t, map[string]string{"/page": page("true"), "/not-cancelable": page("false")})
	for _, p := range []string{"/page", "/not-cancelable"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + p})
		f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
		time.Sleep(2000 * time.Millisecond)
		tabs := f.mustAllow(t, "e2e.list_tabs", nil)
		if f.net.Hits() != 0 || f.net.Conns() != 0 || log.count("/opened") != 0 || strings.Contains(tabs, "t2") {
			t.Errorf("%s: a plain click's synthesized Control-click opened a tab that ran: canary %s\n%s", p, f.net, tabs)
		}
	}
}

// TestAPagesModifiedClickOpensNoTabLaunched: the same in a launched
// browser, with the link in scope: no tab the gate never judged opens.
func TestAPagesModifiedClickOpensNoTabLaunched(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest(""))
	site, log := serveLogged(t, map[string]string{
		"/page": `<title>page</title>
<a id=in href="/opened">x</a>
<button id=b onclick="document.getElementById('in').dispatchEvent(new MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: window}))">b</button>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	noBrowserMadeTab(t, f, log)
}

// TestAPagesModifiedClickVariantsReachNothing: in the user's context,
// the synthesized Control-click from a plain Enter's keydown, a
// form.submit() in the handler of a synthesized Control-click on a plain
// div (refused where it leads), and window.open noopener in a plain
// click's handler (the popup guard's case) reach nothing out of scope.
func TestAPagesModifiedClickVariantsReachNothing(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	away := f.canaryTo
	site, _ := serveLogged(t, map[string]string{
		"/key": `<title>key</title>
<a id=away href="` + away + `/key">x</a>
<button id=b onkeydown="document.getElementById('away').dispatchEvent(new MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: window}))">b</button>`,
		"/submit": `<title>submit</title>
<form id=f action="` + away + `/submit" method=get></form><div id=d onclick="document.getElementById('f').submit()">d</div>
<button id=b onclick="document.getElementById('d').dispatchEvent(new MouseEvent('click', {ctrlKey: true, bubbles: true, cancelable: true, view: window}))">b</button>`,
		"/open": `<title>open</title>
<button id=b onclick="window.open('` + away + `/open', '_blank', 'noopener')">b</button>`,
	})
	for _, c := range []struct{ page, tool string }{{"/key", "e2e.press_key"}, {"/submit", "e2e.click"}, {"/open", "e2e.click"}} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + c.page})
		args := map[string]any{"selector": "#b"}
		if c.tool == "e2e.press_key" {
			args["key"] = "Enter"
		}
		out, no := f.call(t, c.tool, args)
		t.Logf("%s %s refused=%v: %.300s", c.page, c.tool, no, out)
		time.Sleep(2000 * time.Millisecond)
		t.Logf("after %s: canary %s", c.page, f.net)
	}
	if f.net.Hits() != 0 {
		t.Errorf("canary reached: %s", f.net)
	}
}

// TestAPagesModifiedClickAfterDocumentOpenOpensNoTab: document.open()
// erases every event listener of the document and of its window (HTML:
// "erase all event listeners and handlers given document's relevant
// global object"), in every world, the standing listener browsergate's
// isolated world added as the document began too. The page's synthesized
// Control-click, from the handler of the agent's plain click, has the
// browser make a tab with no opener in the user's context; it is closed
// before it sends anything.
func TestAPagesModifiedClickAfterDocumentOpenOpensNoTab(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t) // "Preload pages" off, as the README says
	f := startWith(t, liveManifest(richInputManifest(""), port))
	site, log := serveLogged(t, map[string]string{
		"/page": `<title>page</title><p id=wait>wait</p>
<script>
onload = () => setTimeout(() => {
  document.open();
  document.write('<title>page</title><a id=away href="` + f.canaryTo + `/opened">x</a>' +
    '<button id=b onclick="document.getElementById(\'away\').dispatchEvent(new MouseEvent(\'click\', {ctrlKey: true, bubbles: true, cancelable: true, view: window}))">b</button>');
  document.close();
}, 0);
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"selector": "#b"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b"})
	time.Sleep(2000 * time.Millisecond)
	tabs := f.mustAllow(t, "e2e.list_tabs", nil)
	t.Logf("canary %s\n%s", f.net, tabs)
	if f.net.Hits() != 0 || f.net.Conns() != 0 || log.count("/opened") != 0 || strings.Contains(tabs, "t2") {
		t.Errorf("after document.open a plain click's synthesized Control-click opened a tab that ran: canary %s\n%s", f.net, tabs)
	}
}
