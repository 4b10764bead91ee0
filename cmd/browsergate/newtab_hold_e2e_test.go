package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A click or a key that may open a tab the browser makes itself (a middle
// click; a click, Enter or Space with Control, Meta or Shift held) on an
// element the page makes a link or a form's button as it acts. In a
// launched browser the executor holds such a tab's opening; in the user's
// own context, where nothing of browsergate's would hold the tab, the gate
// refuses the call whatever the element.

// liveManifest is manifest with the browser the user's, at port.
func liveManifest(manifest string, port int) string {
	return strings.Replace(manifest, `connect = "launch"`,
		fmt.Sprintf("connect = \"live\"\nlive_endpoint = \"http://127.0.0.1:%d\"", port), 1)
}

// noBrowserMadeTab fails t when a tab beside the session's first, or a
// request to /opened or /elsewhere of the site, or the canary, shows that
// the browser opened a tab of its own making.
func noBrowserMadeTab(t *testing.T, f *fixture, log *siteLog) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond) // the browser-made tab's request, if any
	tabs := f.mustAllow(t, "e2e.list_tabs", nil)
	if strings.Contains(tabs, "t2") || log.count("/opened") != 0 || log.count("/elsewhere") != 0 || f.net.Hits() != 0 {
		t.Errorf("the browser opened a tab of its own (/opened hit %d times, /elsewhere %d, the canary %s):\n%s",
			log.count("/opened"), log.count("/elsewhere"), f.net, tabs)
	}
}

// TestModifiedClickOnALinkMadeUnderItOpensNoTab: the page's own capturing
// listeners on the window, registered by its first script, stop every
// click and auxclick before listeners registered later; the element
// becomes a link (or a form's submit button) as the mouse button goes up.
// The executor's hold is in place before any script of the page, so the
// browser opens nothing.
func TestModifiedClickOnALinkMadeUnderItOpensNoTab(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest(""))
	site, log := serveLogged(t, map[string]string{
		"/clicks": `<title>clicks</title>
<script>
for (const t of ['click', 'auxclick', 'submit']) window.addEventListener(t, e => e.stopImmediatePropagation(), true);
</script>
<a id=l2 onmouseup="this.href = '/opened'; this.id = 'linked'">later a link</a>
<a id=far onmouseup="this.href = '` + f.canaryTo + `/opened'">later a link away</a>
<form id=f2 action="/elsewhere"></form>
<button id=wrap type=button onmouseup="this.setAttribute('form', 'f2'); this.type = 'submit'; this.id = 'wrapped'">wrap</button>`,
	})
	for _, args := range []map[string]any{
		{"selector": "#l2", "modifiers": "Control"},
		{"selector": "#l2", "button": "middle"},
		{"selector": "#l2", "modifiers": "Shift"},
		{"selector": "#far", "modifiers": "Control"},
		{"selector": "#wrap", "modifiers": "Control"},
		{"selector": "#wrap", "button": "middle"},
	} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/clicks"})
		f.mustAllow(t, "e2e.click", args)
	}
	noBrowserMadeTab(t, f, log)
}

// TestModifiedClickOnALateSVGLinkOpensNoTab: an SVG link the page gives
// its destination (xlink:href) as the mouse button goes up opens nothing.
func TestModifiedClickOnALateSVGLinkOpensNoTab(t *testing.T) {
	t.Parallel()
	f := startWith(t, richInputManifest(""))
	site, log := serveLogged(t, map[string]string{
		"/svg": `<title>svg</title>
<svg width=200 height=60><a id=s><rect id=r width=200 height=60 fill=red
 onmouseup="document.getElementById('s').setAttributeNS('http://www.w3.org/1999/xlink', 'xlink:href', '/opened')"/></a></svg>`,
	})
	for _, mods := range []string{"Control", "Shift"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/svg"})
		f.mustAllow(t, "e2e.click", map[string]any{"selector": "#r", "modifiers": mods})
	}
	noBrowserMadeTab(t, f, log)
}

