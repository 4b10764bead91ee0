package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// emulationPage reports what a page sees of its device, as it loads and
// again on the button "Measure": its viewport width, user agent (spaces
// as _), Intl timezone, navigator.language, touch (a coarse pointer and
// touch points), position (or the error code: 1 denied, 2 unavailable, 3
// timeout) and whether a fetch of its own site went through, with how
// long it took (reported, never judged: no test asserts a timing).
const emulationPage = `<!doctype html><title>emulation</title><meta name=viewport content="width=device-width">
<button id=again onclick="measure()">Measure</button><pre id=out>measuring</pre><script>
async function measure() {
  document.getElementById('out').textContent = 'measuring';
  const geo = await new Promise(r => navigator.geolocation.getCurrentPosition(
    p => r(p.coords.latitude.toFixed(3) + ',' + p.coords.longitude.toFixed(3)), e => r('error' + e.code), {timeout: 1000}));
  const t0 = performance.now();
  let fetched;
  try { await fetch('/emulation-data?' + Math.random(), {cache: 'no-store'}); fetched = 'ok'; } catch (e) { fetched = 'failed'; }
  const ms = Math.round(performance.now() - t0);
  document.getElementById('out').textContent = ['width=' + innerWidth, 'ua=' + navigator.userAgent.replace(/ /g, '_'),
    'tz=' + Intl.DateTimeFormat().resolvedOptions().timeZone, 'lang=' + navigator.language,
    'coarse=' + matchMedia('(pointer: coarse)').matches, 'touch=' + navigator.maxTouchPoints, 'geo=' + geo,
    'fetch=' + fetched, 'fetch_ms=' + ms, 'measured'].join(' ');
}
measure();
</script>`

// emulationPages serves emulationPage at /emulation and the data it
// fetches.
func emulationPages(mux *http.ServeMux) {
	mux.HandleFunc("/emulation", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, emulationPage)
	})
	mux.HandleFunc("/emulation-data", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data")
	})
}

// measuredRE reads what emulationPage wrote.
var measuredRE = regexp.MustCompile(`width=(\S+) ua=(\S+) tz=(\S+) lang=(\S+) coarse=(\S+) touch=(\S+) geo=(\S+) fetch=(\S+) fetch_ms=(\S+) measured`)

// measured is what emulationPage reported.
type measured struct {
	width, ua, tz, lang, coarse, touch, geo, fetch string
}

// measure waits for the current tab's emulationPage to report (after a
// load or a click on Measure) and reads it, with tool the manifest's tool
// name.
func measure(t *testing.T, f *fixture, tool string) measured {
	t.Helper()
	f.mustAllow(t, tool+".wait_for", map[string]any{"text": " measured", "timeout_ms": 20000})
	out := f.mustAllow(t, tool+".extract_html", map[string]any{"selector": "#out"})
	m := measuredRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the page did not say what it measured:\n%s", out)
	}
	return measured{width: m[1], ua: m[2], tz: m[3], lang: m[4], coarse: m[5], touch: m[6], geo: m[7], fetch: m[8]}
}

// runEmulate is the suite's emulate step: a device, a locale and a
// timezone show on the page, in the session's tab and in a tab it opens
// afterwards; a position is refused (the suite's manifest grants no
// geolocation); reset gives the page the browser's own back, so the
// steps after it see the browser as it is.
func (s *surface) runEmulate(t *testing.T) {
	page := s.site + "/emulation"
	s.allow(t, "navigate", map[string]any{"url": page})
	before := measure(t, s.f, s.tool)
	// In the user's browser context a timezone and a locale, which
	// Chromium sets for a whole renderer process, are refused.
	tz, lang := "Asia/Tokyo", "de-DE"
	if s.live {
		s.f.mustRefuse(t, s.tool+".emulate", map[string]any{"timezone": tz}, "refused in the user's browser context")
		tz, lang = before.tz, before.lang
		s.allow(t, "emulate", map[string]any{"device": "pixel-7"}, "device pixel-7")
	} else {
		s.allow(t, "emulate", map[string]any{"device": "pixel-7", "locale": lang, "timezone": tz}, "device pixel-7", "timezone "+tz)
	}
	s.allow(t, "click", map[string]any{"selector": "#again"})
	got := measure(t, s.f, s.tool)
	if got.width != "412" || !strings.Contains(got.ua, "Pixel_7") || got.tz != tz || got.lang != lang || got.touch == "0" {
		t.Errorf("after emulate the page saw %+v, want width 412, a Pixel 7's user agent, %s, %s and touch", got, tz, lang)
	}
	s.allow(t, "new_tab", map[string]any{"url": page + "?opened"})
	if got := measure(t, s.f, s.tool); got.width != "412" || got.tz != tz {
		t.Errorf("a tab opened after emulate saw %+v, want the emulation", got)
	}
	s.f.mustRefuse(t, s.tool+".emulate", map[string]any{"geolocation": "52.52,13.405"}, "geolocation", "browser.permissions")
	s.allow(t, "emulate", map[string]any{"reset": true}, "none")
	s.allow(t, "reload", nil)
	if got := measure(t, s.f, s.tool); got.width != before.width || got.ua != before.ua || got.tz != before.tz {
		t.Errorf("after reset the page saw %+v, want what it saw before emulate, %+v", got, before)
	}
	opened := s.f.tabID(t, s.tool, "session", "?opened")
	s.allow(t, "close_tab", map[string]any{"tab": opened})
}
