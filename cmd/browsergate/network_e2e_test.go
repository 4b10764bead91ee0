package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// networkSite serves the network pages, under /network/: a page whose
// Send button posts a JSON body (with the password field's value) by
// fetch, with an Authorization and an X-Trace header, to /network/api,
// which sets a cookie and echoes the password; whose Big button fetches
// /network/big, 25,000 bytes of text that end with END-OF-BIG; and whose
// Away button fetches a host outside every scope.
func networkSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/network/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, networkPage)
	})
	mux.HandleFunc("/network/api", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Password string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "cookie-abc123", Path: "/"})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"echo":%q}`, body.Password)
	})
	mux.HandleFunc("/network/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, networkBig)
	})
	mux.HandleFunc("/network/other", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>Another page.</p>`)
	})
	return mux
}

// networkBig is /network/big: 25,003 bytes of lines, above
// network_request's cap, the last END-OF-BIG.
var networkBig = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 25000-len("END-OF-BIG\n"); i++ {
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	return b.String() + "END-OF-BIG\n"
}()

const networkPage = `<!doctype html><title>Network</title>
<input type=password id=pw aria-label=Password>
<button id=send onclick="send()">Send</button> <button id=big onclick="big()">Big</button> <button id=away onclick="away()">Away</button>
<p id=out>not sent</p>
<script>
// done shows what a button did, in an element #<id>done to wait for.
function done(id, text) { const p = document.createElement('p'); p.id = id + 'done'; p.textContent = text; document.body.append(p); document.getElementById('out').textContent = text; }
async function send() {
  const r = await fetch('/network/api', {method: 'POST',
    headers: {'Content-Type': 'application/json', 'Authorization': 'Bearer token-xyz789', 'X-Trace': 'trace-7'},
    body: JSON.stringify({user: 'ann', password: document.getElementById('pw').value})});
  done('sent', 'sent ' + r.status);
}
async function big() {
  const r = await fetch('/network/big');
  done('big', 'big done ' + (await r.text()).length);
}
async function away() {
  try { await fetch('http://outside.example/away'); } catch (e) {}
  done('away', 'away done');
}
</script>`

// networkManifest declares the network commands and what drives the
// network page.
func networkManifest(reveal string) string {
	return fmt.Sprintf(e2eManifest, "launch", "") + `
[browser.commands.network_requests]
[browser.commands.network_request]
` + reveal + "\n"
}

// networkSecret declares the password the network page posts.
const networkSecret = `
[secrets.NET_PASSWORD]
env = "BROWSERGATE_E2E_NETSECRET"
domains = ["127.0.0.1"]
`

// allowedCaller calls the e2e tool's commands on cs, each of which must
// be allowed, and gives their replies' text.
func allowedCaller(t *testing.T, cs *mcp.ClientSession) func(tool string, args map[string]any) string {
	return func(tool string, args map[string]any) string {
		t.Helper()
		out, refused := callText(t, cs, "e2e."+tool, args)
		if refused {
			t.Fatalf("%s %v refused:\n%s", tool, args, out)
		}
		return out
	}
}

// requestID is the id network_requests gives the first request whose line
// holds part, or "".
func requestID(list, part string) string {
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, part) {
			if m := regexp.MustCompile(`\br[0-9]+\b`).FindString(line); m != "" {
				return m
			}
		}
	}
	return ""
}

// sessionTab is the id list_tabs gives the session's tab whose URL holds
// part.
func sessionTab(t *testing.T, cs *mcp.ClientSession, part string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "e2e.list_tabs"})
	if err != nil || res.IsError {
		t.Fatalf("list_tabs: %v %s", err, resultText(res))
	}
	var st struct{ Tabs []listedTab }
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, tb := range st.Tabs {
		if tb.Owner == "session" && strings.Contains(tb.URL, part) {
			return tb.Tab
		}
	}
	t.Fatalf("list_tabs shows no session tab at *%s*: %+v", part, st.Tabs)
	return ""
}

