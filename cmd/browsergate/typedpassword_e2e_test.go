package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// typedPasswordManifest declares no secret: the agent types a password
// itself, as a new user's first manifest has it do.
const typedPasswordManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.snapshot]
`

// TestTypedPasswordIsMaskedWhereverItShowsLater: a password the agent
// types with type_text (not a declared secret) is masked not only in the
// record's text argument but wherever it shows up later: a GET form puts
// it in the next page's URL, and the page echoes it in its title and text.
// The evidence (show, export, the file) and the daemon's log hold it in no
// spelling; the site did receive it (the submit worked).
func TestTypedPasswordIsMaskedWhereverItShowsLater(t *testing.T) {
	t.Parallel()
	const password = "Zq7-hunter2-vX"
	var received atomic.Bool
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/login":
			fmt.Fprint(w, `<title>Sign in</title><form method=get action="/welcome"><input name=user value=ann><input type=password id=pw name=pw><button id=go>Sign in</button></form>`)
		case "/welcome":
			pw := r.URL.Query().Get("pw")
			received.Store(pw == password)
			fmt.Fprintf(w, "<title>Welcome %s</title><p>Your password is %s</p>", html.EscapeString(pw), html.EscapeString(pw))
		default:
			http.NotFound(w, r)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, typedPasswordManifest, "--log-level", "debug")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": password})
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "#go"})
	if !received.Load() {
		t.Fatal("the site did not receive the typed password with the GET submit, so the test shows nothing")
	}
	f.mustAllow(t, "e2e.snapshot", map[string]any{})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login"})
	f.cs.Close()

	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	export := exportedRecords(t, f)
	// The next record's URL names what was masked, so the reader knows a
	// password went there.
	if !strings.Contains(export, "[secret TYPED_PASSWORD_1]") {
		t.Errorf("the evidence does not name the masked password in the submit's URL:\n%s", export)
	}
	if !strings.Contains(export, "/welcome?user=ann") {
		t.Errorf("the evidence lacks the submit's final URL:\n%s", export)
	}
	raw, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]string{
		"serve's log":       f.stderr.String(),
		"evidence show":     show,
		"evidence export":   export,
		"raw evidence file": string(raw),
	}
	for name, text := range sinks {
		for _, form := range []string{password, url.QueryEscape(password), "hunter2"} {
			if i := strings.Index(text, form); i >= 0 {
				t.Errorf("LEAK: %s hold the typed password as %q: …%s…", name, form, text[max(0, i-80):min(len(text), i+80)])
			}
		}
	}
}
