package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
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
