package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerLog keeps the Mcp-Param-Browser-Session header of each tool call
// a client sent, by the tool's name (Mcp-Name).
type headerLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	sent map[string][]string
}

func (h *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Method") == "tools/call" {
		h.mu.Lock()
		h.sent[r.Header.Get("Mcp-Name")] = append(h.sent[r.Header.Get("Mcp-Name")], r.Header.Get("Mcp-Param-Browser-Session"))
		h.mu.Unlock()
	}
	return h.base.RoundTrip(r)
}

// dialStateless connects as the agent of token with the SDK's client as it
// is (it speaks the newest revision it knows, 2026-07-28, when the server
// does), through headers (nil: none kept).
func dialStateless(t *testing.T, url, token string, headers *headerLog) *mcp.ClientSession {
	t.Helper()
	return dialStatelessTB(t, url, token, headers)
}

// dialStatelessTB is dialStateless for a test or a benchmark.
func dialStatelessTB(t testing.TB, url, token string, headers *headerLog) *mcp.ClientSession {
	t.Helper()
	var tr http.RoundTripper = bearerTransport{token: token}
	if headers != nil {
		headers.base = tr
		tr = headers
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-stateless", Version: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect as %s: %v", token, err)
	}
	t.Cleanup(func() { cs.Close() })
	// The client copies an argument into its header only for a tool it
	// has listed.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("list tools: %v", err)
	}
	return cs
}

// openHandle opens a browser session and returns its handle.
func openHandle(t testing.TB, cs *mcp.ClientSession) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_session_open"})
	if err != nil {
		t.Fatalf("browser_session_open: %v", err)
	}
	if res.IsError {
		return "", resultText(res)
	}
	h, _ := res.StructuredContent.(map[string]any)["browser_session"].(string)
	if h == "" {
		t.Fatalf("browser_session_open gave no handle: %s", resultText(res))
	}
	return h, ""
}

