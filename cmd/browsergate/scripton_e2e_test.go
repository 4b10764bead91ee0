package main

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// approvedJS calls execute_js, which the shipped policies hold for a
// human (pendingID fails the test if the call is not held), approves it as
// the operator does, and returns its reply and whether it was refused.
func approvedJS(t *testing.T, f *fixture, args map[string]any) (string, bool) {
	t.Helper()
	h := f.callAsync(t, "e2e.execute_js", args)
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	return h.wait(t)
}

// scriptPages are a page of 127.0.0.1 with a button, a frame of its own
// site, a frame of 127.0.0.3 (another site: a process of its own) and a
// data: frame (outside the scope); each document sets a variable in its
// own world.
func scriptPages(t *testing.T) (site string) {
	t.Helper()
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{
		"/xframe": `<!doctype html><title>x</title><p>cross</p><script>window.frameVar = 'cross-site frame'</script>`,
	})
	site, _ = serveLogged(t, map[string]string{
		"/script": `<!doctype html><title>script</title><button id=b>Press me</button>
<script>window.pageVar = 'page main world'</script>
<iframe id=same src="/inner"></iframe>
<iframe id=cross src="` + other + `/xframe"></iframe>
<iframe id=data src="data:text/html,<p>data frame</p><script>window.frameVar = 'data frame'</script>"></iframe>`,
		"/inner": `<!doctype html><title>inner</title><button>Inner button</button><p id=ip>inner para</p>
<script>window.frameVar = 'same-site frame'</script>`,
	})
	return site
}

// TestExecuteJSOnAnElementAndInAFrame: execute_js with ref calls the
// expression, a function, with the element, in the page's own world (of
// the tab, or of the frame the element is in); with frame it evaluates the
// expression in the document of the iframe the selector names, of the same
// site or of another site's process. A frame outside the scope (a data:
// document) is refused, and so is a frame selector that names no iframe.
// Every form is held for a human under the shipped policies; what the
// gate refuses is refused before a human is asked.
func TestExecuteJSOnAnElementAndInAFrame(t *testing.T) {
	t.Parallel()
	f := startWith(t, captureManifest(t.TempDir(), 10<<20))
	site := scriptPages(t)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/script"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	button, inner := findRef(snap, "Press me"), findRef(snap, "Inner button")
	if button == "" || inner == "" {
		t.Fatalf("the snapshot has no ref for a button:\n%s", snap)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"ref": button, "expression": "(el) => el.textContent + ' / ' + window.pageVar"}, "Press me / page main world"},
		{map[string]any{"ref": inner, "expression": "(el) => el.textContent + ' / ' + window.frameVar"}, "Inner button / same-site frame"},
		{map[string]any{"frame": "#same", "expression": "window.frameVar + ' / ' + document.getElementById('ip').textContent"}, "same-site frame / inner para"},
		{map[string]any{"frame": "#cross", "expression": "window.frameVar + ' / ' + location.host"}, "cross-site frame / 127.0.0.3"},
		{map[string]any{"frame": "#same", "expression": "Promise.resolve(6 * 7)"}, "42"},
	} {
		if out, refused := approvedJS(t, f, c.args); refused || !strings.Contains(out, c.want) {
			t.Errorf("execute_js %v (refused %v):\n%s\nwant %q", c.args, refused, out, c.want)
		}
	}
	// Refused by the gate, before a human is asked.
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"frame": "#data", "expression": "window.frameVar"}, "scope", "is outside the scope", "not the agent's to script")
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"frame": "#b", "expression": "1"}, "is a <button>, not an iframe")
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"frame": "#nothing", "expression": "1"}, "no element matches")
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"ref": button, "frame": "#same", "expression": "1"}, "ref", "frame")
	if !f.net.Clean() {
		t.Errorf("the canary saw: %s", f.net)
	}
}

// TestExecuteJSOnAnElementCannotReadATypedSecret: the no-oracle rule holds
// for execute_js's new forms. Once a secret is typed into a field of a
// frame, execute_js on that field (ref) or in that frame (frame) is refused
// at stage secrets, before any human is asked. And so is a frame of the
// secret's site embedded in another site's page, whose server echoes the
// password back into its field: a script there could spell the value so
// that the masker does not know it (the dots between its characters),
// which no reply may show.
func TestExecuteJSOnAnElementCannotReadATypedSecret(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("BROWSERGATE_TEST_BOUND_PW", boundSecretValue)
	f := startWith(t, captureManifest(t.TempDir(), 10<<20)+
		"[secrets.PW]\nenv = \"BROWSERGATE_TEST_BOUND_PW\"\ndomains = [\"127.0.0.1\"]\n")
	var mu sync.Mutex
	var echoed string
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/outer":
			fmt.Fprint(w, `<!doctype html><title>outer</title><iframe id=login src="/login"></iframe>`)
		case "/login":
			if r.Method == http.MethodPost {
				r.ParseForm()
				mu.Lock()
				echoed = r.PostForm.Get("pw")
				mu.Unlock()
			}
			mu.Lock()
			fmt.Fprintf(w, `<!doctype html><title>login</title><form method=post action="/login"><input type=password id=pw name=pw aria-label=Password value="%s"><button id=go>Sign in</button></form>`, html.EscapeString(echoed))
			mu.Unlock()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{})

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/outer"})
	pw := findRef(f.mustAllow(t, "e2e.snapshot", nil), "Password")
	if pw == "" {
		t.Fatal("the snapshot has no ref for the frame's password field")
	}
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": pw, "text": "<PW>"})
	for _, args := range []map[string]any{
		{"ref": pw, "expression": "(el) => el.value.split('').join('.')"},
		{"frame": "#login", "expression": "document.getElementById('pw').value.split('').join('.')"},
	} {
		f.mustRefuse(t, "e2e.execute_js", args, "secret oracle")
	}

	// The site now echoes the password into its field; another site's
	// page embeds it.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "#go"})
	mu.Lock()
	got := echoed
	mu.Unlock()
	if got != boundSecretValue {
		t.Fatalf("the site got %q, not the secret", got)
	}
	page := other + "/host"
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": page})
	// serveLoggedOn's default page has no frame: make one.
	out, refused := approvedJS(t, f, map[string]any{"expression": "const i = document.createElement('iframe'); i.id = 'f'; i.src = '" + site + "/login'; document.body.append(i); new Promise(r => i.onload = () => r('framed'))"})
	if refused || !strings.Contains(out, "framed") {
		t.Fatalf("framing the secret's site:\n%s", out)
	}
	out = f.mustRefuse(t, "e2e.execute_js", map[string]any{"frame": "#f", "expression": "document.getElementById('pw').value.split('').join('.')"}, "secret oracle")
	spelled := strings.Join(strings.Split(boundSecretValue, ""), ".")
	if strings.Contains(out, spelled) || strings.Contains(out, boundSecretValue) {
		t.Errorf("LEAK: the reply shows the secret:\n%s", out)
	}
}
