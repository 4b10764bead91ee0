package daemon

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/toolclad"
)

// FuzzFront: whatever a request's method, path, headers and body, the
// front answers without panicking, and nothing but a request with an
// agent's token reaches /mcp's handler (no session is opened otherwise);
// nothing but the health check answers 200 without a credential.
func FuzzFront(f *testing.F) {
	var doc strings.Builder
	doc.WriteString("[agents.a]\ntoken_sha256 = \"" + toolclad.TokenHash("a-token") + "\"\n")
	as, err := toolclad.ParseAgents("agents.toml", []byte(doc.String()))
	if err != nil {
		f.Fatal(err)
	}
	ops, err := toolclad.ParseOperators("ops", []byte("olga:"+olgaToken+"\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("POST", "/mcp", "Bearer a-token", "", "", initialize)
	f.Add("POST", "/mcp", "Bearer nope", "http://evil.example", "", initialize)
	f.Add("GET", "/events", "Bearer "+olgaToken, "", "", "")
	f.Add("POST", "/console/login", "", "", "same-origin", "token="+olgaToken)
	f.Add("OPTIONS", "/mcp", "", "http://app.example", "", "")
	f.Add("GET", "/console/s/x/sessions/y", "", "", "", "")
	f.Add("DELETE", "/mcp", "bearer  a-token ", "", "", "")
	front := serve(f, Config{Agents: func() *toolclad.Agents { return as }, Operators: func() *toolclad.Operators { return ops },
		Events: events.NewHub(0), Broker: approval.NewBroker(nil), AllowedOrigins: []string{"http://app.example"}})
	h := front.Handler()
	f.Fuzz(func(t *testing.T, method, path, authz, origin, fetchSite, body string) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // no client can send it
		}
		req := httptest.NewRequest(method, "http://"+front.Addr().String()+path, strings.NewReader(body))
		for k, v := range map[string]string{"Authorization": authz, "Origin": origin, "Sec-Fetch-Site": fetchSite} {
			if v != "" && !strings.ContainsAny(v, "\r\n") {
				req.Header.Set(k, v)
			}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		agentToken := strings.Contains(authz, "a-token")
		if rec.Header().Get("Mcp-Session-Id") != "" && !agentToken {
			t.Fatalf("%s %s with Authorization %q opened a session", method, path, authz)
		}
		if rec.Code == http.StatusOK && path != "/healthz" && !agentToken && !strings.Contains(authz, olgaToken) && !strings.HasPrefix(path, "/console/login") && !strings.HasPrefix(path, "/console/static/") {
			t.Fatalf("%s %s with Authorization %q got 200", method, path, authz)
		}
	})
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`

func validMethod(m string) bool {
	switch m {
	case "GET", "POST", "DELETE", "PUT", "OPTIONS", "HEAD", "PATCH":
		return true
	}
	return false
}