// TestStatelessClientsUseBrowserSessionHandles: with --stateless-clients,
// a client of MCP's 2026-07-28 revision (the SDK's own, as it is) keeps no
// MCP session; it opens browser sessions as handles that start with the
// replica's name, passes one to every tool (the client copies it into
// Mcp-Param-Browser-Session, as the tools' schemas ask), and each handle
// is one browser session of its agent alone, counted against the session
// limits, ended when closed. A client of an earlier revision is served
// with MCP sessions, as before.
func TestStatelessClientsUseBrowserSessionHandles(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--stateless-clients", "--replica", "r1", "--max-sessions-per-agent", "2")
	site, _ := serveLogged(t, map[string]string{
		"/one": `<title>one</title><p>the first page</p>`,
		"/two": `<title>two</title><p>the second page</p>`,
	})
	headers := &headerLog{sent: map[string][]string{}}
	alice := dialStateless(t, d.url, "alice-token", headers)
	if v := alice.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol version %q, want 2026-07-28", v)
	}
	if alice.ID() != "" {
		t.Errorf("a stateless client got MCP session %q", alice.ID())
	}

	tools, err := alice.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var navigate *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "e2e.navigate" {
			navigate = tool
		}
	}
	if navigate == nil {
		t.Fatal("no e2e.navigate tool")
	}
	schema, _ := json.Marshal(navigate.InputSchema)
	if !strings.Contains(string(schema), `"browser_session":{`) || !strings.Contains(string(schema), `"x-mcp-header":"Browser-Session"`) ||
		!strings.Contains(string(schema), `"required":["browser_session","url"]`) {
		t.Errorf("navigate's input schema does not ask for the handle in a header:\n%s", schema)
	}

	if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"url": site + "/one"}); !refused || !strings.Contains(out, "missing argument browser_session") {
		t.Errorf("navigate without a handle: %v %s", refused, out)
	}

	shape := regexp.MustCompile(`^r1-[A-Z2-7]{26}$`)
	h1, msg := openHandle(t, alice)
	h2, msg2 := openHandle(t, alice)
	if msg != "" || msg2 != "" {
		t.Fatalf("open: %s %s", msg, msg2)
	}
	for _, h := range []string{h1, h2} {
		if !shape.MatchString(h) {
			t.Errorf("handle %q, want r1-<26 base32 characters>", h)
		}
	}
	for h, page := range map[string]string{h1: "/one", h2: "/two"} {
		if out, refused := callText(t, alice, "e2e.navigate", map[string]any{"browser_session": h, "url": site + page + "?s=" + h}); refused {
			t.Fatalf("navigate in %s: %s", h, out)
		}
	}
	// Each handle is its own browser session.
	for h, want := range map[string]string{h1: "the first page", h2: "the second page"} {
		if out, refused := callText(t, alice, "e2e.snapshot", map[string]any{"browser_session": h}); refused || !strings.Contains(out, want) {
			t.Errorf("snapshot in %s: %v, want %q:\n%s", h, refused, want, out)
		}
	}
	headers.mu.Lock()
	sent := slices.Clone(headers.sent["e2e.snapshot"])
	headers.mu.Unlock()
	if !slices.Contains(sent, h1) || !slices.Contains(sent, h2) {
		t.Errorf("the snapshots' Mcp-Param-Browser-Session headers were %q, want %s and %s", sent, h1, h2)
	}

	// Past the agent's limit, no handle.
	if _, msg := openHandle(t, alice); !strings.Contains(msg, "new browser session refused") || !strings.Contains(msg, "--max-sessions-per-agent 2") {
		t.Errorf("a third browser session of alice: %q, want refused by --max-sessions-per-agent 2", msg)
	}

	// Another agent holding alice's handle gets nothing of it.
	bob := dialStateless(t, d.url, "bob-token", nil)
	if out, refused := callText(t, bob, "e2e.snapshot", map[string]any{"browser_session": h1}); !refused || !strings.Contains(out, "no such browser session") || strings.Contains(out, "first page") {
		t.Errorf("bob with alice's handle: %v %s", refused, out)
	}
	if out, refused := callText(t, bob, "browser_session_close", map[string]any{"browser_session": h1}); !refused {
		t.Errorf("bob closed alice's handle: %s", out)
	}
	if out, refused := callText(t, alice, "e2e.snapshot", map[string]any{"browser_session": h1}); refused || !strings.Contains(out, "the first page") {
		t.Errorf("alice's session after bob's tries: %v %s", refused, out)
	}
	// A handle of another replica is refused, saying where it is from.
	if out, refused := callText(t, alice, "e2e.snapshot", map[string]any{"browser_session": "r2-" + strings.Repeat("A", 26)}); !refused || !strings.Contains(out, "opened on replica r2") {
		t.Errorf("a handle of r2: %v %s", refused, out)
	}

	// Closed, a handle is gone and its place is free.
	if out, refused := callText(t, alice, "browser_session_close", map[string]any{"browser_session": h2}); refused {
		t.Fatalf("close %s: %s", h2, out)
	}
	if out, refused := callText(t, alice, "e2e.snapshot", map[string]any{"browser_session": h2}); !refused || !strings.Contains(out, "no such browser session") {
		t.Errorf("a closed handle: %v %s", refused, out)
	}
	if h3, msg := openHandle(t, alice); h3 == "" {
		t.Errorf("a browser session after one was closed: %s", msg)
	}

	// A client of an earlier revision gets an MCP session, and no handle
	// is asked of it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-stateful", Version: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: d.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: "bob-token"}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if !shape.MatchString(old.ID()) {
		t.Errorf("a 2025-11-25 client's MCP session id %q", old.ID())
	}
	if out, refused := callText(t, old, "e2e.navigate", map[string]any{"url": site + "/two?s=stateful"}); refused {
		t.Errorf("navigate in an MCP session: %s", out)
	}

	d.stop(t)
	got := evidenceBySession(t, d.evidence)
	for _, s := range []string{h1, h2, "stateful"} {
		if len(got[s]) == 0 || got[s][0] != "navigate" {
			t.Errorf("evidence of %s: %v, want its navigate and snapshots", s, got[s])
		}
	}
	if len(got) != 3 {
		t.Errorf("evidence sessions %v, want those of %s, %s and the MCP session", got, h1, h2)
	}
}

// TestStatelessClientsAnswerQuestionsInTheCall: with --elicitation, a
// call held for a human asks a stateless client's user in the call's
// result (the 2026-07-28 revision has no server-to-client requests); the
// SDK's client asks its handler and calls again with the answer and the
// same handle, and the call runs, recorded as approved by the user named.
func TestStatelessClientsAnswerQuestionsInTheCall(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), `
@id("scroll-needs-approval")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "scroll" } unless { resource.human_approved == true };
`, "--stateless-clients", "--elicitation", "--approval-timeout", "20s")
	site, _ := serveLogged(t, map[string]string{"/p": `<title>p</title><p>a page</p>`})
	var mu sync.Mutex
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-stateless", Version: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved_by": "carol"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token: "alice-token"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	h, msg := openHandle(t, cs)
	if h == "" {
		t.Fatal(msg)
	}
	if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"browser_session": h, "url": site + "/p"}); refused {
		t.Fatalf("navigate: %s", out)
	}
	if out, refused := callText(t, cs, "e2e.scroll", map[string]any{"browser_session": h, "direction": "down"}); refused {
		t.Fatalf("scroll, approved by the client's user: %s", out)
	}
	mu.Lock()
	n := len(asked)
	mu.Unlock()
	if n != 1 || !strings.Contains(asked[0], "scroll-needs-approval") {
		t.Errorf("the client's user was asked %q, want once about scroll-needs-approval", asked)
	}
	d.stop(t)
	if as := approvalsIn(t, d.evidence); len(as) != 1 || !as[0].Approved || as[0].Channel != "elicitation" || as[0].By != "carol (as the MCP client reports)" {
		t.Errorf("evidence approvals = %+v, want one by carol through elicitation", as)
	}
}