// TestModifiedEnterOpensNoTab: Control+Enter (or Shift+Enter) is judged
// as a modified click is: refused on a link, and on an element the page
// makes a link as the key goes down it opens nothing.
func TestModifiedEnterOpensNoTab(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, log := serveLogged(t, map[string]string{
		"/keys": `<title>keys</title>
<a id=l href="/ok">ok</a>
<a id=late tabindex=0 onkeydown="this.href = '/opened'">later a link</a>`,
		"/ok": `<title>ok</title>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/keys"})
	for _, key := range []string{"Control+Enter", "Shift+Enter", "Meta+Enter"} {
		f.mustRefuse(t, "e2e.press_key", map[string]any{"selector": "#l", "key": key}, "would open", "in a new tab or window")
	}
	for _, key := range []string{"Control+Enter", "Shift+Enter"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/keys"})
		f.mustAllow(t, "e2e.press_key", map[string]any{"selector": "#late", "key": key})
	}
	noBrowserMadeTab(t, f, log)
	if n := log.count("/ok"); n != 0 {
		t.Errorf("a refused Control+Enter reached /ok %d times", n)
	}
}

// TestModifiedClickAndKeyRefusedInTheUsersContext: in live mode's user
// context a middle click and a click, Enter or Space with Control, Meta
// or Shift held are refused before anything acts, whatever the element
// (here none is a link yet: each becomes one, to the canary, as the mouse
// button goes up or the key goes down, and the page's own first listener
// stops every later one). The canary sees nothing.
func TestModifiedClickAndKeyRefusedInTheUsersContext(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	f := startWith(t, liveManifest(richInputManifest(""), port))
	site, log := serveLogged(t, map[string]string{
		"/clicks": `<title>clicks</title>
<script>
for (const t of ['click', 'auxclick']) window.addEventListener(t, e => { if (e.target.id === 'l2') e.stopImmediatePropagation(); }, true);
</script>
<a id=l2 tabindex=0 onmouseup="this.href = '` + f.canaryTo + `/opened'" onkeydown="this.href = '` + f.canaryTo + `/opened'">later a link</a>
<p id=log>log:</p>
<button id=b onclick="document.getElementById('log').textContent += ' clicked'">b</button>`,
	})
	refused := func(tool string, args map[string]any) {
		t.Helper()
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/clicks"})
		out, no := f.call(t, tool, args)
		for _, w := range []string{"may open a tab the browser makes itself", "user's own browser context", "whatever the element"} {
			if !no || !strings.Contains(out, w) {
				t.Errorf("%s %v (refused: %v) does not say %q:\n%s", tool, args, no, w, out)
				return
			}
		}
	}
	for _, args := range []map[string]any{
		{"selector": "#l2", "modifiers": "Control"},
		{"selector": "#l2", "button": "middle"},
		{"selector": "#l2", "modifiers": "Shift"},
		{"selector": "#l2", "modifiers": "Meta+Alt"},
		{"selector": "#b", "modifiers": "Control"},
	} {
		refused("e2e.click", args)
	}
	for _, key := range []string{"Control+Enter", "Shift+Enter", "Meta+Enter", "Control+Space", "Shift+Space"} {
		refused("e2e.press_key", map[string]any{"selector": "#l2", "key": key})
	}
	// Clicks and keys that open no tab still work here.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/clicks"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#b", "modifiers": "Alt"})
	f.mustAllow(t, "e2e.press_key", map[string]any{"selector": "#b", "key": "Alt+Enter"})
	if snap := f.mustAllow(t, "e2e.snapshot", map[string]any{"selector": "#log"}); !strings.Contains(snap, "clicked") {
		t.Errorf("an Alt-click did not reach the page:\n%s", snap)
	}
	time.Sleep(1500 * time.Millisecond) // the browser-made tab's request, if any
	if f.net.Hits() != 0 || f.net.Conns() != 0 || log.count("/opened") != 0 {
		t.Errorf("the canary (outside the scope) saw a browser-made tab: %s", f.net)
	}
}
