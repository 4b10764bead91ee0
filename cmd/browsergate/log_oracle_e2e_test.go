package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The log replies (network_requests, network_log, network_request,
// console_messages) are no oracle: a hostile page in scope, off the
// secret's domains, sends or logs its guesses of a secret, the wrong one
// and the right one, in ways that put the secret's site near them; the
// agent's replies show both alike.

const wrongGuess = "Aa1-Bb2_Cc3-Dd4-Ee5"

// guessSites serves the secret's site on 127.0.0.1 (it shows ?g= in its
// page, as a search or a 404 page does, and /go sends a visitor who is
// not signed in to its sign-in page with the way back in ?next=) and the
// hostile page on 127.0.0.3.
func guessSites(t *testing.T, hostile http.HandlerFunc) (site, evil string) {
	t.Helper()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Site</title><input type=password id=pw aria-label=Password><p>No results for %s</p>`, html.EscapeString(r.URL.Query().Get("g")))
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

// servePage serves one page.
func servePage(body func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body()) }
}

// bothAsWritten fails the test unless out shows both guesses as written.
func bothAsWritten(t *testing.T, what, out, wrong, right string) {
	t.Helper()
	if !strings.Contains(out, wrong) {
		t.Fatalf("%s does not show the wrong guess:\n%s", what, out)
	}
	if !strings.Contains(out, right) || strings.Contains(out, "[secret NET_PASSWORD]") || strings.Contains(out, "[part of secret NET_PASSWORD]") {
		t.Errorf("%s shows the wrong guess as written but masks the right one: the page learns the secret:\n%s", what, out)
	}
}

// TestAFramesLoadOfTheSecretsSiteIsNoOracle: the hostile page embeds two
// frames of the secret's site, each with a guess in its URL (no secret
// typed). The browser names a document request's document by the URL it
// loads; the log masks it for the page that started it, the frame's
// parent, so network_requests and network_log show both guesses as
// written.
func TestAFramesLoadOfTheSecretsSiteIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev4-Or4cle-7781"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var site string
	site, evil := guessSites(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title>
<iframe src="` + site + `/?g=` + wrongGuess + `"></iframe>
<iframe src="` + site + `/?g=` + password + `"></iframe>
<script>let n = 0; for (const f of document.querySelectorAll('iframe')) f.onload = () => { if (++n == 2) { const p = document.createElement('p'); p.id = 'done'; document.body.append(p); } };</script>`
	}))
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	call("wait_for", map[string]any{"selector": "#done"})
	for _, cmd := range []string{"network_requests", "network_log"} {
		bothAsWritten(t, cmd, call(cmd, nil), "g="+wrongGuess, "g="+password)
	}
}

// TestAResponseOfTheSecretsSiteIsNoOracle: the hostile page fetches
// (no-cors) its guesses from a page of the secret's site that redirects
// to its sign-in page with the way back, guess included, in ?next=. What
// the site answered a page off its domains may hold the secret, so
// network_request shows neither response's headers nor body: the two
// replies read the same but for the guess in the request's URL.
func TestAResponseOfTheSecretsSiteIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev4-Resp0nse-5519"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var site string
	site, evil := guessSites(t, servePage(func() string {
		return `<!doctype html><title>Hostile</title>
<script>
Promise.all(['` + wrongGuess + `', '` + password + `'].map(g => fetch('` + site + `/go?g=' + g, {mode: 'no-cors'}).then(r => r.blob()).catch(() => 0)))
  .then(() => { const p = document.createElement('p'); p.id = 'done'; document.body.append(p); });
</script>`
	}))
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	call("wait_for", map[string]any{"selector": "#done"})
	list := call("network_requests", nil)
	bothAsWritten(t, "network_requests", list, "go?g="+wrongGuess, "go?g="+password)
	wrong, right := requestID(list, "go?g="+wrongGuess), requestID(list, "go?g="+password)
	w := call("network_request", map[string]any{"id": wrong})
	r := call("network_request", map[string]any{"id": right})
	t.Logf("wrong:\n%s\nright:\n%s", w, r)
	if !strings.Contains(w, " 302") {
		t.Fatalf("the wrong guess's request is not shown as the site's redirect:\n%s", w)
	}
	// The replies but for the fence's nonce and the request headers, which
	// the browser reports in one of two sets (with or without its raw ones)
	// as its events come.
	same := func(out, id, guess string) string {
		var kept []string
		inRequest := false
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "  ") {
				inRequest = line == "request headers:"
			}
			if !inRequest || !strings.HasPrefix(line, "  ") {
				kept = append(kept, line)
			}
		}
		return fence.ReplaceAllString(strings.NewReplacer(id+" ", "ID ", guess, "GUESS").Replace(strings.Join(kept, "\n")), "$1")
	}
	if same(w, wrong, wrongGuess) != same(r, right, password) {
		t.Errorf("network_request reads otherwise for the right guess than for the wrong one: the page learns the secret")
	}
	if !strings.Contains(r, "response headers and body not shown") || strings.Contains(r, "login?next") {
		t.Errorf("network_request shows what the secret's site answered the hostile page:\n%s", r)
	}
}

