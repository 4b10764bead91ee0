package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// contextsManifest declares new_context (with max_contexts = 1) and
// switch_context beside e2eManifest's commands, for a live browser of the
// test's in isolated contexts.
func contextsManifest(endpoint string) string {
	return fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q\ncontext = \"isolated\"", endpoint)) + `[browser.commands.new_context]
max_contexts = 1
[browser.commands.switch_context]
`
}

// TestTwoUsersSideBySideInTwoContexts: a session signs alice in in its
// first browser context and bob in a second one that new_context opened;
// cookies do not cross (each context's /me names its own user, and the
// second starts signed out), list_tabs says which context each tab is
// in, and switch_context moves between them. The second context has the
// first's guards: an out-of-scope navigate is refused, and a page of it
// that reaches for the canary on a forbidden loopback address (an image,
// a fetch, a navigation of its own) gets nothing through. A third
// context is over max_contexts. The records name the context of the tab
// each call acted in. When the session ends, none of its browser
// contexts is left in the browser.
func TestTwoUsersSideBySideInTwoContexts(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := startWith(t, contextsManifest(endpoint))
	mux := http.NewServeMux()
	mux.Handle("/", stateSite())
	mux.HandleFunc("/reach", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>reach</title><img src="%[1]s/img.png"><script>
fetch(%[1]q + '/fetch', {mode: 'no-cors'}).catch(() => {});
setTimeout(() => { location.href = %[1]q + '/moved' }, 100);
</script>`, f.canaryTo)
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)

	me := func(want string) {
		t.Helper()
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
		if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says "+want) {
			t.Errorf("want %s signed in here:\n%s", want, out)
		}
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=alice"})
	me("alice")
	if out := f.mustAllow(t, "e2e.new_context", nil); !strings.Contains(out, "opened browser context c2") {
		t.Fatalf("new_context:\n%s", out)
	}
	me("nobody")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=bob"})
	me("bob")

	tabs, _ := f.tabs(t, "e2e")
	contexts := map[string]string{}
	for _, tb := range tabs {
		contexts[tb.Context] += tb.URL
	}
	if len(tabs) != 2 || !strings.Contains(contexts["c1"], "/me") || !strings.Contains(contexts["c2"], "/me") {
		t.Errorf("list_tabs: %+v, want one tab in each of c1 and c2", tabs)
	}

	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}, "DENIED at scope")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/reach"})
	f.settleAndCheckCanary(t, "a page of the second context")
	// The page's own navigation was stopped: the tab is reset.
	f.mustRefuse(t, "e2e.snapshot", nil, "outside the scope", "the tab was reset to about:blank")
	f.mustRefuse(t, "e2e.new_context", nil, "max_contexts (1)")

	f.mustAllow(t, "e2e.switch_context", map[string]any{"context": "c1"})
	me("alice")
	f.mustAllow(t, "e2e.switch_context", map[string]any{"context": "c2"})
	me("bob")
	f.mustRefuse(t, "e2e.switch_context", map[string]any{"context": "c7"}, "no browser context c7")

	// The browser, as the user sees it: the session's contexts exist now
	// and are gone once the session ends.
	alloc, cancel := remote.NewAllocator(context.Background(), endpoint)
	defer cancel()
	user, cancel := chromedp.NewContext(alloc)
	defer cancel()
	user, cancel = context.WithTimeout(user, time.Minute)
	defer cancel()
	browserContexts := func() []cdp.BrowserContextID {
		res, err := chromedp.CallBrowser(user, target.GetBrowserContexts, cdp.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		return res.BrowserContextIDs
	}
	if n := len(browserContexts()); n != 2 {
		t.Errorf("the browser has %d browser contexts during the session, want the session's 2", n)
	}
	f.cs.Close()
	byContext := map[string]int{}
	for _, e := range readEnvelopes(t, f.evidence) {
		if e.Tab != nil {
			byContext[e.Tab.Context]++
		}
	}
	if byContext[""] == 0 || byContext["c1"] == 0 || byContext["c2"] == 0 {
		t.Errorf("the records' tabs by context: %v, want records before new_context without one, and records in c1 and in c2", byContext)
	}
	for left := browserContexts(); len(left) > 0; left = browserContexts() {
		if user.Err() != nil {
			t.Fatalf("the session's browser contexts are still there after it ended: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAParkedContextsPageDoesNotFailTheCurrentAction: each browser
// context has its own acting guard (what the gate judged the running
// action to do). A page left in a parked context that keeps navigating
// itself while the agent acts in the current context is that page's own
// business: the current context's actions run, and its tab stays where
// it was. With one acting guard for every context the parked page's
// navigations are taken for the action's ("navigated elsewhere") and
// the test fails.
func TestAParkedContextsPageDoesNotFailTheCurrentAction(t *testing.T) {
	t.Parallel()
	other, stopOther, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>hop</title><script>setTimeout(() => location.href = '/hop?' + Date.now(), 150)</script>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopOther)
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>plain</title><input id=q>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	// The parked page on another host in the scope: its navigations are
	// then none the current action was judged to make.
	manifest := strings.NewReplacer(`allowed_domains = ["127.0.0.1"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]`,
		`allow_private_cidrs = ["127.0.0.1/32"]`, `allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`).Replace(fmt.Sprintf(e2eManifest, "launch", ""))
	f := startWith(t, manifest+"[browser.commands.new_context]\n[browser.commands.switch_context]\n")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": other + "/hop"})
	f.mustAllow(t, "e2e.new_context", nil)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/plain"})
	for i := range 5 {
		if out, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#q", "text": fmt.Sprintf("hello %d", i)}); refused {
			t.Fatalf("type_text %d in the current context refused because of the parked context's page:\n%s", i, out)
		}
	}
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "plain") {
		t.Errorf("the current context's tab left its page:\n%s", out)
	}
	// Back in the first context, whose page is its own.
	if out := f.mustAllow(t, "e2e.switch_context", map[string]any{"context": "c1"}); !strings.Contains(out, "switched to browser context c1") {
		t.Errorf("switch_context:\n%s", out)
	}
}

// TestANewContextKeepsTheSessionsEmulationAndRecording: the emulation is
// the session's, and so is the operator's recording: a browser context
// new_context opens has the emulation the session had (its page sees the
// emulated user agent), an emulation changed there is the one the first
// context has once the session switches back, and every call in either
// context is recorded ([tool.evidence] recording = "screencast"), so that
// switching contexts sheds neither.
func TestANewContextKeepsTheSessionsEmulationAndRecording(t *testing.T) {
	t.Parallel()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>ua</title><p id=ua></p><script>document.getElementById('ua').textContent = 'agent: ' + navigator.userAgent</script>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", "")+`[browser.commands.new_context]
[browser.commands.switch_context]
[browser.commands.emulate]
[tool.evidence]
recording = "screencast"
`)
	f.mustAllow(t, "e2e.emulate", map[string]any{"user_agent": "EmulatedAgent/1.0"})
	f.mustAllow(t, "e2e.new_context", nil)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ua"})
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "agent: EmulatedAgent/1.0") {
		t.Errorf("the new context's page does not have the session's emulation:\n%s", out)
	}
	f.mustAllow(t, "e2e.emulate", map[string]any{"user_agent": "SecondAgent/2.0"})
	f.mustAllow(t, "e2e.switch_context", map[string]any{"context": "c1"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ua"})
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "agent: SecondAgent/2.0") {
		t.Errorf("back in the first context, the page does not have the emulation set in the second:\n%s", out)
	}
	f.cs.Close()
	_, recs := logContents(t, f.evidence)
	for _, rs := range recs {
		for _, rec := range rs {
			context := ""
			if rec.Tab != nil {
				context = rec.Tab.Context
			}
			if len(rec.Recording) == 0 {
				t.Errorf("record %d (%s, context %q) has no recording (error %q)", rec.Seq, rec.Command, context, rec.Error)
			}
		}
	}
}
