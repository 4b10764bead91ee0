package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/evidence"
)

// policyProbePage writes, once loaded, whether the document's policy
// allows each of the features it names (document.featurePolicy), and how
// a request for geolocation was answered ("denied", or "answered").
const policyProbePage = `<!doctype html><title>policy</title><pre id=out>asking</pre><script>
(async () => {
  const out = [];
  for (const f of ['geolocation', 'camera', 'microphone', 'clipboard-read', 'hid', 'usb', 'serial', 'bluetooth',
    'publickey-credentials-get', 'publickey-credentials-create', 'identity-credentials-get', 'otp-credentials'])
    out.push(f + '=' + document.featurePolicy.allowsFeature(f));
  out.push('geo=' + await new Promise(r => navigator.geolocation.getCurrentPosition(() => r('answered'),
    e => r(e.code === 1 ? 'denied' : 'answered'), {timeout: 300})));
  document.getElementById('out').textContent = out.join(' ') + ' probed';
})();
</script>`

// policySeen loads url in the session's tab and returns what
// policyProbePage wrote there: name → value.
func policySeen(t *testing.T, f *fixture, url string) map[string]string {
	t.Helper()
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": url})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " probed", "timeout_ms": 10000})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	seen := map[string]string{}
	for _, m := range regexp.MustCompile(`([a-z-]+)=(\w+)`).FindAllStringSubmatch(snap, -1) {
		seen[m[1]] = m[2]
	}
	if seen["geo"] == "" {
		t.Fatalf("the page did not say what it saw at %s:\n%s", url, snap)
	}
	return seen
}

// grantAsTheUser sets, as the user's browser would on a prompt answered
// yes, each permission granted to origin for the user's own context.
func grantAsTheUser(t *testing.T, endpoint, origin string, names ...string) {
	t.Helper()
	alloc, cancel := remote.NewAllocator(context.Background(), endpoint)
	defer cancel()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	ctx, cancelT := context.WithTimeout(user, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	for _, n := range names {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: n}, Setting: browser.PermissionSettingGranted, Origin: origin}); err != nil {
			t.Fatalf("grant %s as the user: %v", n, err)
		}
	}
}

// TestLivePermissionsServerPolicyCannotVoidTheSessions: in the user's
// context, where the user has allowed the site geolocation, the server's
// own Permissions-Policy and Feature-Policy headers cannot give the
// session's page back what browsergate's Permissions-Policy turns off: not
// one that does not parse (Chromium drops a joined header that does not
// parse, whole), not one that allows every feature to every origin, not
// the older Feature-Policy. In each case geolocation, the camera and the
// device choosers stay off and the page's request for geolocation is
// denied.
func TestLivePermissionsServerPolicyCannotVoidTheSessions(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/malformed":
			w.Header().Add("Permissions-Policy", "camera=(self")
		case "/wide":
			w.Header().Add("Permissions-Policy", "geolocation=*, camera=*, hid=*, usb=*")
		case "/feature-policy":
			w.Header().Add("Feature-Policy", "geolocation *; camera *")
		}
		fmt.Fprint(w, policyProbePage)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	grantAsTheUser(t, endpoint, site, "geolocation")
	f := startWith(t, permissionsManifest("live", fmt.Sprintf("live_endpoint = %q", endpoint), ""))
	for _, path := range []string{"/plain", "/malformed", "/wide", "/feature-policy"} {
		seen := policySeen(t, f, site+path)
		for _, feature := range []string{"geolocation", "camera", "microphone", "clipboard-read"} {
			if seen[feature] != "false" {
				t.Errorf("%s: the session's document allows %s (%q), want it off", path, feature, seen[feature])
			}
		}
		if seen["geo"] != "denied" {
			t.Errorf("%s: the page's request for geolocation was %s, want denied", path, seen["geo"])
		}
	}
}

// choosersPage asks, on a click (a chooser wants one), for a device of
// each chooser the browser has and for the camera by the older
// webkitGetUserMedia, and writes how each was answered: the error's name,
// "answered" for anything else, "absent" where the browser has no such
// API.
const choosersPage = `<!doctype html><title>choosers</title><button id=ask onclick="ask()">ask</button><pre id=out>waiting</pre><script>
async function ask() {
  const out = [];
  const tryIt = async (name, obj, call) => {
    if (!obj) { out.push(name + '=absent'); return; }
    try { await call(obj); out.push(name + '=answered'); } catch (e) { out.push(name + '=' + e.name); }
  };
  await tryIt('hid', navigator.hid, o => o.requestDevice({filters: []}));
  await tryIt('usb', navigator.usb, o => o.requestDevice({filters: []}));
  await tryIt('serial', navigator.serial, o => o.requestPort());
  await tryIt('bluetooth', navigator.bluetooth, o => o.requestDevice({acceptAllDevices: true}));
  await tryIt('webkit-camera', navigator.webkitGetUserMedia, f => new Promise((ok, fail) =>
    f.call(navigator, {video: true}, ok, e => fail(e))));
  document.getElementById('out').textContent = out.join(' ') + ' done';
}
</script>`