// guessingPage is a hostile page that logs its guesses and fetches them
// from itself as it loads, then shows #done.
func guessingPage(password string) http.HandlerFunc {
	return servePage(func() string {
		return `<!doctype html><title>Hostile</title>
<script>
Promise.all(['` + wrongGuess + `', '` + password + `'].map(g => { console.log('guess ' + g); return fetch('/?g=' + g).catch(() => 0); }))
  .then(() => { const p = document.createElement('p'); p.id = 'done'; document.body.append(p); });
</script>`
	})
}

// logsShowBothGuesses fails the test unless console_messages and
// network_requests show guessingPage's guesses as written.
func logsShowBothGuesses(t *testing.T, call func(string, map[string]any) string, password string) {
	t.Helper()
	bothAsWritten(t, "console_messages", call("console_messages", nil), "guess "+wrongGuess, "guess "+password)
	bothAsWritten(t, "network_requests", call("network_requests", nil), "g="+wrongGuess, "g="+password)
}

// guessSitesOnCue serves guessSites with a hostile page that waits for
// the test to set goAhead, then runs guess (a script, awaited) and says
// so on done.
func guessSitesOnCue(t *testing.T, guess string) (site, evil string, goAhead *atomic.Bool, done <-chan struct{}) {
	t.Helper()
	goAhead = new(atomic.Bool)
	ran := make(chan struct{}, 1)
	site, evil = guessSites(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/poll":
			fmt.Fprint(w, goAhead.Load())
		case "/done":
			select {
			case ran <- struct{}{}:
			default:
			}
		default:
			fmt.Fprint(w, `<!doctype html><title>Hostile</title>
<script>
const poll = setInterval(async () => {
  if (await (await fetch('/poll')).text() !== 'true') return;
  clearInterval(poll);
  `+guess+`
  fetch('/done');
}, 50);
</script>`)
		}
	})
	return site, evil, goAhead, ran
}

// awaitCue waits for done, or fails the test with why.
func awaitCue(t *testing.T, done <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal(why)
	}
}

// fence matches the nonce of a reply's page-content fence.
var fence = regexp.MustCompile(`(PAGE CONTENT) [0-9a-f]+`)

// TestLogEntriesJustAfterLeavingTheSiteAreNoOracle: the agent types the
// secret on its site, then navigates to a hostile page of the scope,
// which logs its guesses and fetches them from itself as it loads, while
// the binding still holds beacons to the secret's domains. An entry is
// masked for the page that made it, which never had the value:
// console_messages and network_requests show both guesses as written.
func TestLogEntriesJustAfterLeavingTheSiteAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev4-Gr4ce-3307"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, evil := guessSites(t, guessingPage(password))
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("navigate", map[string]any{"url": evil + "/"})
	call("wait_for", map[string]any{"selector": "#done"})
	logsShowBothGuesses(t, call, password)
}

// TestAnotherTabsConsoleIsNoOracle: the hostile page in the session's
// first tab logs its guesses while the agent works on the secret's site
// in another tab (no secret typed). Each tab's entries are masked for
// that tab's own document, not the session's current tab: back on the
// hostile tab, console_messages shows both guesses as written.
func TestAnotherTabsConsoleIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev4-T4bs-8842"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, evil, goAhead, logged := guessSitesOnCue(t, `for (const g of ['`+wrongGuess+`', '`+password+`']) console.log('guess ' + g);`)
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": evil + "/"})
	call("new_tab", map[string]any{"url": site + "/"})
	goAhead.Store(true)
	awaitCue(t, logged, "the hostile tab did not log its guesses")
	call("switch_tab", map[string]any{"tab": sessionTab(t, cs, "127.0.0.3")})
	bothAsWritten(t, "console_messages", call("console_messages", nil), "guess "+wrongGuess, "guess "+password)
}

// TestLogReadOnTheSecretsSiteIsNoOracle: guesses a hostile page logged
// and sent, read after the agent has gone to the secret's site (no
// secret typed), come back as written: an entry is masked for the page
// it was logged on, not for the pages the call reads.
func TestLogReadOnTheSecretsSiteIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Rev4-Re4d-1170"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	site, evil := guessSites(t, guessingPage(password))
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	call("wait_for", map[string]any{"selector": "#done"})
	call("navigate", map[string]any{"url": site + "/"})
	logsShowBothGuesses(t, call, password)
}
