package daemon

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// TestSessionRefusalSaysWhichLimit: the refusal names the limit reached,
// with its flag and value, how many sessions are open, and what to do;
// under both limits there is none.
func TestSessionRefusalSaysWhichLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		mine, total   int
		want, notWant []string
		allowed       bool
	}{
		{name: "under both", mine: 1, total: 5, allowed: true},
		{name: "agent's limit", mine: 2, total: 5, want: []string{`agent "alice" has 2 MCP sessions open`, "(--max-sessions-per-agent 2)", "DELETE /mcp", "idle for 30m0s"}},
		{name: "daemon's limit", mine: 1, total: 10, want: []string{"the daemon has 10 MCP sessions open", "(--max-sessions 10)", "try again in 30 seconds", "the sessions open keep working"},
			notWant: []string{"alice"}},
		{name: "both: the agent's is named", mine: 2, total: 10, want: []string{"--max-sessions-per-agent 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := sessionRefusal("alice", tc.mine, tc.total, 2, 10, 30*time.Minute)
			if (msg == "") != tc.allowed {
				t.Fatalf("refusal %q, want allowed=%v", msg, tc.allowed)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal %q lacks %q", msg, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("refusal %q holds %q", msg, w)
				}
			}
		})
	}
}

// TestSessionRefusalOverRawHTTP: a JSON-RPC initialize past the limit is
// answered with a JSON-RPC error holding the reason (and Retry-After),
// and no session; a body that is no JSON-RPC request gets 429 with the
// reason as text.
func TestSessionRefusalOverRawHTTP(t *testing.T) {
	t.Parallel()
	f := front(t, 1, 10)
	if _, err := open(f, "a-token"); err != nil {
		t.Fatal(err)
	}
	post := func(body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", f.URL()+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer a-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post(`{"jsonrpc":"2.0","id":"init-7","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if resp.Header.Get("Mcp-Session-Id") != "" || resp.Header.Get("Retry-After") != "30" ||
		!strings.Contains(body, `"id":"init-7"`) || !strings.Contains(body, `"code":-32001`) ||
		!strings.Contains(body, `new MCP session refused: agent \"a\" has 1 MCP sessions open`) {
		t.Errorf("initialize past the limit: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	resp, body = post(`not json`)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "30" || !strings.Contains(body, "new MCP session refused") {
		t.Errorf("a body that is no JSON-RPC request, past the limit: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
}

// TestCallsPerSessionBounded: with two calls of a session under way (one
// running, one waiting for it), a third is refused at once with a tool
// error that names the limit, while another session's calls run; when
// the two end, the session takes calls again.
func TestCallsPerSessionBounded(t *testing.T) {
	t.Parallel()
	var doc strings.Builder
	for _, id := range []string{"a", "b"} {
		doc.WriteString("[agents." + id + "]\ntoken_sha256 = \"" + toolclad.TokenHash(id+"-token") + "\"\n")
	}
	as, err := toolclad.ParseAgents("agents.toml", []byte(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	entered := make(chan string, 8)
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	var sessionMu sync.Map // session id -> *sync.Mutex: calls of a session run one at a time, as the executor's do
	mcp.AddTool(server, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{ Wait bool }) (*mcp.CallToolResult, any, error) {
		mu, _ := sessionMu.LoadOrStore(req.Session.ID(), &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
		entered <- req.Session.ID()
		if in.Wait {
			<-release
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	f, err := Listen(Config{Addr: "127.0.0.1:0", Server: server, Agents: func() *toolclad.Agents { return as }, MaxCallsPerSession: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	a, err := open(f, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := open(f, "b-token")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	call := func(cs *mcp.ClientSession, wait bool) (string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{"Wait": wait}})
		if err != nil {
			return err.Error(), true
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	type answer struct {
		text    string
		refused bool
	}
	answers := make(chan answer, 3)
	go func() { t, r := call(a, true); answers <- answer{t, r} }()
	<-entered // the first runs, and holds the session
	// Two more at once: one waits behind the first, the other is past
	// the limit of 2, whichever comes first.
	for range 2 {
		go func() { t, r := call(a, true); answers <- answer{t, r} }()
	}
	first := <-answers
	if !first.refused || !strings.Contains(first.text, "this MCP session has 2 tool calls under way, its limit (--max-calls-per-session 2)") {
		t.Fatalf("the first answer with 2 calls under way: %+v, want the refusal", first)
	}
	if text, refused := call(b, false); refused || text != "done" {
		t.Errorf("another session's call meanwhile: %q %v", text, refused)
	}
	close(release)
	for range 2 {
		if got := <-answers; got.refused || got.text != "done" {
			t.Errorf("a call under the limit: %+v", got)
		}
	}
	if text, refused := call(a, false); refused || text != "done" {
		t.Errorf("the session's call after its calls ended: %q %v", text, refused)
	}
}
