package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// lyingA11yPage breaks image-alt, and its scripts try to hide it: a fake
// axe of its own that finds nothing, and built-ins rewritten so that every
// image seems to have a text alternative. The audit runs in the gate's
// isolated world, where neither reaches.
const lyingA11yPage = `<!doctype html><html lang=en><title>lying</title>
<main><h1>Lying page</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" id=logo></main>
<script>
window.axe = {run: async () => ({violations: [], passes: [{id: 'everything'}], incomplete: []})};
const realGet = Element.prototype.getAttribute;
Element.prototype.getAttribute = function (n) { return n === 'alt' ? 'a fine picture' : realGet.call(this, n); };
Element.prototype.hasAttribute = function () { return true; };
Object.defineProperty(HTMLImageElement.prototype, 'alt', {get() { return 'a fine picture'; }});
</script>`

// TestAccessibilityAuditIsNotTheLyingPagesOwn: accessibility_audit finds
// the image without a text alternative on a page whose scripts put a fake
// axe in its window and make every image claim one; the reply is fenced as
// page content, and the record keeps the audit.
func TestAccessibilityAuditIsNotTheLyingPagesOwn(t *testing.T) {
	t.Parallel()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, lyingA11yPage)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", "")+"[browser.commands.accessibility_audit]\n")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"})
	out := f.mustAllow(t, "e2e.accessibility_audit", nil)
	if !strings.Contains(out, "image-alt (critical, 1 element(s))") || !strings.Contains(out, "#logo") {
		t.Errorf("the audit does not name the image without a text alternative:\n%s", out)
	}
	if !strings.Contains(out, "PAGE CONTENT") {
		t.Errorf("the audit is not fenced as page content:\n%s", out)
	}
	again := f.mustAllow(t, "e2e.accessibility_audit", nil)
	if !strings.Contains(again, "image-alt (critical") {
		t.Errorf("a second audit of the document (axe already in the world) differs:\n%s", again)
	}
	f.cs.Close()
	_, recs := logContents(t, f.evidence)
	for _, rs := range recs {
		last := rs[len(rs)-1]
		if last.Command != "accessibility_audit" || !last.Decision.Allowed || !strings.Contains(last.Output, "image-alt") {
			t.Errorf("the last record is %s allowed=%v, output %q; want the audit", last.Command, last.Decision.Allowed, last.Output)
		}
	}
}

