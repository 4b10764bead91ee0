package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Where else a page's URL or a document's text reaches the agent, and how
// each is shown no guess masked and no value the site chose in clear:
// fragments, popups a frame opened, a redirect chain through another
// server, a history entry gone back to, the replies of switch_tab and
// close_tab, a refusal naming the popups it closed, a snapshot's frames,
// dialogs of background tabs and of frames with no host of their own, a
// noopener popup, the URL a navigate was redirected to (see
// pageurl_oracle_e2e_test.go for the helpers and the first cases).

// TestAURLWithAFragmentThePageChoseIsNoOracle: the hostile page sends its tab
// to the secret's site with its guesses in the URL and a fragment: the
// URL (which the request and the commit name without the fragment) is
// still known to be the hostile page's choice, and shown as written.
func TestAURLWithAFragmentThePageChoseIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Frag-4471"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := quietSite(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><script>
setTimeout(() => { location = '` + siteURL + `/?h=` + wrongGuess + `&h=` + password + `#x'; }, 300);
</script>`
	}))
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	tabs := untilTab(t, call, `"Site results"`)
	snap := call("snapshot", nil)
	t.Logf("list_tabs:\n%s", tabs)
	t.Logf("snapshot head:\n%s", firstLines(snap, 3))
	guessesAlike(t, "list_tabs", tabs, "h="+wrongGuess, "h="+password)
	guessesAlike(t, "the state line", snap, "h="+wrongGuess, "h="+password)
}

// firstLines is s's first n lines.
func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// TestAPopupOpenedByAFrameIsInItsOpenersGroup: a frame of the hostile page
// opens the popup (its openerId names the frame): the popup is in the
// hostile page's window group, and what the page sends it is no oracle.
func TestAPopupOpenedByAFrameIsInItsOpenersGroup(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-FramePopup-5582"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var stage atomic.Int32
	var siteURL string
	site, evil := quietSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stage":
			fmt.Fprint(w, stage.Load())
		case "/frame":
			fmt.Fprint(w, `<!doctype html><title>F</title><a href="`+html.EscapeString(siteURL)+`/" target=w>Open</a><script>
let done = 0;
setInterval(async () => {
  const s = Number(await (await fetch('/stage')).text());
  if (s === 1 && done < 1) { done = 1; window.open('`+siteURL+`/?h=`+wrongGuess+`&h=`+password+`', 'w'); }
  if (s === 2 && done < 2) { done = 2; window.open('http://outside.example/?g=`+wrongGuess+`&g=`+password+`', 'w'); }
}, 100);
</script>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Hostile</title><iframe src="/frame" width=400 height=200></iframe>`)
		}
	})
	siteURL = site
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	snap0 := call("snapshot", nil)
	call("click", map[string]any{"ref": findRef(snap0, "Open")})
	untilTab(t, call, `"Site"`)

	stage.Store(1)
	tabs := untilTab(t, call, `"Site results"`)
	t.Logf("list_tabs:\n%s", tabs)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, site)})
	snap := call("snapshot", nil)
	t.Logf("popup snapshot head:\n%s", firstLines(snap, 3))
	reqs := call("network_requests", nil)
	t.Logf("popup network_requests:\n%s", reqs)
	failed := false
	for what, out := range map[string]string{"list_tabs": tabs, "state line": snap, "network_requests": reqs} {
		if strings.Contains(out, "[secret NET_PASSWORD]") || strings.Contains(out, "[part of secret NET_PASSWORD]") {
			t.Errorf("ORACLE: %s masks the right guess", what)
			failed = true
		}
	}
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, evil)})
	stage.Store(2)
	either := func(tool string, args map[string]any) string {
		out, _ := callText(t, cs, "e2e."+tool, args)
		return out
	}
	replies := refusalsUntil(t, either, "", 1)
	t.Logf("refusal replies:\n%s", replies)
	if strings.Contains(replies, "[secret NET_PASSWORD]") || strings.Contains(replies, "[part of secret NET_PASSWORD]") {
		t.Errorf("ORACLE: the refusal masks the right guess")
		failed = true
	}
	_ = failed
}

// TestAURLTheSiteChoseFromAFrameIsNotShownInClear: the secret's site,
// embedded as a frame of the hostile page, opens a popup onto a neutral
// page, then sends it to a URL with the value it keeps in the query: the
// frame is in the popup's window group, so that URL is never shown in
// clear.
func TestAURLTheSiteChoseFromAFrameIsNotShownInClear(t *testing.T) {
	t.Parallel()
	const password = "Url-Leak-FrameOpener-9913"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var stage atomic.Int32
	var mu sync.Mutex
	kept := ""
	var evilURL string
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/keep":
			mu.Lock()
			kept = r.PostFormValue("pw")
			mu.Unlock()
			fmt.Fprint(w, `<!doctype html><title>Kept</title><p id=kept>kept</p>`)
		case "/stage":
			fmt.Fprint(w, stage.Load())
		case "/kept":
			mu.Lock()
			fmt.Fprint(w, kept)
			mu.Unlock()
		case "/widget":
			fmt.Fprint(w, `<!doctype html><title>Widget</title><a href="`+html.EscapeString(evilURL)+`/landing" target=w>Open</a><script>
