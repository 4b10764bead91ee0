package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"strings"
	"testing"
)

// secretValue has characters that URL, HTML and JSON encode differently,
// so each escaped form is searched for as well.
const secretValue = `Sup3r-S3cret/Value&<x>"y`

// tildeValue has what Go's and the browser's URL encodings disagree on
// ('~', '*') and a run of spaces, which snapshots collapse.
const tildeValue = "Tilde~Star*Bang!  two"

func init() {
	os.Setenv("BROWSERGATE_E2E_SECRET", secretValue)
	os.Setenv("BROWSERGATE_E2E_SECRET2", tildeValue)
}

const secretsManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
fields = "text"
[secrets.TILDE]
env = "BROWSERGATE_E2E_SECRET2"
domains = ["127.0.0.1"]
fields = "text"
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.extract_html]
[browser.commands.network_timing]
`

// TestSecretsNeverLeak: the agent types the placeholder <APP_PASSWORD>;
// the site receives the real value, but no sink shows it: tool results
// (text and structured), snapshots, extracted HTML, page state and URLs,
// network timing, the daemon's log (at debug level, where the egress proxy
// logs every URL), the evidence timeline and the raw bbolt file. The
// secret is typed only into a named element on its domain.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	f := startWith(t, secretsManifest, "--log-level", "debug")
	var seen []string
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res := f.callResult(t, tool, args)
		structured, _ := json.Marshal(res.StructuredContent)
		text := resultText(res)
		seen = append(seen, text, string(structured))
		return text, res.IsError
	}
	must := func(tool string, args map[string]any, wants ...string) string {
		t.Helper()
		text, refused := call(tool, args)
		if refused {
			t.Fatalf("%s refused:\n%s", tool, text)
		}
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: output lacks %q:\n%s", tool, w, text)
			}
		}
		return text
	}
	const masked = "[secret APP_PASSWORD]"

	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	must("e2e.type_text", map[string]any{"selector": "#v", "text": "<APP_PASSWORD>"}, "typed secret APP_PASSWORD into")
	must("e2e.snapshot", nil, masked)
	must("e2e.extract_html", map[string]any{"selector": "main"}, masked)
	// In the state line the page's URL is inert: the mask's brackets, too,
	// read \x5b and \x5d there.
	must("e2e.submit_form", map[string]any{"selector": "form"}, `v=\x5bsecret APP_PASSWORD\x5d`)
	must("e2e.snapshot", nil, "Sent: "+masked)
	must("e2e.network_timing", nil, masked)
	if got, _ := f.site.Echoed.Load().(string); got != secretValue {
		t.Errorf("the site received %q, want the secret's value: the placeholder was not filled in", got)
	}

	// Not on another domain, even an allowed one; not into the focused
	// element, whichever frame it is in.
	must("e2e.navigate", map[string]any{"url": f.xsite + "/echo"})
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#v", "text": "<APP_PASSWORD>"}); !refused ||
		!strings.Contains(text, "DENIED at secrets") || !strings.Contains(text, "may only be typed on 127.0.0.1") {
		t.Errorf("typing the secret on 127.0.0.3:\n%s", text)
	}
	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	if text, refused := call("e2e.type_text", map[string]any{"text": "<APP_PASSWORD>"}); !refused || !strings.Contains(text, "named by ref or selector") {
		t.Errorf("typing the secret into the focused element:\n%s", text)
	}
	if got, _ := f.site.Echoed.Load().(string); got != secretValue {
		t.Errorf("the site's last value changed to %q", got)
	}

	// A long prefix pushes the value to where a snapshot clips a field:
	// the clip must not show the secret's first characters.
	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	must("e2e.type_text", map[string]any{"selector": "#v", "text": strings.Repeat("A", 100) + "<APP_PASSWORD>"})
	must("e2e.snapshot", nil)
	// Characters the browser's form encoding and Go's disagree on, and a
	// run of spaces.
	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	must("e2e.type_text", map[string]any{"selector": "#v", "text": "<TILDE>"})
	must("e2e.snapshot", nil, "[secret TILDE]")
	must("e2e.submit_form", map[string]any{"selector": "form"}, `\x5bsecret TILDE\x5d`)
	must("e2e.snapshot", nil)
	if got, _ := f.site.Echoed.Load().(string); got != tildeValue {
		t.Errorf("the site received %q, want the second secret", got)
	}
	// Not into an iframe element (focus would carry the text into
	// another document), and not through a form that sends it elsewhere.
	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo?frame=" + url.QueryEscape(f.xsite+"/echo")})
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#f", "text": "<APP_PASSWORD>"}); !refused || !strings.Contains(text, "only be typed into a text field") {
		t.Errorf("typing the secret into an iframe element:\n%s", text)
	}
	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo?action=" + url.QueryEscape(f.xsite+"/echo")})
	must("e2e.type_text", map[string]any{"selector": "#v", "text": "<APP_PASSWORD>"})
	if text, refused := call("e2e.submit_form", map[string]any{"selector": "form"}); !refused || !strings.Contains(text, "DENIED at secrets") || !strings.Contains(text, "the form would send it to") {
		t.Errorf("submitting the secret to another domain:\n%s", text)
	}

	f.cs.Close()
	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	raw, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]string{
		"tool results":      strings.Join(seen, "\n"),
		"serve's log":       f.stderr.String(),
		"evidence show":     show,
		"raw evidence file": string(raw),
	}
	js, _ := json.Marshal(secretValue)
	forms := []string{secretValue, url.QueryEscape(secretValue), url.PathEscape(secretValue), html.EscapeString(secretValue), string(js[1 : len(js)-1]), "Sup3r", "Tilde"}
	for name, text := range sinks {
		for _, form := range forms {
			if strings.Contains(text, form) {
				i := strings.Index(text, form)
				t.Errorf("LEAK: %s contain the secret as %q: …%s…", name, form, text[max(0, i-80):min(len(text), i+80)])
			}
		}
	}
	if !strings.Contains(f.stderr.String(), fmt.Sprintf("v=%s", url.QueryEscape(masked))) && !strings.Contains(f.stderr.String(), masked) {
		t.Errorf("serve's debug log never mentions the masked value: the log sink was not exercised")
	}
}