// TestStatelessClientsBehindHAProxy: through the shipped HAProxy
// configuration, stateless clients' browser sessions land on both
// replicas, and every call reaches the replica that holds its handle
// (routed on Mcp-Param-Browser-Session): no "no such browser session".
// When r1 is killed, a call with one of its handles is refused by r2,
// saying so, and a new handle opened through HAProxy works on r2.
func TestStatelessClientsBehindHAProxy(t *testing.T) {
	t.Parallel()
	f := startFleet(t, "--stateless-clients")
	site := fleetSite(t)
	cs := dialStateless(t, f.front, "alice-token", nil)
	on := map[string][]string{}
	for range 6 {
		h, msg := openHandle(t, cs)
		if h == "" {
			t.Fatalf("open through HAProxy: %s", msg)
		}
		on[replicaOf(h)] = append(on[replicaOf(h)], h)
	}
	if len(on["r1"]) == 0 || len(on["r2"]) == 0 {
		t.Fatalf("the browser sessions landed on %v, want both replicas", on)
	}
	var wg sync.WaitGroup
	for _, hs := range on {
		for _, h := range hs {
			wg.Go(func() {
				for n := range 3 {
					if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"browser_session": h, "url": site + "/p?s=" + h}); refused {
						t.Errorf("navigate %d in %s: %s", n, h, out)
					}
					if out, refused := callText(t, cs, "e2e.snapshot", map[string]any{"browser_session": h}); refused || !strings.Contains(out, "a page") {
						t.Errorf("snapshot %d in %s: %v %s", n, h, refused, out)
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	r1 := f.replicas["r1"]
	if err := r1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = r1.cmd.Wait()
	out, refused := callText(t, cs, "e2e.snapshot", map[string]any{"browser_session": on["r1"][0]})
	if !refused || !strings.Contains(out, "opened on replica r1 and this is r2") {
		t.Errorf("a call with r1's handle after r1 died: %v %s", refused, out)
	}
	h, msg := openHandle(t, cs)
	if replicaOf(h) != "r2" {
		t.Fatalf("a new handle after r1 died: %q %s", h, msg)
	}
	if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"browser_session": h, "url": site + "/p"}); refused {
		t.Errorf("navigate in the new handle: %s", out)
	}
	for _, h := range on["r2"] {
		if out, refused := callText(t, cs, "e2e.snapshot", map[string]any{"browser_session": h}); refused || !strings.Contains(out, "a page") {
			t.Errorf("r2's %s after r1 died: %v %s", h, refused, out)
		}
	}
}

// BenchmarkCallOverHTTP is a snapshot of a small page over HTTP through
// the real binary, in an MCP session and in a stateless client's
// browser-session handle (each of its requests an ephemeral server
// session): what the stateless revision costs a call.
func BenchmarkCallOverHTTP(b *testing.B) {
	d := startHTTP(b, inputManifest(), "", "--stateless-clients")
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<title>p</title><p>a page</p><a href="/q">next</a>`)
	}))
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	run := func(b *testing.B, cs *mcp.ClientSession, args map[string]any) {
		nav := maps.Clone(args)
		nav["url"] = site + "/p"
		if out, refused := callText(b, cs, "e2e.navigate", nav); refused {
			b.Fatal(out)
		}
		b.ResetTimer()
		for range b.N {
			if out, refused := callText(b, cs, "e2e.snapshot", args); refused {
				b.Fatal(out)
			}
		}
	}
	b.Run("mcp-session", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: d.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: "alice-token"}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		run(b, cs, map[string]any{})
	})
	b.Run("handle", func(b *testing.B) {
		cs := dialStatelessTB(b, d.url, "alice-token", nil)
		h, msg := openHandle(b, cs)
		if h == "" {
			b.Fatal(msg)
		}
		run(b, cs, map[string]any{"browser_session": h})
	})
}