// TestAccessibilityAuditReachesThePagesFrames: the audit of a page with
// a frame of its own site (whose script lies as the page above does), a
// frame of another site (in a process of its own) with a frame of the
// first site inside it, and a frame outside the scope names the broken
// rule in each frame it may read, numbered with its URL, and says the
// one outside the scope was not audited.
func TestAccessibilityAuditReachesThePagesFrames(t *testing.T) {
	t.Parallel()
	f := startWith(t, withOtherSite(fmt.Sprintf(e2eManifest, "launch", "")+`[browser.commands.accessibility_audit]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.3"]
fields = "text"
`))
	noLabel := `<!doctype html><html lang=en><title>%s</title><main><h1>%s</h1><input id=%s></main>`
	inner, _ := serveLogged(t, map[string]string{"/deep": fmt.Sprintf(noLabel, "deep", "Deep", "deep-field")})
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/other": fmt.Sprintf(noLabel, "other", "Other", "other-field") + `<iframe src="` + inner + `/deep" title=deep></iframe>`,
	})
	site, _ := serveLogged(t, map[string]string{
		"/lying": lyingA11yPage,
		"/page": `<!doctype html><html lang=en><title>page</title><main><h1>Page</h1>
<iframe src="/lying" title=lying></iframe><iframe src="` + other + `/other" title=other></iframe><iframe src="` + f.canaryTo + `/away" title=away></iframe></main>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	out := f.mustAllow(t, "e2e.accessibility_audit", nil)
	for _, want := range []string{"image-alt (critical, 1 element(s))", ">>> #logo", ">>> #other-field", ">>> #deep-field",
		other + "/other", inner + "/deep", "1 frame(s) not audited (a frame's document is outside the scope)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the audit does not say %q:\n%s", want, out)
		}
	}
	// A secret typed into the other site's frame: that frame (and the
	// frame of the first site inside it, not a typed secret's site) is
	// left out of the next audit.
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	at := strings.Index(snap, `[frame "`+other+`/other":]`)
	if at < 0 {
		t.Fatalf("the snapshot does not show the other site's frame:\n%s", snap)
	}
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": findRef(snap[at:], "textbox"), "text": "<APP_PASSWORD>"})
	after := f.mustAllow(t, "e2e.accessibility_audit", nil)
	if strings.Contains(after, "#other-field") || !strings.Contains(after, "2 frame(s) not audited") || !strings.Contains(after, ">>> #deep-field") {
		t.Errorf("the audit after a secret was typed into a frame still reads that frame, or no other:\n%s", after)
	}
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}
}

// perfSite is a page that loads a slow script and blocks its main thread
// for 120 ms, and a page of another tab that keeps asking for a URL
// naming it, which no trace of the first tab may show.
func perfSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/perf", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html lang=en><title>perf</title><h1>Perf page</h1>
<p style="font-size:48px">A large paragraph, the largest paint</p>
<script src="/slow.js"></script>
<script>const t = performance.now(); while (performance.now() - t < 120) {}</script>`)
	})
	mux.HandleFunc("/slow.js", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond) // a slow script, the slowest request
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, "window.slow = true;")
	})
	mux.HandleFunc("/other-tab", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>other</title><p>another tab</p>
<script>setInterval(() => fetch('/other-tab-private?' + Date.now()), 50)</script>`)
	})
	mux.HandleFunc("/other-tab-private", func(w http.ResponseWriter, r *http.Request) {})
	return mux
}

// TestPerformanceTraceSummarisesTheTabsOwnTrace: performance_trace across a
// reload of a page measures its load (LCP), its long task and its slowest
// request, while another tab of the same browser keeps making requests:
// neither the reply nor the trace kept with the record (a recording blob
// that verifies) holds anything of that tab. Without reload, nothing
// loads, and the reply says LCP was not measured.
func TestPerformanceTraceSummarisesTheTabsOwnTrace(t *testing.T) {
	t.Parallel()
	site, stop, err := serveOn("127.0.0.1:0", perfSite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", "")+"[browser.commands.performance_trace]\nargs.duration_ms = {}\nargs.reload = {}\n")
	// The other tab first: the tab traced is in front (a tab in the
	// background paints nothing, so its trace would have no paint).
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/other-tab"})
	f.mustAllow(t, "e2e.new_tab", map[string]any{"url": site + "/perf"})
	out := f.mustAllow(t, "e2e.performance_trace", map[string]any{"reload": true, "duration_ms": 2000})
	for _, w := range []string{"across a reload", "LCP ", "ms, FCP ", "long tasks ", "slow.js"} {
		if !strings.Contains(out, w) {
			t.Errorf("the trace's summary lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "not measured") || strings.Contains(out, "LCP none") || strings.Contains(out, "long tasks 0") {
		t.Errorf("the trace across a reload did not measure the load or its long task:\n%s", out)
	}
	if strings.Contains(out, "other-tab") {
		t.Errorf("the summary shows another tab's requests:\n%s", out)
	}
	t.Logf("performance_trace across a reload:\n%s", out)
	still := f.mustAllow(t, "e2e.performance_trace", map[string]any{"duration_ms": 500})
	if !strings.Contains(still, "not measured") {
		t.Errorf("a trace without reload claims a load:\n%s", still)
	}
	f.cs.Close()

	_, recs := logContents(t, f.evidence)
	s, err := evidence.Open(f.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var traces int
	for _, rs := range recs {
		for _, rec := range rs {
			for _, ref := range rec.Recording {
				if ref.Kind != evidence.RecordingTrace {
					continue
				}
				traces++
				data, err := s.Recording(ref.SHA256)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(data), `{"traceEvents":[`) || strings.Contains(string(data), "other-tab") {
					t.Errorf("the trace kept with record %d is not the tab's own trace file (%d bytes, another tab's requests in it: %v)",
						rec.Seq, len(data), strings.Contains(string(data), "other-tab"))
				}
			}
		}
	}
	if traces != 2 {
		t.Errorf("%d traces kept with the records, want one a performance_trace", traces)
	}
	if rep, err := s.Verify(); err != nil || !rep.OK() {
		t.Errorf("verify: %v %v", rep.Problems, err)
	}
}