let done = 0;
setInterval(async () => {
  const s = Number(await (await fetch('/stage')).text());
  if (s === 1 && done < 1) { done = 1; const v = await (await fetch('/kept')).text(); window.open('/show?pw=' + encodeURIComponent(v), 'w'); }
}, 100);
</script>`)
		case "/show":
			fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Site</title><form method=post action=/keep><input type=password name=pw id=pw aria-label=Password><button id=save>Save</button></form>`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	evil, stop2, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/landing" {
			fmt.Fprint(w, `<!doctype html><title>Landing</title><p>landing</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><iframe src="`+html.EscapeString(site)+`/widget" width=400 height=200></iframe>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	evilURL = evil
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("click", map[string]any{"selector": "#save"})
	call("wait_for", map[string]any{"selector": "#kept"})
	call("navigate", map[string]any{"url": evil + "/"})
	snap0 := call("snapshot", nil)
	t.Logf("hostile snapshot:\n%s", snap0)
	call("click", map[string]any{"ref": findRef(snap0, "Open")})
	untilTab(t, call, `"Landing"`)
	stage.Store(1)
	tabs := untilTab(t, call, `"Shown"`)
	t.Logf("list_tabs:\n%s", tabs)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, site)})
	snap := call("snapshot", nil)
	t.Logf("popup state line:\n%s", snap)
	reqs := call("network_requests", nil)
	t.Logf("popup network_requests:\n%s", reqs)
	for what, out := range map[string]string{"list_tabs": tabs, "state line": snap, "network_requests": reqs} {
		if strings.Contains(out, password) {
			t.Errorf("LEAK: %s shows the secret in clear", what)
		}
	}
}

// TestAClosedPopupsURLInTheDenialIsNoOracle: the hostile opener sends its
// popup to the secret's site with its guesses, then off the scope, while
// the agent works on the site in another tab: the refusal that names the
// popups it closed names that one as a popup, its URL never masked for
// the right guess.
func TestAClosedPopupsURLInTheDenialIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Denial-3317"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	cs, call, site, _, stage, _ := popupSentToTheSiteWithGuesses(t, d, password, "http://outside.example/?g=x")
	call("new_tab", map[string]any{"url": site + "/"}) // the agent works on the site
	stage.Store(2)
	var replies string
	for i := 0; i < 400 && !strings.Contains(replies, "its own navigation was refused"); i++ {
		time.Sleep(10 * time.Millisecond)
		out, _ := callText(t, cs, "e2e.list_tabs", nil)
		replies += out
	}
	t.Logf("replies:\n%s", replies)
	guessesAlike(t, "the denial", replies, "h="+wrongGuess, "h="+password)
}

// TestSwitchAndCloseTabRepliesAreNoOracle: the hostile opener sends its
// popup to the secret's site with its guesses: switch_tab's and
// close_tab's replies name the tab's URL as list_tabs does.
func TestSwitchAndCloseTabRepliesAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Switch-2281"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	cs, call, site, evil, _, tabs := popupSentToTheSiteWithGuesses(t, d, password, "")
	t.Logf("list_tabs:\n%s", tabs)
	popup := sessionTab(t, cs, site)
	sw := call("switch_tab", map[string]any{"tab": popup})
	t.Logf("switch_tab:\n%s", sw)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, evil)})
	call("new_tab", map[string]any{"url": site + "/"}) // the agent on the site
	cl := call("close_tab", map[string]any{"tab": popup})
	t.Logf("close_tab:\n%s", cl)
	guessesAlike(t, "switch_tab", sw, "h="+wrongGuess, "h="+password)
	guessesAlike(t, "close_tab", cl, "h="+wrongGuess, "h="+password)
}

// TestARedirectChainThroughAnotherServerIsCreditedToTheSite: the hostile
// page sends the tab to the site's /export, which redirects to a bouncer
// on 127.0.0.4 (an identity provider, an open redirect) with a return URL
// carrying the value the site keeps; the bouncer redirects back to it.
// The last URL is credited to every server of the chain, the site among
// them: never shown in clear.
func TestARedirectChainThroughAnotherServerIsCreditedToTheSite(t *testing.T) {
	t.Parallel()
	const password = "Url-Leak-Chain-6604"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var mu sync.Mutex
	kept := ""
	bouncer, stop0, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop0)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/keep":
			mu.Lock()
			kept = r.PostFormValue("pw")
			mu.Unlock()
			fmt.Fprint(w, `<!doctype html><title>Kept</title><p id=kept>kept</p>`)
		case "/export":
			mu.Lock()
			v := kept
			mu.Unlock()
			back := "http://" + r.Host + "/show?pw=" + url.QueryEscape(v)
			http.Redirect(w, r, bouncer+"/bounce?to="+url.QueryEscape(back), http.StatusFound)
		case "/show":
			fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Site</title><form method=post action=/keep><input type=password name=pw id=pw aria-label=Password><button id=save>Save</button></form>`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	evil, stop2, err := serveOn("127.0.0.3:0", servePage(func() string {
		return `<!doctype html><title>Hostile</title><p id=ready>ready</p><script>setTimeout(() => { location = '` + site + `/export'; }, 2600);</script>`
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("click", map[string]any{"selector": "#save"})
	call("wait_for", map[string]any{"selector": "#kept"})
	call("navigate", map[string]any{"url": evil + "/"})
	tabs := untilTab(t, call, `"Shown"`)
	snap := call("snapshot", nil)
	reqs := call("network_requests", nil)
	t.Logf("list_tabs:\n%s\nsnapshot:\n%s\nnetwork_requests:\n%s", tabs, snap, reqs)
	for what, out := range map[string]string{"list_tabs": tabs, "state line": snap, "network_requests": reqs} {
		if strings.Contains(out, password) {
			t.Errorf("LEAK: %s shows the secret in clear", what)
		}
	}
}

// TestABackgroundTabsDialogIsNoOracle: a page in a background tab alerts
// its guesses while the agent works on the secret's site: the dialog is
// masked for the page that opened it, not for the tab the agent is on.
func TestABackgroundTabsDialogIsNoOracle(t *testing.T) {
	t.Parallel()
	backgroundDialogIsNoOracle(t, "Dialog-Guess-7719", "", "alert")
}

// backgroundDialogIsNoOracle opens the hostile page (its markup before
// the script: markup) and the secret's site in a new tab; the hostile
// page, in the background, then calls alert (opener: the expression whose
// alert it calls) with its guesses. The replies, on the site's tab and
// back on the hostile page's, report the dialog with both guesses alike.
func backgroundDialogIsNoOracle(t *testing.T, password, markup, opener string) {
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	cs, call, _, evil := backgroundHostile(t, d, markup, opener+`('g=`+wrongGuess+` g=`+password+`');`, nil)
	time.Sleep(1500 * time.Millisecond)
	var out string
	out += call("snapshot", nil)
	out += call("switch_tab", map[string]any{"tab": sessionTab(t, cs, evil)})
	out += call("snapshot", nil)
	if !strings.Contains(out, "alert") {
		t.Fatalf("no reply reports the dialog:\n%s", out)
	}
	guessesAlike(t, "the dialog note", out, "g="+wrongGuess, "g="+password)
}

// backgroundHostile serves the secret's site (quietSite) and a hostile
// page (markup, then a script that runs onCue once, on the test's cue;
// routes, when given, serves its other paths), opens the hostile page and
// then the site in a new tab, and gives the cue: the hostile page acts in
// the background while the agent is on the site.
func backgroundHostile(t *testing.T, d *httpDaemon, markup, onCue string, routes http.HandlerFunc) (cs *mcp.ClientSession, call func(string, map[string]any) string, site, evil string) {
	t.Helper()
	var cue atomic.Bool
	site, evil = quietSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/stage":
			fmt.Fprint(w, cue.Load())
		case r.URL.Path != "/" && routes != nil:
			routes(w, r)
		default:
			fmt.Fprint(w, `<!doctype html><title>Hostile</title>`+markup+`<script>
let done = false;
setInterval(async () => {
  if (done || (await (await fetch('/stage')).text()) !== 'true') return;
  done = true;
  `+onCue+`
}, 100);
</script>`)
		}
	})
	cs = d.connect(t, "alice-token")
	call = allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	call("new_tab", map[string]any{"url": site + "/"})
	cue.Store(true)
	return cs, call, site, evil
}

