package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
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
// it) and returns the permission requests its evidence records as
// refused, as "permission url" lines, after checking that the log
// verifies.
func permissionRecords(t *testing.T, f *fixture) []string {
	t.Helper()
	return refusedPermissions(t, endedRecords(t, f))
}

// endedRecords ends the session (the client goes, and the daemon with it)
// and returns the records of the evidence, after checking that the log
// verifies.
func endedRecords(t *testing.T, f *fixture) []*evidence.Envelope {
	t.Helper()
	f.cs.Close()
	if out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, export)
	}
	var recs []*evidence.Envelope
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var e evidence.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		recs = append(recs, &e)
	}
	return recs
}

// refusedPermissions are the permission requests records hold as
// refused, as "permission url" lines.
func refusedPermissions(t *testing.T, recs []*evidence.Envelope) []string {
	t.Helper()
	var got []string
	for _, e := range recs {
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

// grantedPermissions are the permission requests records hold as granted,
// as "permission origin url" lines, each with where it is: "#seq" for a
// call's record, "[session_end]" for the record written at the end, and
// " between_calls" when the page asked while no call ran.
func grantedPermissions(recs []*evidence.Envelope) []string {
	var got []string
	for _, e := range recs {
		where := fmt.Sprintf("#%d", e.Seq)
		if e.Kind != "" {
			where = "[" + e.Kind + "]"
		}
		for _, g := range e.PermissionsGranted {
			line := where + " " + g.Permission + " " + g.Origin + " " + g.URL
			if g.Between {
				line += " between_calls"
			}
			got = append(got, line)
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
// in the evidence as refusals; the granted ones as grants
// (permissions_granted), each once, never as refusals.
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
	recs := endedRecords(t, f)
	records := refusedPermissions(t, recs)
	if recorded(records, "geolocation", granted+"/ask") || recorded(records, "clipboard-read", granted+"/ask") {
		t.Errorf("a granted request is recorded as refused: %q", records)
	}
	// Each granted request is in the evidence once, as a grant to the
	// page's origin, in the record of a call (the page asks as it loads,
	// during the calls that load and read it), and nowhere else.
	var grants []string
	for _, g := range grantedPermissions(recs) {
		seq, rest, _ := strings.Cut(g, " ")
		if !strings.HasPrefix(seq, "#") {
			t.Errorf("a grant in a record that is no call's: %s", g)
		}
		grants = append(grants, strings.TrimSuffix(rest, " between_calls"))
	}
	slices.Sort(grants)
	if want := []string{"clipboard-read " + granted + " " + granted + "/ask", "geolocation " + granted + " " + granted + "/ask"}; !slices.Equal(grants, want) {
		t.Errorf("the evidence records as granted %q, want %q", grants, want)
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

// TestPermissionGrantsRecordedWhenTheyHappen: a granted request is
// recorded where a refused one would be. A page granted geolocation asks
// for it when the agent clicks its button: the click's record lists the
// grant. A page that asks from a timer after the navigate call returned:
// the next call's record lists it, marked between_calls. A page that asks
// after the session's last call: the session_end record written when the
// session ends lists it, though nothing was refused. None of them is a
// refusal anywhere, the log verifies, the HTML export shows them, and
// replay runs none of them again.
func TestPermissionGrantsRecordedWhenTheyHappen(t *testing.T) {
	t.Parallel()
	ask := func(beacon string) string {
		return `navigator.geolocation.getCurrentPosition(() => ` + beacon + `, () => ` + beacon + `, {timeout: 300})`
	}
	later := func(name string) string {
		return `<title>` + name + `</title>` + name + `<script>setTimeout(() => { fetch('/asking-` + name + `'); ` +
			ask(`fetch('/answered-`+name+`')`) + `; }, 1500);</script>`
	}
	site, hits := serveLogged(t, map[string]string{
		"/during":  `<title>during</title><button id=ask onclick="` + ask(`document.title = 'answered'`) + `">ask</button>`,
		"/between": later("between"),
		"/last":    later("last"),
	})
	// At level info the daemon logs each grant, once it is kept for the
	// next record: the test waits for those lines.
	f := startWith(t, permissionsManifest("launch", "", fmt.Sprintf("geolocation = [%q]", site)), "--log-level", "info")
	grantLines := func() int {
		return strings.Count(f.stderr.String(), "a page asked for a permission [browser.permissions] grants its origin")
	}

	// During a call: the click's own record (#2).
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/during"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#ask"})

	// Between calls: recorded with the next call, the snapshot (#4).
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/between"})
	if hits.count("/asking-between") != 0 {
		t.Fatal("the page's timer fired during the navigate call; the test needs it later")
	}
	testkit.Eventually(t, func() string {
		if grantLines() < 2 {
			return "the page's request between calls was not granted (or not logged)"
		}
		return ""
	})
	f.mustAllow(t, "e2e.snapshot", nil)

	// After the last call: recorded when the session ends.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/last"})
	if hits.count("/asking-last") != 0 {
		t.Fatal("the page's timer fired during the navigate call; the test needs it later")
	}
	testkit.Eventually(t, func() string {
		if grantLines() < 3 {
			return "the page's request after the last call was not granted (or not logged)"
		}
		return ""
	})
	recs := endedRecords(t, f)

	want := []string{
		"#2 geolocation " + site + " " + site + "/during",
		"#4 geolocation " + site + " " + site + "/between between_calls",
		"[session_end] geolocation " + site + " " + site + "/last between_calls",
	}
	if got := grantedPermissions(recs); !slices.Equal(got, want) {
		t.Errorf("the evidence records as granted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if refused := refusedPermissions(t, recs); len(refused) != 0 {
		t.Errorf("granted requests recorded as refused: %q", refused)
	}
	if len(recs) != 6 || recs[1].Command != "click" || recs[3].Command != "snapshot" {
		t.Fatalf("the session's records are not navigate, click, navigate, snapshot, navigate, session_end: %d records", len(recs))
	}
	end := recs[5]
	if end.Kind != evidence.KindSessionEnd || len(end.Blocked) != 0 || end.Decision.Rule != "recorded after the last call" ||
		!strings.Contains(strings.Join(end.Decision.Reasons, " "), "[browser.permissions] had granted 1 permission request(s)") {
		t.Errorf("the session_end record of a grant alone: kind %q, rule %q, reasons %q, blocked %+v",
			end.Kind, end.Decision.Rule, end.Decision.Reasons, end.Blocked)
	}

	page, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html")
	if code != 0 {
		t.Fatalf("export html: exit %d", code)
	}
	if n := strings.Count(page, "geolocation, granted to "+site+" by [browser.permissions]"); n != 3 {
		t.Errorf("the HTML export shows %d grants, want 3", n)
	}
	// The session_end record refused nothing: RECORDED, never a refusal.
	if n := strings.Count(page, `<span class="verdict recorded">RECORDED</span>`); n != 1 {
		t.Errorf("the HTML export shows %d record(s) as RECORDED, want the session_end record", n)
	}
	if shown, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence); !strings.Contains(shown, "[session_end]  RECORDED egress: recorded after the last call") {
		t.Errorf("evidence show does not show the session_end record of a grant as RECORDED:\n%s", shown)
	}
	// Each grant's log line names its session; the session_end record's
	// says requests were made, not refused.
	for _, line := range strings.Split(f.stderr.String(), "\n") {
		if strings.Contains(line, "a page asked for a permission [browser.permissions] grants its origin") && !strings.Contains(line, `"session":"`+end.Session+`"`) {
			t.Errorf("a grant's log line does not name its session %s: %s", end.Session, line)
		}
	}
	if !strings.Contains(f.stderr.String(), `"msg":"requests made after the session's last call recorded"`) {
		t.Errorf("the daemon did not log the session_end record of a grant as requests made after the last call:\n%s", f.stderr.String())
	}
	out, _ := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", end.Session)
	if !strings.Contains(out, "[session_end]") || !strings.Contains(out, "not a call: 0 request(s) the pages made after the last call, refused by the egress gate, and 1 permission request(s) [browser.permissions] granted them; nothing to replay") {
		t.Errorf("replay does not pass over the session_end record of a grant:\n%s", out)
	}
}
