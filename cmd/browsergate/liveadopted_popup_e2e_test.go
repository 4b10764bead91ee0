package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// TestAUsersPopupThatNavigatesTheAdoptedTabIsNoLeak: live mode. The
// user's tab (on 127.0.0.3) opened a popup on the secret's site before the
// session adopted the tab; the popup, the user's, sends its opener to the
// site's /show?pw=<value>: the value is never shown in clear (the load's
// credit is the popup's site too, or not known).
func TestAUsersPopupThatNavigatesTheAdoptedTabIsNoLeak(t *testing.T) {
	t.Parallel()
	const password = "R9-Live-Foreign-Leak-5150"
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	var stage atomic.Int32
	var siteURL string
	site, other := twoSites(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stage":
			fmt.Fprint(w, stage.Load())
		case "/show":
			fmt.Fprint(w, `<!doctype html><title>Shown</title><p>shown</p>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Holder</title><script>
setInterval(async () => {
  if (Number(await (await fetch('/stage')).text()) === 1) { opener.location = '`+siteURL+`/show?pw=`+url.QueryEscape(password)+`'; }
}, 200);
</script>`)
		}
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>other</p>`)
	})
	siteURL = site
	manifest := strings.Replace(networkLogsManifest, `connect = "launch"`, fmt.Sprintf("connect = \"live\"\nlive_endpoint = %q", endpoint), 1)
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	t.Cleanup(cancelAlloc)
	userTab, cancelUser := chromedp.NewContext(alloc)
	t.Cleanup(cancelUser)
	if err := chromedp.Do(userTab, chromedp.Navigate(other+"/user")); err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Call(userTab, runtime.Evaluate, runtime.EvaluateParams{Expression: "window.open('" + site + "/holder'), true", UserGesture: new(true)})
	if err != nil || res.ExceptionDetails != nil {
		t.Fatalf("the user's popup: %v %+v", err, res)
	}
	time.Sleep(time.Second)
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	cs := d.connect(t, "alice-token")
	call := allowedCaller(t, cs)
	call("navigate", map[string]any{"url": other + "/agent"})
	tabs := call("list_tabs", nil)
	t.Logf("list_tabs:\n%s", tabs)
	var id string
	for _, l := range strings.Split(tabs, "\n") {
		if strings.Contains(l, "/user") {
			id = strings.Fields(l)[0]
		}
	}
	t.Logf("switch_tab:\n%s", call("switch_tab", map[string]any{"tab": id}))
	stage.Store(1)
	time.Sleep(3 * time.Second)
	var out string
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(out, "\"Shown\""); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no /show:\n%s", out)
		}
		o, _ := callText(t, cs, "e2e.list_tabs", nil)
		out += o
	}
	t.Logf("list_tabs after:\n%s", out)
	if strings.Contains(out, password) {
		t.Errorf("LEAK: the URL the user's popup on the site chose is shown in clear")
	}
}