// TestGoingBackToAURLTheSiteChoseKeepsItMasked: the site's redirect put
// the value it keeps in the URL (/show?pw=…); the agent goes on to another
// page, which goes back: the load back keeps the site among the choosers
// of that URL, so it is never shown in clear.
func TestGoingBackToAURLTheSiteChoseKeepsItMasked(t *testing.T) {
	t.Parallel()
	const password = "Url-Leak-Back-5140"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	// The site knows the value (the user's account there): its /export
	// redirects to /show with it in the URL. No secret is typed.
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/export":
			http.Redirect(w, r, "/show?pw="+url.QueryEscape(password), http.StatusFound)
		default:
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	evil, stop2, err := serveOn("127.0.0.3:0", servePage(func() string {
		return `<!doctype html><title>Elsewhere</title><p id=ready>ready</p><script>setTimeout(() => history.back(), 2500);</script>`
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	first := call("navigate", map[string]any{"url": site + "/export"})
	call("navigate", map[string]any{"url": evil + "/"})
	// The page goes back after gate.LeftGrace (go_back, not in this
	// manifest, would do the same).
	tabs := untilTab(t, call, "Shown")
	back := call("snapshot", nil)
	t.Logf("at /show first:\n%s\nafter going back:\n%s\nlist_tabs:\n%s", first, back, tabs)
	for what, out := range map[string]string{"state line": back, "list_tabs": tabs} {
		if strings.Contains(out, password) {
			t.Errorf("LEAK: %s shows the secret in clear", what)
		}
	}
}

// TestASnapshotsFrameHeaderIsNoOracle: the hostile page embeds the
// secret's site with its guesses in the frame's URL: the snapshot's mark
// of the frame ([frame "URL":]) shows both alike.
func TestASnapshotsFrameHeaderIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Frame-Guess-3092"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := quietSite(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><iframe src="`+html.EscapeString(siteURL)+`/?h=`+wrongGuess+`&amp;h=`+password+`"></iframe>`)
	})
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	var snap string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(snap, "[frame"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot never shows the frame:\n%s", snap)
		}
		snap = call("snapshot", nil)
	}
	guessesAlike(t, "the snapshot's frame header", snap, "h="+wrongGuess, "h="+password)
}

