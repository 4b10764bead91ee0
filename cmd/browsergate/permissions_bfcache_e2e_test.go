package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// TestLivePermissionsBackToAPageFromBeforeTheAdoption: the user's tab
// was on /a, then /b, before the session adopted it (at /b). The session
// goes back, and the back/forward cache restores the /a from before the
// adoption, loaded without browsergate's Permissions-Policy and page
// scripts. The guard reloads it through itself; the reload is a
// navigation the click did not lead to, so the gate may instead let the
// tab go (the session back on its first tab). Either way the session is
// never left in the document from before: what it reads afterwards has
// every feature off, or is not /a.
func TestLivePermissionsBackToAPageFromBeforeTheAdoption(t *testing.T) {
	t.Parallel()
	port, _ := startUsersChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, _ := serveLogged(t, map[string]string{"/a": policyProbePage, "/b": `<button id=back onclick="history.back()">back</button>` + policyProbePage})
	alloc, cancel := remote.NewAllocator(context.Background(), endpoint)
	defer cancel()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	ctx, cancelT := context.WithTimeout(user, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/a"), chromedp.WaitVisible("#out"), chromedp.Navigate(site+"/b"), chromedp.WaitVisible("#out")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	f := startWith(t, permissionsManifest("live", fmt.Sprintf("live_endpoint = %q", endpoint), ""))
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "user", "/b")})
	f.call(t, "e2e.click", map[string]any{"selector": "#back"}) // refused when the tab is let go
	// A document from before the adoption says geolocation=true (it had no
	// policy of browsergate's).
	out, _ := f.call(t, "e2e.wait_for", map[string]any{"text": "geolocation=false", "timeout_ms": 5000})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	if strings.Contains(snap, "geolocation=true") || strings.Contains(snap, "/a\"") && !strings.Contains(snap, "geolocation=false") {
		t.Errorf("back on /a the session is in a document without browsergate's policy (wait_for: %.300s):\n%s", out, snap)
	}
}