// TestPermissionsDeviceChoosersAndOldGetUserMedia: the device choosers
// (WebHID, WebUSB, Web Serial, Web Bluetooth) are no permission, so no
// override answers them; in every mode the session's page is refused a
// device as if none had been picked, and in the user's context its
// document's policy turns them off too. The camera asked for by the
// older navigator.webkitGetUserMedia is refused like getUserMedia's. Each
// request is in the evidence.
func TestPermissionsDeviceChoosersAndOldGetUserMedia(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"launch", "live"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			keys := ""
			if mode == "live" {
				port, _ := startUsersChromium(t)
				keys = fmt.Sprintf("live_endpoint = %q", fmt.Sprintf("http://127.0.0.1:%d", port))
			}
			site, _ := serveLogged(t, map[string]string{"/ask": choosersPage, "/policy": policyProbePage})
			f := startWith(t, permissionsManifest(mode, keys, ""))
			if mode == "live" {
				seen := policySeen(t, f, site+"/policy")
				for _, feature := range []string{"hid", "usb", "serial", "bluetooth", "publickey-credentials-get", "publickey-credentials-create",
					"identity-credentials-get", "otp-credentials"} {
					if seen[feature] != "false" {
						t.Errorf("the session's document allows %s (%q), want it off", feature, seen[feature])
					}
				}
			}
			f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ask"})
			f.mustAllow(t, "e2e.click", map[string]any{"selector": "#ask"})
			f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " done", "timeout_ms": 15000})
			snap := f.mustAllow(t, "e2e.snapshot", nil)
			got := map[string]string{}
			for _, m := range regexp.MustCompile(`([a-z-]+)=(\w+)`).FindAllStringSubmatch(snap, -1) {
				got[m[1]] = m[2]
			}
			var asked []string
			for _, chooser := range []string{"hid", "usb", "serial", "bluetooth"} {
				switch got[chooser] {
				case "absent":
				case "NotFoundError":
					asked = append(asked, chooser)
				default:
					t.Errorf("%s: the page's request for a device was answered %q, want NotFoundError (none picked)", chooser, got[chooser])
				}
			}
			if got["hid"] == "absent" || got["usb"] == "absent" {
				t.Fatalf("Chromium has no WebHID or WebUSB here: the test proves nothing:\n%s", snap)
			}
			// In the user's context the page script denies it; in a launched
			// browser the browser answers (with no camera to give, it may
			// say none was found before it reads the denial).
			if cam := got["webkit-camera"]; mode == "live" && cam != "NotAllowedError" || cam == "answered" || cam == "absent" || cam == "" {
				t.Errorf("the camera by webkitGetUserMedia was answered %q, want it refused", cam)
			}
			records := permissionRecords(t, f)
			for _, p := range append(asked, "camera") {
				if !recorded(records, p, site+"/ask") {
					t.Errorf("the evidence does not record the page's request for %s: %q", p, records)
				}
			}
		})
	}
}

// TestPermissionsFramesRequestIsTheFramesOwn: a frame of another origin
// inside a page whose origin is granted geolocation asks for it; the
// record is the frame's, at the frame's URL, not taken for the granted
// page's (which would have counted it as granted and left it out).
func TestPermissionsFramesRequestIsTheFramesOwn(t *testing.T) {
	t.Parallel()
	const ask = `<script>navigator.geolocation.getCurrentPosition(() => {}, () => {}, {timeout: 300});</script>`
	framed, _ := serveLogged(t, map[string]string{"/frame": `<!doctype html><title>frame</title>` + ask})
	granted, _ := serveLogged(t, map[string]string{"/top": fmt.Sprintf(`<!doctype html><title>top</title>%s
<iframe allow="geolocation" src="%s/frame" onload="document.body.append(' framed')"></iframe>`, ask, framed)})
	f := startWith(t, permissionsManifest("launch", "", fmt.Sprintf("geolocation = [%q]", granted)))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": granted + "/top"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " framed", "timeout_ms": 10000})
	records := permissionRecords(t, f)
	if !recorded(records, "geolocation", framed+"/frame") {
		t.Errorf("the evidence does not record the frame's request for geolocation at its own URL: %q", records)
	}
	if recorded(records, "geolocation", granted+"/top") {
		t.Errorf("the granted page's own request is recorded as refused: %q", records)
	}
}

// TestPermissionsReportsDoNotCrowdOutEgress: a page that asks for
// geolocation a few thousand times, then fetches from outside the scope,
// makes one permission record, and its refused fetch is in the evidence.
func TestPermissionsReportsDoNotCrowdOutEgress(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/flood": `<!doctype html><title>flood</title><pre id=out>asking</pre><script>
for (let i = 0; i < 3000; i++) navigator.geolocation.getCurrentPosition(() => {}, () => {});
fetch('http://127.0.0.2:9/after-the-flood').catch(() => {}).finally(() => { document.getElementById('out').textContent = 'fetched'; });
</script>`})
	f := startWith(t, permissionsManifest("launch", "", ""))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/flood"})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": "fetched", "timeout_ms": 15000})
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, export)
	}
	geolocation, egress := 0, false
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var e evidence.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		for _, b := range e.Blocked {
			if b.Layer == "permission" && b.Rule == `permissions "geolocation"` {
				geolocation++
			}
			if strings.Contains(b.URL, "/after-the-flood") {
				egress = true
			}
		}
	}
	if geolocation != 1 {
		t.Errorf("the page's requests for geolocation made %d records, want 1", geolocation)
	}
	if !egress {
		t.Errorf("the refused fetch after the page's requests is not in the evidence")
	}
}
