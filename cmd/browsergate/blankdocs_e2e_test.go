package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestABlankFramesGuessesAreNoOracle: the hostile page writes its guesses
// into an about:blank frame of its own and embeds a frame of the secret's
// site: the snapshot shows the blank frame's text (the hostile page's) as
// written, never masked for the right guess.
func TestABlankFramesGuessesAreNoOracle(t *testing.T) {
	t.Parallel()
	const password = "R9-Blank-Frame-Oracle-7731"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, evil := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>Site text</p>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><p>intro</p><iframe id=b></iframe><iframe src="`+siteURL+`/"></iframe>
<script>const d = document.getElementById('b').contentDocument; d.body.innerHTML = '<p>g=`+wrongGuess+` g=`+password+` done</p>';</script>`)
	})
	siteURL = site
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	var snap string
	for deadline := time.Now().Add(30 * time.Second); !(strings.Contains(snap, "done") && strings.Contains(snap, "Site text")); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no frames:\n%s", snap)
		}
		snap = call("snapshot", nil)
	}
	t.Logf("snapshot:\n%s", snap)
	guessesAlike(t, "the hostile page's blank frame", snap, "g="+wrongGuess, "g="+password)
}

// TestAURLTheSitesBlankPopupChoseIsNeverShownInClear: a page of the
// secret's site opens an about:blank popup (window.open(”)) and writes a
// script into it, which runs as the site; the agent then takes its tab
// elsewhere (or closes it), and 3.5 s later the popup's script sends it to
// the site's /show?pw=<value>. The popup's document runs as the site's
// origin, so the load is credited to the site: the value is never shown
// in clear.
func TestAURLTheSitesBlankPopupChoseIsNeverShownInClear(t *testing.T) {
	t.Parallel()
	for _, leave := range []string{"navigate", "close_tab"} {
		t.Run(leave, func(t *testing.T) {
			t.Parallel()
			blankPopupOfTheSite(t, "Blank-Popup-"+leave+"-8817", leave)
		})
	}
}

// blankPopupOfTheSite runs TestAURLTheSitesBlankPopupChoseIsNeverShownInClear,
// the agent leaving the site's page by leave (navigate, close_tab).
func blankPopupOfTheSite(t *testing.T, password, leave string) {
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL string
	site, other := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/show" {
			fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
			return
		}
		target := siteURL + "/show?pw=" + url.QueryEscape(password)
		fmt.Fprint(w, `<!doctype html><title>Site</title><button id=open onclick="go()">Open</button><script>
function go() {
  const p = window.open('');
  p.document.write('<title>Blank</title><script>setTimeout(function(){ location = '+JSON.stringify(`+"`"+target+"`"+`)+'; }, 3500)<\/script>');
  p.document.close();
}
</script>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>other</p>`)
	})
	siteURL = site
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	if leave == "navigate" {
		call("navigate", map[string]any{"url": site + "/"})
		call("click", map[string]any{"selector": "#open"})
		call("navigate", map[string]any{"url": other + "/"})
	} else {
		call("new_tab", map[string]any{"url": site + "/"})
		call("click", map[string]any{"selector": "#open"})
		call("close_tab", map[string]any{"tab": sessionTab(t, cs, site+"/")})
	}
	time.Sleep(6 * time.Second) // no call while the popup moves
	var replies string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(replies, "/show") && !strings.Contains(replies, "its own navigation was refused"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reply names the popup's load of /show:\n%s", replies)
		}
		out, _ := callText(t, cs, "e2e.list_tabs", nil)
		replies += out
	}
	if strings.Contains(replies, password) {
		t.Fatalf("the value the site's popup put in its URL is shown in clear:\n%s", replies)
	}
}