// TestNetworkRequestShowsHeadersAndBodiesRedactedAndMasked: a page's
// fetch with headers and a JSON body is listed by network_requests with
// an id, and network_request shows its request and response headers and
// bodies — with the Authorization and Set-Cookie values redacted (the
// manifest reveals none), a secret's value typed into the page's password
// field masked in the request body and in the response that echoes it, and a body above the
// cap cut and said to be. A request the gate refused is listed with its
// rule; an unknown id, another tab's request and another session's are
// refused with a clear error or name another request.
func TestNetworkRequestShowsHeadersAndBodiesRedactedAndMasked(t *testing.T) {
	t.Parallel()
	const password = "Net-S3cret-4711"
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, networkManifest("")+networkSecret, "")
	site, stop, err := serveOn("127.0.0.1:0", networkSite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	alice := d.connect(t, "alice-token")
	call := allowedCaller(t, alice)
	// A request of one tab is not reachable from another of the session.
	call("navigate", map[string]any{"url": site + "/network/page"})
	call("click", map[string]any{"selector": "#big"})
	call("wait_for", map[string]any{"selector": "#bigdone"})
	big := requestID(call("network_requests", nil), "/network/big")
	if big == "" {
		t.Fatal("network_requests does not list the fetch of /network/big")
	}
	call("new_tab", map[string]any{"url": site + "/network/other"})
	if out, refused := callText(t, alice, "e2e.network_request", map[string]any{"id": big}); strings.Contains(out, "/network/big") {
		t.Errorf("another tab reached the first tab's request %s (refused %v):\n%s", big, refused, out)
	}
	call("switch_tab", map[string]any{"tab": sessionTab(t, alice, "/network/page")})

	call("type_text", map[string]any{"selector": "#pw", "text": "<NET_PASSWORD>"})
	call("click", map[string]any{"selector": "#send"})
	call("wait_for", map[string]any{"selector": "#sentdone"}) // not its text: a secret was typed here
	call("click", map[string]any{"selector": "#away"})
	call("wait_for", map[string]any{"selector": "#awaydone"})

	list := call("network_requests", nil)
	api, away := requestID(list, "/network/api"), requestID(list, "outside.example")
	if api == "" || away == "" || requestID(list, "/network/big") != big {
		t.Fatalf("network_requests lacks the api or refused request, or gives the big one another id than %s:\n%s", big, list)
	}
	if !strings.Contains(list, api+" POST "+site+"/network/api fetch 200") {
		t.Errorf("network_requests' line of the fetch:\n%s", list)
	}
	if !regexp.MustCompile(away + ` GET http://outside.example/away fetch REFUSED by the gate \(.+\)`).MatchString(list) {
		t.Errorf("network_requests does not list the refused request with its rule:\n%s", list)
	}
	if fetches := call("network_requests", map[string]any{"resource_type": "fetch"}); strings.Contains(fetches, " document") || !strings.Contains(fetches, "/network/api") {
		t.Errorf("network_requests {resource_type: fetch}:\n%s", fetches)
	}

	detail := call("network_request", map[string]any{"id": api})
	low := strings.ToLower(detail)
	for _, want := range []string{"x-trace: trace-7", "content-type: application/json", `"user":"ann"`,
		`authorization: [redacted: network_request shows it only with reveal_headers = ["authorization"] declared]`,
		`set-cookie: [redacted: network_request shows it only with reveal_headers = ["set-cookie"] declared]`,
		`"ok":true`} {
		if !strings.Contains(low, strings.ToLower(want)) {
			t.Errorf("network_request %s lacks %q:\n%s", api, want, detail)
		}
	}
	for _, leak := range []string{"token-xyz789", "cookie-abc123", password} {
		if strings.Contains(detail, leak) {
			t.Errorf("network_request %s shows %q:\n%s", api, leak, detail)
		}
	}
	if strings.Count(detail, "[secret NET_PASSWORD]") < 2 {
		t.Errorf("network_request %s does not show the password masked in both bodies:\n%s", api, detail)
	}

	bigDetail := call("network_request", map[string]any{"id": big})
	if !strings.Contains(bigDetail, fmt.Sprintf("cut at 10000 bytes of %d: the rest is not shown", len(networkBig))) ||
		!strings.Contains(bigDetail, "line 00000") || strings.Contains(bigDetail, "END-OF-BIG") {
		t.Errorf("network_request of the big response is not cut at the cap, or does not say so:\n%s", bigDetail)
	}
	if out := call("network_request", map[string]any{"id": away}); !strings.Contains(out, "REFUSED by the gate") {
		t.Errorf("network_request of the refused request:\n%s", out)
	}

	if out, refused := callText(t, alice, "e2e.network_request", map[string]any{"id": "r99999"}); !refused ||
		!strings.Contains(out, "the current tab has no request r99999: ids come from network_requests of this tab") {
		t.Errorf("an unknown id: refused %v:\n%s", refused, out)
	}
	if _, refused := callText(t, alice, "e2e.network_request", map[string]any{"id": "api"}); !refused {
		t.Error("an id that is not one was taken")
	}

	// Another agent's session, on a page of the same site: the fetch's id
	// names none of its requests.
	bob := d.connect(t, "bob-token")
	if out, refused := callText(t, bob, "e2e.navigate", map[string]any{"url": site + "/network/other"}); refused {
		t.Fatalf("bob's navigate: %s", out)
	}
	if out, refused := callText(t, bob, "e2e.network_request", map[string]any{"id": api}); strings.Contains(out, "/network/api") || strings.Contains(out, "trace-7") {
		t.Errorf("another session reached alice's request %s (refused %v):\n%s", api, refused, out)
	}
}
