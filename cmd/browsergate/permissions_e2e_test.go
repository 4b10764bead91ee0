package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/evidence"
)

// permissionsPage asks for geolocation, notifications and the clipboard
// as it loads, and writes what it saw: for each, the state the Permissions
// API reports before the request, and how the request was answered
// ("denied", or "answered" for anything else: a position, a timeout with
// no position to give, a grant); and how notifications were answered to
// a frame it made blank.
const permissionsPage = `<!doctype html><title>permissions</title><pre id=out>asking</pre><script>
(async () => {
  const state = async n => { try { return (await navigator.permissions.query({name: n})).state; } catch (e) { return 'error'; } };
  const before = {g: await state('geolocation'), n: await state('notifications'), c: await state('clipboard-read')};
  const geo = await new Promise(r => navigator.geolocation.getCurrentPosition(() => r('answered'),
    e => r(e.code === 1 ? 'denied' : 'answered'), {timeout: 300}));
  let notif;
  try { notif = await Notification.requestPermission(); notif = notif === 'denied' ? 'denied' : 'answered'; } catch (e) { notif = 'denied'; }
  let clip;
  try { await navigator.clipboard.readText(); clip = 'answered'; } catch (e) { clip = /permission/i.test(e.message) ? 'denied' : 'answered'; }
  // The same request from a frame the page makes blank, a world of its own.
  const frame = document.body.appendChild(document.createElement('iframe')).contentWindow;
  let framed;
  try { framed = await frame.Notification.requestPermission(); framed = framed === 'denied' ? 'denied' : 'answered'; } catch (e) { framed = 'denied'; }
  document.getElementById('out').textContent = 'geolocation=' + before.g + '/' + geo + ' notifications=' + before.n + '/' + notif +
    ' clipboard-read=' + before.c + '/' + clip + ' framed-notifications=' + framed + ' asked';
})();
</script>`

// permissionsSeen reads what permissionsPage wrote: permission → "state/answer".
func permissionsSeen(t *testing.T, f *fixture, pageURL string) map[string]string {
	t.Helper()
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": pageURL})
	f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " asked", "timeout_ms": 10000})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	m := regexp.MustCompile(`geolocation=(\S+) notifications=(\S+) clipboard-read=(\S+) framed-notifications=(\S+) asked`).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("the page did not say what it saw:\n%s", snap)
	}
	// No test grants notifications: a blank frame's request is denied too.
	if m[4] != "denied" {
		t.Errorf("a blank frame's request for notifications was %s, want denied", m[4])
	}
	return map[string]string{"geolocation": m[1], "notifications": m[2], "clipboard-read": m[3]}
}

// permissionRecords ends the session (the client goes, and the daemon with
// it) and returns the permission requests its evidence records, as
// "permission url" lines, after checking that the log verifies.
func permissionRecords(t *testing.T, f *fixture) []string {
	t.Helper()
	f.cs.Close()
	if out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, export)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var e evidence.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		for _, b := range e.Blocked {
			if b.Layer != "permission" {
				continue
			}
			if !strings.Contains(b.Reason, "denied without a prompt") {
				t.Errorf("a permission record does not say it was denied without a prompt: %+v", b)
			}
			got = append(got, strings.TrimPrefix(b.Rule, "permissions ")+" "+b.URL)
		}
	}
	return got
}

// recorded reports whether records hold a request for permission from url.
func recorded(records []string, permission, url string) bool {
	for _, r := range records {
		if r == fmt.Sprintf("%q %s", permission, url) {
			return true
		}
	}
	return false
}

// permissionsManifest is the e2e manifest with [browser] keys and a
// [browser.permissions] body added.
func permissionsManifest(connect, browserKeys, grants string) string {
	m := fmt.Sprintf(e2eManifest, connect, browserKeys)
	if grants != "" {
		m = strings.Replace(m, "[browser.commands.navigate]", "[browser.permissions]\n"+grants+"\n\n[browser.commands.navigate]", 1)
	}
	return m
}

// TestPermissionsDeniedByDefault: a launched browser's session grants no
// permission. A page that asks for geolocation, notifications and the
// clipboard finds each denied before it asks (the Permissions API says
// "denied", not "prompt": the browser answers from the session's
// overrides, never from a prompt) and is denied; each request is in the
// evidence, with the page's URL.
func TestPermissionsDeniedByDefault(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/ask": permissionsPage})
	f := startWith(t, permissionsManifest("launch", "", ""))
	seen := permissionsSeen(t, f, site+"/ask")
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if seen[p] != "denied/denied" {
			t.Errorf("%s: the page saw %s, want denied/denied", p, seen[p])
		}
	}
	records := permissionRecords(t, f)
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if !recorded(records, p, site+"/ask") {
			t.Errorf("the evidence does not record the page's request for %s: %q", p, records)
		}
	}
}

