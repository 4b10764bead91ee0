package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/examples/demosite"
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
# Names are held to allowed_ports (80 and 443 by default); the test servers
# listen on random high ports.
allowed_ports = ["1024-65535"]
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

// portsManifest keeps the default port policy: the site is reached by its
// IP literal, which an all-port grant covers, and app.test (which resolves
// to the same address) only on 80 and 443.
const portsManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "app.test"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.wait_for]
`

// TestDefaultPortPolicy: an allowed name on a port outside allowed_ports
// (here the default, 80 and 443) is refused at navigate and on every path
// a page takes to it (img, iframe, fetch, WebSocket), and a canary
// listening there sees nothing, although name and address are both in
// scope.
func TestDefaultPortPolicy(t *testing.T) {
	t.Parallel()
	canary, canaryURL, stop, err := demosite.ListenCanary("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cport := canaryURL[strings.LastIndex(canaryURL, ":")+1:]
	f := startWith(t, portsManifest, "--resolve", "app.test=127.0.0.1")

	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": "http://app.test:" + cport + "/"},
		"DENIED at scope", "port "+cport, "allowed_ports is 80, 443 (the default)")
	opened := f.mustAllow(t, "e2e.navigate", map[string]any{"url": fmt.Sprintf("%s/attack/off-port?host=app.test&port=%s", f.siteURL, cport)})
	waited, refused := f.call(t, "e2e.wait_for", map[string]any{"text": "done:", "timeout_ms": 5000})
	if refused {
		t.Fatalf("the off-port page did not finish: %s", waited)
	}
	// The page's requests go out while navigate or wait_for runs; the call
	// that saw them reports each with its rule and the layer that refused
	// it (the WebSocket's CONNECT is refused by the proxy).
	report := opened + waited
	for _, want := range []string{"off-port-img (allowed_ports,", "off-port-iframe (allowed_ports,", "off-port-fetch (allowed_ports,", "app.test:" + cport + " (allowed_ports, proxy)"} {
		if !strings.Contains(report, want) {
			t.Errorf("no call reported %q:\n%s", want, report)
		}
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "done: blocked") {
		t.Errorf("the page's fetch to app.test:%s was not blocked:\n%s", cport, snap)
	}
	if !canary.Clean() {
		t.Fatalf("LEAK: the canary on 127.0.0.1:%s saw %s", cport, canary)
	}
}