// TestCloseTabReplyKeepsTheSitesURLMasked: a URL the secret's site put
// its value in, closed from another tab, is never quoted in clear by
// close_tab's reply.
func TestCloseTabReplyKeepsTheSitesURLMasked(t *testing.T) {
	t.Parallel()
	const password = "Url-Leak-Close-8826"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/export" {
			http.Redirect(w, r, "/show?pw="+url.QueryEscape(password), http.StatusFound)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	_, evil := quietSite(t, servePage(func() string { return `<!doctype html><title>Elsewhere</title><p>x</p>` }))
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	first := call("new_tab", map[string]any{"url": site + "/export"})
	tab := sessionTab(t, cs, site)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, evil)})
	cl := call("close_tab", map[string]any{"tab": tab})
	t.Logf("first:\n%s\nclose_tab:\n%s", first, cl)
	if strings.Contains(cl, password) {
		t.Errorf("LEAK: close_tab shows the secret in clear")
	}
}

// twoSites serves the secret's site on 127.0.0.1 and another host on
// 127.0.0.3, each from its own handler.
func twoSites(t *testing.T, site, other http.HandlerFunc) (string, string) {
	t.Helper()
	s, stop, err := serveOn("127.0.0.1:0", site)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	o, stop2, err := serveOn("127.0.0.3:0", other)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	return s, o
}

