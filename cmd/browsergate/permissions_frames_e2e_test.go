package main

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// geolocationAskPage asks for geolocation as it loads and tells its
// server how the browser answered, by the path it fetches:
// /geo-denied-LABEL when the request was refused (PERMISSION_DENIED),
// /geo-answered-LABEL for anything else (a position, none to give: the
// grant applied), and /code-LABEL-N with the error's code, for a failure
// message. LABEL is the page's query. The timeout is long: Chromium
// counts the time the permission takes to decide, which on a loaded
// machine can pass a short timeout before a refusal is known.
const geolocationAskPage = `<!doctype html><title>ask</title>asking<script>
const label = location.search.slice(1);
navigator.geolocation.getCurrentPosition(() => fetch('/geo-answered-' + label),
  e => { fetch('/code-' + label + '-' + e.code); fetch((e.code === 1 ? '/geo-denied-' : '/geo-answered-') + label); }, {timeout: 5000});
</script>`

// TestPermissionGrantRecordedOnlyWhereTheBrowserAppliesIt: a grant of
// geolocation to origin A reaches a top-level page of A and a frame of A
// within it, and the browser
// refuses the same request from a frame of A embedded by a page of
// another origin B (with or without allow="geolocation") and from a
// sandboxed frame of A in a page of A. The evidence says what each page
// got: the top-level page's request and its frame's are grants; each of the others is a
// refusal of layer permission, which says why the grant did not apply
// (the frame's embedder, the sandbox), and no grant.
func TestPermissionGrantRecordedOnlyWhereTheBrowserAppliesIt(t *testing.T) {
	t.Parallel()
	a, aHits := serveLogged(t, map[string]string{
		"/ask":       geolocationAskPage,
		"/sandboxed": `<!doctype html><title>sandboxed</title><iframe sandbox="allow-scripts" src="/ask?sandboxed"></iframe>`,
		"/framed":    `<!doctype html><title>framed</title><iframe src="/ask?in-a"></iframe>`,
	})
	b, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/embed": `<!doctype html><title>embed</title><iframe src="` + a + `/ask?in-b"></iframe>` +
			`<iframe allow="geolocation" src="` + a + `/ask?in-b-allowed"></iframe>`,
	})
	m := permissionsManifest("launch", "", fmt.Sprintf("geolocation = [%q]", a))
	m = strings.Replace(m, `allowed_domains = ["127.0.0.1"]`, `allowed_domains = ["127.0.0.1", "127.0.0.3"]`, 1)
	f := startWith(t, strings.Replace(m, `allow_private_cidrs = ["127.0.0.1/32"]`, `allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1))

	// answered waits until the page labelled label told how it was
	// answered, and returns "answered" or "denied".
	answered := func(label string) string {
		t.Helper()
		testkit.Eventually(t, func() string {
			if aHits.count("/geo-answered-"+label)+aHits.count("/geo-denied-"+label) == 0 {
				return "the page " + label + " did not say how its request for geolocation was answered"
			}
			return ""
		})
		if aHits.count("/geo-denied-"+label) > 0 {
			return "denied"
		}
		return "answered"
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": a + "/ask?top"})
	got := map[string]string{"top": answered("top")}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": b + "/embed"})
	got["in-b"], got["in-b-allowed"] = answered("in-b"), answered("in-b-allowed")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": a + "/sandboxed"})
	got["sandboxed"] = answered("sandboxed")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": a + "/framed"})
	got["in-a"] = answered("in-a")
	// What the browser did, as this test expects it of Chromium: if it
	// changes, what the evidence should say changes with it.
	if want := map[string]string{"top": "answered", "in-b": "denied", "in-b-allowed": "denied", "sandboxed": "denied", "in-a": "answered"}; !maps.Equal(got, want) {
		t.Fatalf("the pages were answered %v, want %v; %v", got, want, aHits.hits)
	}

	recs := endedRecords(t, f)
	var grants []string
	for _, g := range grantedPermissions(recs) {
		_, rest, _ := strings.Cut(g, " ")
		grants = append(grants, strings.TrimSuffix(rest, " between_calls"))
	}
	if want := []string{"geolocation " + a + " " + a + "/ask?top", "geolocation " + a + " " + a + "/ask?in-a"}; !slices.Equal(grants, want) {
		t.Errorf("the evidence records as granted %q, want only the top-level page's and its same-origin frame's %q", grants, want)
	}
	refusals := map[string]evidence.BlockedRequest{}
	for _, e := range recs {
		for _, r := range e.Blocked {
			if r.Layer == "permission" && r.Rule == `permissions "geolocation"` {
				refusals[r.URL] = r
			}
		}
	}
	for _, want := range []struct{ url, says string }{
		{a + "/ask?in-b", "this frame was embedded by " + b},
		{a + "/ask?in-b-allowed", "this frame was embedded by " + b},
		{a + "/ask?sandboxed", "sandboxed"},
	} {
		r, ok := refusals[want.url]
		if !ok {
			t.Errorf("the evidence does not record the refused request from %s: %+v", want.url, refusals)
			continue
		}
		if !strings.Contains(r.Reason, "denied without a prompt; [browser.permissions] grants it to "+a+", but ") || !strings.Contains(r.Reason, want.says) {
			t.Errorf("the refusal of %s says %q, want why the grant to %s did not apply (%q)", want.url, r.Reason, a, want.says)
		}
	}
	for _, url := range []string{a + "/ask?top", a + "/ask?in-a"} {
		if r, ok := refusals[url]; ok {
			t.Errorf("a granted request is recorded as refused: %+v", r)
		}
	}
}

// TestRefusalsAndGrantsAfterTheLastCall: a page granted geolocation that,
// after the session's last call, asks for it and makes a request out of
// scope: the session_end record lists both, is shown as a refusal (DENY
// by evidence show, DENIED by the HTML export), and the daemon's log line
// says, as it did before grants were recorded, that requests refused
// after the session's last call were recorded.
func TestRefusalsAndGrantsAfterTheLastCall(t *testing.T) {
	t.Parallel()
	// The page waits, asking /go, until the test says go: after the last
	// call has returned, however long that call took.
	var went atomic.Bool
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/go":
			fmt.Fprint(w, went.Load())
		default:
			fmt.Fprint(w, `<title>last</title>last<script>const wait = setInterval(async () => {
  if (await (await fetch('/go')).text() !== 'true') return;
  clearInterval(wait);
  fetch('http://127.0.0.2:9/after-the-last-call').catch(() => {});
  navigator.geolocation.getCurrentPosition(() => {}, () => {}, {timeout: 5000});
}, 200);</script>`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, permissionsManifest("launch", "", fmt.Sprintf("geolocation = [%q]", site)), "--log-level", "info")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/last"})
	went.Store(true)
	testkit.Eventually(t, func() string {
		log := f.stderr.String()
		if !strings.Contains(log, "a page asked for a permission [browser.permissions] grants its origin") || !strings.Contains(log, "after-the-last-call") {
			return "the page's grant and refusal after the last call were not both logged"
		}
		return ""
	})
	recs := endedRecords(t, f)
	end := recs[len(recs)-1]
	if end.Kind != evidence.KindSessionEnd || len(end.Blocked) != 1 || len(end.PermissionsGranted) != 1 || end.Decision.Rule != "refused after the last call" {
		t.Fatalf("the session_end record: kind %q, rule %q, blocked %+v, granted %+v", end.Kind, end.Decision.Rule, end.Blocked, end.PermissionsGranted)
	}
	if shown, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence); !strings.Contains(shown, "[session_end]  DENY egress: refused after the last call") {
		t.Errorf("evidence show does not show the session_end record with a refusal as DENY:\n%s", shown)
	}
	page, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html")
	if code != 0 {
		t.Fatalf("export html: exit %d", code)
	}
	if strings.Contains(page, `class="verdict recorded"`) {
		t.Errorf("the HTML export shows the session_end record with a refusal as RECORDED")
	}
	if !strings.Contains(f.stderr.String(), `"msg":"requests refused after the session's last call recorded"`) {
		t.Errorf("the daemon's log line for the session_end record with a refusal lost its words:\n%s", f.stderr.String())
	}
}
