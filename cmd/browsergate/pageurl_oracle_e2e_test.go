package main

import (
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

// A page's URL, and a document load in the logs and the refusal list, are
// masked for the secrets of the documents that may have chosen the URL,
// never for the site it names: a hostile page that sends a window to the
// secret's site with its guesses in the URL learns nothing from which one
// comes back masked. The site's page itself (its title, its text) is
// masked for the site: these pages echo nothing of the URL.

// guessesAlike fails the test if out masks a guess for the secret, or shows
// one guess as written and not the other.
func guessesAlike(t *testing.T, what, out, wrong, right string) {
	t.Helper()
	for _, masked := range []string{"[secret NET_PASSWORD]", "[part of secret NET_PASSWORD]", `\x5bsecret NET_PASSWORD\x5d`} {
		if strings.Contains(out, masked) {
			t.Fatalf("%s masks a guess for the secret: the page learns which one was right:\n%s", what, out)
		}
	}
	if strings.Contains(out, wrong) != strings.Contains(out, right) {
		t.Fatalf("%s shows one guess as written and not the other:\n%s", what, out)
	}
}

// quietSite serves the secret's site on 127.0.0.1, whose pages show
// nothing of their URL (a page loaded with a query is titled "Site
// results"), and the hostile page on 127.0.0.3. /keep stores the password
// a form posts; /export redirects to /show with it in the URL, and /reveal
// shows it, as a site that knows a value may.
func quietSite(t *testing.T, hostile http.HandlerFunc) (site, evil string) {
	t.Helper()
	var mu sync.Mutex
	kept := ""
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/keep":
			mu.Lock()
			kept = r.PostFormValue("pw")
			mu.Unlock()
			fmt.Fprint(w, `<!doctype html><title>Kept</title><p id=kept>kept</p>`)
		case "/reveal":
			mu.Lock()
			v := kept
			mu.Unlock()
			fmt.Fprintf(w, `<!doctype html><title>Reveal</title><p>Your password: %s</p>`, html.EscapeString(v))
		case "/export":
			mu.Lock()
			v := kept
			mu.Unlock()
			http.Redirect(w, r, "/show?pw="+url.QueryEscape(v), http.StatusFound)
		default:
			title := "Site"
			if r.URL.RawQuery != "" {
				title = "Site results" // it tells a load with a query apart, showing nothing of it
			}
			fmt.Fprint(w, `<!doctype html><title>`+title+`</title><form method=post action=/keep><input type=password name=pw id=pw aria-label=Password><button id=save>Save</button></form>`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	evil, stop2, err := serveOn("127.0.0.3:0", hostile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	return site, evil
}

// saveTheSecretThenGo types the secret into the site's form and saves it
// (the site keeps it), then navigates to the hostile page.
func saveTheSecretThenGo(call func(string, map[string]any) string, site, evil string) {
	call("navigate", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("click", map[string]any{"selector": "#save"})
	call("wait_for", map[string]any{"selector": "#kept"})
	call("navigate", map[string]any{"url": evil + "/"})
}

// untilTab calls list_tabs until its reply holds part.
func untilTab(t *testing.T, call func(string, map[string]any) string, part string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out, part); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no tab at %s:\n%s", part, out)
		}
		out = call("list_tabs", nil)
	}
	return out
}

// TestAPageThatSendsItsTabToTheSecretsSiteReadsItsURLAsWritten: the
// hostile page moves its own tab to the secret's site, its guesses in the
// URL (no secret typed). The state line, list_tabs and the tab's network
// log show both guesses as the page wrote them.
func TestAPageThatSendsItsTabToTheSecretsSiteReadsItsURLAsWritten(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Self-6612"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := quietSite(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><script>
setTimeout(() => { location = '` + siteURL + `/?h=` + wrongGuess + `&h=` + password + `'; }, 300);
</script>`
	}))
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	tabs := untilTab(t, call, `"Site results"`)
	guessesAlike(t, "list_tabs", tabs, "h="+wrongGuess, "h="+password)
	if !strings.Contains(tabs, "h="+password) {
		t.Errorf("list_tabs does not show the URL the page wrote:\n%s", tabs)
	}
	snap := call("snapshot", nil)
	guessesAlike(t, "the state line", snap, "h="+wrongGuess, "h="+password)
	if !strings.Contains(snap, `url="`+site+`/?h=`+wrongGuess+`&h=`+password+`"`) {
		t.Errorf("the state line does not show the URL the page wrote:\n%s", snap)
	}
	reqs := call("network_requests", nil)
	guessesAlike(t, "network_requests", reqs, "h="+wrongGuess, "h="+password)
}

// popupSentToTheSiteWithGuesses runs the opener's attack: the hostile page
// opens a popup on the secret's site (the agent's click on its link), then
// sends that window to the site with its guesses in the URL (?h=), and,
// once the test sets stage to 2, to then (when not ""). It returns when
// list_tabs shows the popup there (tabs).
func popupSentToTheSiteWithGuesses(t *testing.T, d *httpDaemon, password, then string) (cs *mcp.ClientSession, call func(string, map[string]any) string, site, evil string, stage *atomic.Int32, tabs string) {
	t.Helper()
	stage = new(atomic.Int32)
	var siteURL string
	site, evil = quietSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stage" {
			fmt.Fprint(w, stage.Load())
			return
		}
		second := ""
		if then != "" {
			// A second after its cue: a call begun at the cue is under way.
			second = `if (s === 2 && done < 2) { done = 2; setTimeout(() => window.open('` + then + `', 'w'), 1000); }`
		}
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><a id=open href="`+html.EscapeString(siteURL)+`/" target=w>Open</a><script>
let done = 0;
setInterval(async () => {
  const s = Number(await (await fetch('/stage')).text());
  if (s === 1 && done < 1) { done = 1; window.open('`+siteURL+`/?h=`+wrongGuess+`&h=`+password+`', 'w'); }
  `+second+`
}, 100);
</script>`)
	})
	siteURL = site
	cs = d.connect(t, "alice-token")
	call = allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	call("click", map[string]any{"selector": "#open"})
	untilTab(t, call, `"Site"`)
	stage.Store(1)
	tabs = untilTab(t, call, `"Site results"`)
	return cs, call, site, evil, stage, tabs
}

