package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
)

// TestLiveUsersTabLedOutOfScopeIsTakenBack: in live mode the agent adopts
// a user's tab and navigates it to a page that redirects out of scope (the
// canary). The call is refused; the user's tab is taken back to the page
// it showed before the call and let go, so a reload by the user would not
// request the refused URL; the reply's [state] line and the evidence's
// final URL are those of the session's first tab, which it is back on, not
// of the tab it let go; the refusal names the released tab and where it
// was left. The canary sees no request.
func TestLiveUsersTabLedOutOfScopeIsTakenBack(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(t, "live", endpoint)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redir-out":
			http.Redirect(w, r, f.canaryTo+"/redir-target", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<title>users %s</title>%s", r.URL.Path, r.URL.Path)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	user := usersTab(t, endpoint, site+"/mine")
	usersID := f.tabID(t, "e2e", "user", "/mine")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": usersID})

	out, refused := f.call(t, "e2e.navigate", map[string]any{"url": site + "/redir-out"})
	t.Logf("navigate /redir-out:\n%s", out)
	if !refused {
		t.Fatalf("a navigation redirected out of scope was not refused:\n%s", out)
	}
	wantTaken := fmt.Sprintf("the user's tab %s was taken back to %q, the page it showed before this call, and let go, and the session is back on its first tab", usersID, site+"/mine")
	if !strings.Contains(out, wantTaken) {
		t.Errorf("the refusal does not say the user's tab was taken back (want %q):\n%s", wantTaken, out)
	}
	tabs, _ := f.tabs(t, "e2e")
	var current *listedTab
	for i, tb := range tabs {
		if tb.Active {
			current = &tabs[i]
		}
		if tb.Tab == usersID && (tb.Active || tb.Owner != "user") {
			t.Errorf("the released tab is still the session's current one: %+v", tabs)
		}
	}
	if current == nil || current.Owner != "session" {
		t.Fatalf("the session's current tab after the refusal is not its own: %+v", tabs)
	}
	state, _, _ := strings.Cut(out[strings.LastIndex(out, "[state]"):], "\n")
	if !strings.Contains(state, fmt.Sprintf("url=%q", current.URL)) || strings.Contains(state, "127.0.0.2") {
		t.Errorf("the [state] line is not the session's current tab (%s at %s):\n%s", current.Tab, current.URL, state)
	}

	// The user's tab is on its own page again, which a reload loads; the
	// refused URL is only in its forward history.
	loc, err := chromedp.Run(user, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != site+"/mine" {
		t.Errorf("the user's tab was left at %s, want %s/mine", loc, site)
	}
	hist, err := chromedp.Call(user, page.GetNavigationHistory, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if e := hist.Entries[hist.CurrentIndex]; e.URL != site+"/mine" {
		t.Errorf("the user's tab's current history entry is %s, want %s/mine", e.URL, site)
	}
	if seen := f.net.Seen(); len(seen) != 0 {
		t.Errorf("the canary saw %s", f.net)
	}

	f.cs.Close()
	rec := lastRecordWhere(t, f.evidence, func(e *evidence.Envelope) bool { return e.Command == "navigate" })
	if u, _ := rec.After["url"].(string); u != current.URL {
		t.Errorf("the evidence's final URL of the refused navigate is %q, want the session's tab's %q", u, current.URL)
	}
	if rec.Tab == nil || rec.Tab.ID != usersID || rec.Tab.Owner != "user" {
		t.Errorf("the evidence does not name the user's tab as the one the navigate ran on: %+v", rec.Tab)
	}
	if !strings.Contains(strings.Join(rec.Decision.Reasons, "; "), wantTaken) {
		t.Errorf("the evidence's reasons do not say where the user's tab was left: %q", rec.Decision.Reasons)
	}
}