// TestPermissionsGrantedByOrigin: a grant lets the pages of its origin
// have the permission without a prompt, and no other: the same page on
// another port of the same host (another origin) is denied; a permission
// the manifest does not grant is denied to both. The requests denied are
// in the evidence; the granted ones are not refusals.
func TestPermissionsGrantedByOrigin(t *testing.T) {
	t.Parallel()
	granted, _ := serveLogged(t, map[string]string{"/ask": permissionsPage})
	other, _ := serveLogged(t, map[string]string{"/ask": permissionsPage})
	f := startWith(t, permissionsManifest("launch", "", fmt.Sprintf("geolocation = [%q]\nclipboard-read = [%q]", granted, granted)))
	seen := permissionsSeen(t, f, granted+"/ask")
	if seen["geolocation"] != "granted/answered" || !strings.HasPrefix(seen["clipboard-read"], "granted/") || seen["notifications"] != "denied/denied" {
		t.Errorf("the granted origin saw %v, want geolocation and clipboard-read granted, notifications denied", seen)
	}
	seen = permissionsSeen(t, f, other+"/ask")
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if seen[p] != "denied/denied" {
			t.Errorf("another origin: %s: the page saw %s, want denied/denied", p, seen[p])
		}
	}
	records := permissionRecords(t, f)
	if recorded(records, "geolocation", granted+"/ask") || recorded(records, "clipboard-read", granted+"/ask") {
		t.Errorf("a granted request is recorded as refused: %q", records)
	}
	for _, want := range []struct{ p, url string }{
		{"notifications", granted + "/ask"}, {"geolocation", other + "/ask"}, {"notifications", other + "/ask"}, {"clipboard-read", other + "/ask"},
	} {
		if !recorded(records, want.p, want.url) {
			t.Errorf("the evidence does not record the request for %s from %s: %q", want.p, want.url, records)
		}
	}
}

// userPermissionStates opens a tab of the user's own (on a DevTools
// connection of its own, as the user's browser would) at url and returns
// what the Permissions API says there of geolocation, notifications and
// clipboard-read.
func userPermissionStates(t *testing.T, endpoint, url string) string {
	t.Helper()
	alloc, cancel := remote.NewAllocator(context.Background(), endpoint)
	defer cancel()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	ctx, cancelT := context.WithTimeout(user, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{AwaitPromise: new(true), ReturnByValue: new(true),
		Expression: `Promise.all(['geolocation', 'notifications', 'clipboard-read'].map(n => navigator.permissions.query({name: n}).then(s => n + '=' + s.state))).then(a => a.join(' '))`})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		t.Fatalf("the user's tab: %v %+v", err, res)
	}
	var s string
	if err := json.Unmarshal(res.Result.Value, &s); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	return s
}

// usersOwnStates is what a fresh profile's tab says when nothing has
// changed its site settings: every permission would prompt.
const usersOwnStates = "geolocation=prompt notifications=prompt clipboard-read=prompt"

// TestLivePermissionsIsolated: in live mode with context = "isolated" the
// session's pages are denied (or granted) as in a launched browser, and
// the user's own tab on the very origin the session was granted is
// untouched, during the session and after it: its permissions still
// prompt (the overrides are the session's browser context's, gone with
// it).
func TestLivePermissionsIsolated(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	granted, _ := serveLogged(t, map[string]string{"/ask": permissionsPage, "/mine": "<title>mine</title>mine"})
	f := startWith(t, permissionsManifest("live", fmt.Sprintf("live_endpoint = %q\ncontext = \"isolated\"", endpoint), fmt.Sprintf("geolocation = [%q]", granted)))
	seen := permissionsSeen(t, f, granted+"/ask")
	if seen["geolocation"] != "granted/answered" || seen["notifications"] != "denied/denied" || seen["clipboard-read"] != "denied/denied" {
		t.Errorf("the session's page saw %v, want geolocation granted, the others denied", seen)
	}
	if got := userPermissionStates(t, endpoint, granted+"/mine"); got != usersOwnStates {
		t.Errorf("during the session the user's own tab on the granted origin says %q, want %q", got, usersOwnStates)
	}
	records := permissionRecords(t, f) // the session ends
	if !recorded(records, "notifications", granted+"/ask") || !recorded(records, "clipboard-read", granted+"/ask") || recorded(records, "geolocation", granted+"/ask") {
		t.Errorf("the evidence records %q, want the notifications and clipboard-read requests and not the granted geolocation", records)
	}
	if got := userPermissionStates(t, endpoint, granted+"/mine"); got != usersOwnStates {
		t.Errorf("after the session the user's own tab on the granted origin says %q, want %q", got, usersOwnStates)
	}
}

// TestLivePermissionsInTheUsersContext: in the user's own context no
// override is set (it would be the user's site setting for every tab of
// the origin): the session's documents carry a Permissions-Policy that
// turns geolocation and the clipboard off, and the page script denies
// notifications. The session's page is denied all three without a
// prompt, each request is in the evidence, and the user's own tab on the
// same origin still prompts for each, during and after the session.
func TestLivePermissionsInTheUsersContext(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, _ := serveLogged(t, map[string]string{"/ask": permissionsPage, "/mine": "<title>mine</title>mine"})
	f := startWith(t, permissionsManifest("live", fmt.Sprintf("live_endpoint = %q", endpoint), ""))
	seen := permissionsSeen(t, f, site+"/ask")
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if seen[p] != "denied/denied" {
			t.Errorf("%s: the session's page saw %s, want denied/denied", p, seen[p])
		}
	}
	if got := userPermissionStates(t, endpoint, site+"/mine"); got != usersOwnStates {
		t.Errorf("during the session the user's own tab on the session's origin says %q, want %q", got, usersOwnStates)
	}
	records := permissionRecords(t, f)
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if !recorded(records, p, site+"/ask") {
			t.Errorf("the evidence does not record the page's request for %s: %q", p, records)
		}
	}
	if got := userPermissionStates(t, endpoint, site+"/mine"); got != usersOwnStates {
		t.Errorf("after the session the user's own tab says %q, want %q", got, usersOwnStates)
	}
}