// TestAnOpenerThatSendsItsPopupToTheSecretsSiteReadsNoGuess: the hostile
// page opens a popup on the secret's site (the agent's click), then, on
// cue, sends that window to the site with its guesses in the URL, and
// then to a host the scope refuses, guesses in the URL again. Either the
// popup's page or its opener may have started each load: the URL and the
// refusal come back withheld or as written, never masked for the right
// guess; the popup's log entries, and the refusal that quotes where the
// tab was, alike.
func TestAnOpenerThatSendsItsPopupToTheSecretsSiteReadsNoGuess(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Popup-7723"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	cs, call, site, _, stage, tabs := popupSentToTheSiteWithGuesses(t, d, password, "http://outside.example/?g="+wrongGuess+"&g="+password)
	guessesAlike(t, "list_tabs", tabs, "h="+wrongGuess, "h="+password)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, site)})
	snap := call("snapshot", nil)
	guessesAlike(t, "the popup's state line", snap, "h="+wrongGuess, "h="+password)
	reqs := call("network_requests", nil)
	guessesAlike(t, "the popup's network_requests", reqs, "h="+wrongGuess, "h="+password)

	// The next call is refused (the tab was at a page outside the scope),
	// quoting where it was, and lists the refused load: both alike.
	stage.Store(2)
	either := func(tool string, args map[string]any) string {
		out, _ := callText(t, cs, "e2e."+tool, args)
		return out
	}
	replies := refusalsUntil(t, either, "", 1)
	refusalsAlike(t, replies, password)
	guessesAlike(t, "the replies after the popup was sent away", replies, "g="+wrongGuess, "g="+password)
}