// TestASitesFrameShowsWhatTheSitePutInItsURLMasked: the secret's site
// embeds a frame of another host with the value in the frame's URL (a
// widget, a support chat), which shows it: the frame's text is masked for
// the site, which chose its URL.
func TestASitesFrameShowsWhatTheSitePutInItsURLMasked(t *testing.T) {
	t.Parallel()
	const password = "Snap-Widget-Leak-5521"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var otherURL string
	site, other := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>Account page</p><iframe src="`+otherURL+`/widget?user=`+url.QueryEscape(password)+`"></iframe>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Widget</title><p>Hello %s</p>`, html.EscapeString(r.URL.Query().Get("user")))
	})
	otherURL = other
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": site + "/"})
	var snap string
	for i := 0; i < 50 && !strings.Contains(snap, "Hello"); i++ {
		time.Sleep(100 * time.Millisecond)
		snap = call("snapshot", nil)
	}
	t.Logf("snapshot:\n%s", snap)
	if strings.Contains(snap, password) {
		t.Fatalf("the snapshot shows the value the site put in its frame's URL in clear")
	}
}

// TestATableRowWithTheSitesFrameIsNoOracle: the hostile page puts its
// guesses in a table row whose other cell holds a frame of the secret's
// site: the row, text of two documents not masked for the same secrets,
// is withheld, never masked for the right guess.
func TestATableRowWithTheSitesFrameIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Snap-Row-Oracle-6632"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>Site text</p>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><p>intro</p>
<table><tr><th>Guess</th><th>Frame</th></tr>
<tr><td>g=`+wrongGuess+` g=`+password+`</td><td><iframe src="`+siteURL+`/"></iframe></td></tr></table>`)
	})
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	var snap string
	for i := 0; i < 50 && !strings.Contains(snap, "Site text"); i++ {
		time.Sleep(100 * time.Millisecond)
		snap = call("snapshot", nil)
	}
	t.Logf("snapshot:\n%s", snap)
	guessesAlike(t, "the hostile page's row", snap, "g="+wrongGuess, "g="+password)
}

// TestANoopenerPopupsURLIsNoOracle: a link with target=_blank opens its
// popup without an opener, at the secret's site with the hostile page's
// guesses in the URL: the popup's first load is the opener's, and its URL
// is shown as written.
func TestANoopenerPopupsURLIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Url-Noopener-7743"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		title := "Site"
		if r.URL.RawQuery != "" {
			title = "Site results"
		}
		fmt.Fprint(w, `<!doctype html><title>`+title+`</title><p>Site text</p>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><a id=open target=_blank href="`+html.EscapeString(siteURL+`/?h=`+wrongGuess+`&h=`+password)+`">Open</a>`)
	})
	siteURL = site
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	call("click", map[string]any{"selector": "#open"})
	tabs := untilTab(t, call, `"Site results"`)
	t.Logf("list_tabs:\n%s", tabs)
	guessesAlike(t, "list_tabs", tabs, "h="+wrongGuess, "h="+password)
	out, _ := callText(t, cs, "e2e.switch_tab", map[string]any{"tab": sessionTab(t, cs, "?h=")})
	t.Logf("switch_tab:\n%s", out)
	guessesAlike(t, "switch_tab", out, "h="+wrongGuess, "h="+password)
	reqs := call("network_requests", nil)
	t.Logf("network_requests:\n%s", reqs)
	guessesAlike(t, "the popup's network_requests", reqs, "h="+wrongGuess, "h="+password)
}

// TestARedirectedNavigateReplyIsNoOracle: the agent navigates to the
// hostile host, whose server redirects to the secret's site with its
// guesses in the URL: navigate's "and was redirected to …" and its
// structured final_url show the URL as the state line does (as written),
// from a fresh tab and from the hostile page.
func TestARedirectedNavigateReplyIsNoOracle(t *testing.T) {
	t.Run("FromBlank", func(t *testing.T) { redirectedNavigate(t, false) })
	t.Run("FromHostilePage", func(t *testing.T) { redirectedNavigate(t, true) })
}

func redirectedNavigate(t *testing.T, fromPage bool) {
	t.Parallel()
	const password = "Url-Landed-Oracle-8854"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>Site text</p>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/go" {
			fmt.Fprint(w, `<!doctype html><title>Hostile</title><p>hostile</p>`)
			return
		}
		http.Redirect(w, r, siteURL+`/?h=`+wrongGuess+`&h=`+password, http.StatusFound)
	})
	siteURL = site
	cs := d.connect(t, "alice-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if fromPage {
		allowedCaller(t, cs)("navigate", map[string]any{"url": evil + "/"})
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "e2e.navigate", Arguments: map[string]any{"url": evil + "/go"}})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	raw, _ := json.Marshal(res.StructuredContent)
	t.Logf("navigate text:\n%s\nstructured:\n%s", text, raw)
	guessesAlike(t, "navigate's text", text, "h="+wrongGuess, "h="+password)
	guessesAlike(t, "navigate's structured content", string(raw), "h="+wrongGuess, "h="+password)
}

// TestABackgroundBlankFramesDialogIsNoOracle: a page in a background tab
// alerts its guesses from an about:blank frame it made: the dialog is
// masked for the page that made the frame, not for the tab the agent is
// on.
func TestABackgroundBlankFramesDialogIsNoOracle(t *testing.T) {
	t.Parallel()
	backgroundDialogIsNoOracle(t, "Dialog-Blank-Guess-3318", "<iframe id=f></iframe>", "document.getElementById('f').contentWindow.alert")
}
