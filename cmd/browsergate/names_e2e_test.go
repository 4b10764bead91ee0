package main

import (
	"strings"
	"testing"
)

// namesManifest scopes the browser by host NAME: the egress proxy resolves
// names (here from serve --resolve, an injected resolver), checks every
// answer and dials the checked address.
const namesManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["app.test", "rebind.test", "mixed.test"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`

// TestNamesResolveThroughTheProxy: an allowed name that resolves to a
// granted address works; an allowed name that resolves to a refused
// address (DNS pointing a trusted name at a private target), or to a mix
// of granted and refused addresses, never reaches the refused address.
func TestNamesResolveThroughTheProxy(t *testing.T) {
	t.Parallel()
	f := startWith(t, namesManifest,
		"--resolve", "app.test=127.0.0.1",
		"--resolve", "rebind.test=127.0.0.2",
		"--resolve", "mixed.test=127.0.0.1,127.0.0.2")
	port := f.siteURL[strings.LastIndex(f.siteURL, ":")+1:]
	canaryPort := f.canaryTo[strings.LastIndex(f.canaryTo, ":")+1:]

	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": "http://app.test:" + port + "/login"}); !strings.Contains(out, `title="Sign in"`) || !strings.Contains(out, `domain="app.test"`) {
		t.Fatalf("allowed name through the proxy: %s", out)
	}
	for _, host := range []string{"rebind.test", "mixed.test"} {
		text, _ := f.call(t, "e2e.navigate", map[string]any{"url": "http://" + host + ":" + canaryPort + "/"})
		if !strings.Contains(text, "egress gate blocked") || !strings.Contains(text, "proxy") {
			t.Errorf("navigate to %s (resolves to the canary): the proxy did not report a refusal:\n%s", host, text)
		}
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("the canary saw %d request(s): %v", n, f.canary.Seen())
	}
}