// TestARefusalOfWhereTheCallLeftTheTabIsNoOracle: while the agent waits
// on the popup (on the secret's site), the hostile opener sends it to a
// host the scope refuses, guesses in the URL. The call is refused at its
// final URL, and the tab reset: the refusal quotes where the call left
// the tab as the state line would have shown it, both guesses alike, not
// masked for the site the call was on.
func TestARefusalOfWhereTheCallLeftTheTabIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Url-Guess-Final-3391"
	manifest := strings.Replace(networkLogsManifest, "[browser.commands.wait_for]\n", "[browser.commands.wait_for]\nargs.time_ms = {}\n", 1)
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	cs, call, site, _, stage, _ := popupSentToTheSiteWithGuesses(t, d, password, "http://outside.example/?g="+wrongGuess+"&g="+password)
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, site)})
	stage.Store(2)
	out, refused := callText(t, cs, "e2e.wait_for", map[string]any{"time_ms": 4000})
	if !refused || !strings.Contains(out, "DENIED at final_url") {
		t.Fatalf("the wait was not refused at its final URL:\n%s", out)
	}
	t.Logf("the refusal:\n%s", out)
	guessesAlike(t, "the final URL's refusal", out, "g="+wrongGuess, "g="+password)
}

// TestAURLTheSecretsSiteChoseStaysMaskedWhoeverSentTheTab: the agent
// types the secret into the site's form, which keeps it; the hostile page
// then sends its tab to the site's /export, whose redirect puts the value
// in the URL. The server that named the URL is the site's: the URL is
// never shown in clear, in the state line or the tab's network log.
func TestAURLTheSecretsSiteChoseStaysMaskedWhoeverSentTheTab(t *testing.T) {
	t.Parallel()
	const password = "Url-Site-Chose-8834"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := quietSite(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><p id=ready>ready</p><script>setTimeout(() => { location = '` + siteURL + `/export'; }, 300);</script>`
	}))
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	saveTheSecretThenGo(call, site, evil)
	var out string
	for i := 0; i < 50 && !strings.Contains(out, "/show") && !strings.Contains(out, "may have chosen this URL"); i++ {
		time.Sleep(100 * time.Millisecond)
		out = call("list_tabs", nil)
	}
	out += call("list_tabs", nil) + call("network_requests", nil)
	if strings.Contains(out, password) {
		t.Fatalf("the value the site put in the URL is shown in clear:\n%s", out)
	}
	if !strings.Contains(out, "/show") && !strings.Contains(out, "withheld") {
		t.Fatalf("the tab never reached the site's redirect:\n%s", out)
	}
}

// TestASnapshotMasksEachFrameForItsOwnDocument: the agent saves the
// secret on the site, then opens the hostile page, which prints its
// guesses and embeds two frames of the site: one that shows the saved
// value, one whose URL carries the guesses. The snapshot masks the
// value in the site's frame, and shows the hostile page's own text and
// the frame's URL alike for both guesses.
func TestASnapshotMasksEachFrameForItsOwnDocument(t *testing.T) {
	t.Parallel()
	const password = "Snap-Frames-Own-4471"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := quietSite(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title><p>guesses g=` + wrongGuess + ` g=` + password + `</p>
<iframe src="` + siteURL + `/reveal"></iframe><iframe src="` + siteURL + `/?h=` + wrongGuess + `&h=` + password + `"></iframe>`
	}))
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	saveTheSecretThenGo(call, site, evil)
	var snap string
	for i := 0; i < 50 && !strings.Contains(snap, "Your password"); i++ {
		time.Sleep(100 * time.Millisecond)
		snap = call("snapshot", nil)
	}
	if strings.Contains(snap, password) && !strings.Contains(snap, "g="+password) {
		t.Fatalf("the snapshot shows the site's frame's value in clear:\n%s", snap)
	}
	for _, l := range strings.Split(snap, "\n") {
		switch {
		case strings.Contains(l, "Your password"):
			if !strings.Contains(l, "[secret NET_PASSWORD]") || strings.Contains(l, password) {
				t.Errorf("the site's frame's value is not masked: %s", l)
			}
		case strings.Contains(l, "guesses"):
			guessesAlike(t, "the hostile page's own text", l, "g="+wrongGuess, "g="+password)
		case strings.Contains(l, "h="):
			guessesAlike(t, "a frame's mark", l, "h="+wrongGuess, "h="+password)
		}
	}
	if !strings.Contains(snap, "Your password") || !strings.Contains(snap, "guesses") {
		t.Fatalf("the snapshot does not show the page and the site's frame:\n%s", snap)
	}
}
