package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handleFront serves a front with a stateless server and its handles;
// ended gets the handles whose sessions ended.
func handleFront(t *testing.T, cfg Config, ended *[]string) (*Front, *Handles) {
	t.Helper()
	var mu sync.Mutex
	hs := NewHandles(func(id, _ string) { mu.Lock(); *ended = append(*ended, id); mu.Unlock() })
	cfg.Agents = agentsOf(t, "a", "b")
	cfg.Stateless, cfg.Handles = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil), hs
	return serve(t, cfg), hs
}

// openStateful opens an MCP session of the 2025-11-25 revision.
func openStateful(f *Front, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: withToken(token)}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// TestHandlesCountAsSessions: browser-session handles and MCP sessions
// share the agent's limit; a closed handle frees its place, ends its
// session and no longer works; a handle is its agent's alone.
func TestHandlesCountAsSessions(t *testing.T) {
	var ended []string
	f, hs := handleFront(t, Config{MaxSessionsPerAgent: 2, Replica: "r7"}, &ended)
	cs, err := openStateful(f, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	h, err := hs.Open(ctx, "a")
	if err != nil || !strings.HasPrefix(h, "r7-") {
		t.Fatalf("open: %q %v, want a handle of r7", h, err)
	}
	if _, err := hs.Open(ctx, "a"); err == nil || !strings.Contains(err.Error(), "new browser session refused") ||
		!strings.Contains(err.Error(), "has 2 sessions open (MCP sessions and browser sessions)") || !strings.Contains(err.Error(), "end one (browser_session_close)") {
		t.Errorf("a's third session: %v, want refused at 2", err)
	}
	if _, err := hs.Open(ctx, "b"); err != nil {
		t.Errorf("b's first: %v", err)
	}
	if _, err := hs.Check(h, "b"); !errors.Is(err, ErrNoHandle) {
		t.Errorf("b with a's handle: %v", err)
	}
	if err := hs.Close(h, "b"); !errors.Is(err, ErrNoHandle) {
		t.Errorf("b closed a's handle: %v", err)
	}
	done, err := hs.Check(h, "a")
	if err != nil {
		t.Fatalf("a's handle: %v", err)
	}
	// Closed with a call under way: no call starts with it any more, and
	// its session ends once the call is done.
	if err := hs.Close(h, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Check(h, "a"); !errors.Is(err, ErrNoHandle) {
		t.Errorf("a closed handle: %v", err)
	}
	if len(ended) != 0 {
		t.Errorf("the session ended with a call under way: %v", ended)
	}
	done()
	if len(ended) != 1 || ended[0] != h {
		t.Errorf("sessions ended %v, want %s", ended, h)
	}
	if _, err := hs.Open(ctx, "a"); err != nil {
		t.Errorf("a's session after one closed: %v", err)
	}
}

// TestHandlesEndWhenIdle: a handle unused for the idle timeout ends (its
// session too) and frees its place; one in use does not.
func TestHandlesEndWhenIdle(t *testing.T) {
	var ended []string
	f, hs := handleFront(t, Config{MaxSessionsPerAgent: 2, SessionIdle: time.Hour}, &ended)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hs.mu.Lock()
	hs.now = func() time.Time { return now }
	hs.mu.Unlock()
	ctx := context.Background()
	idle, _ := hs.Open(ctx, "a")
	used, _ := hs.Open(ctx, "a")
	now = now.Add(50 * time.Minute)
	done, err := hs.Check(used, "a")
	if err != nil {
		t.Fatal(err)
	}
	// A call that outlasts the idle time keeps its handle.
	now = now.Add(2 * time.Hour)
	hs.expire(f.cfg.SessionIdle)
	if len(ended) != 1 || ended[0] != idle {
		t.Fatalf("ended %v, want %s alone", ended, idle)
	}
	done()
	if _, err := hs.Check(idle, "a"); err == nil || !strings.Contains(err.Error(), "ended after 1h0m0s idle") {
		t.Errorf("the idle handle: %v", err)
	}
	if _, err := hs.Check(used, "a"); err != nil {
		t.Errorf("the handle in use: %v", err)
	}
	if _, err := hs.Open(ctx, "a"); err != nil {
		t.Errorf("a session in the idle one's place: %v", err)
	}
}

// TestHandlesTakeTheFleetsLeases: with the fleet's leases, a handle takes
// one (counted with the other replica's sessions), renewals keep it while
// the handle is open, and closing it drops it at once.
func TestHandlesTakeTheFleetsLeases(t *testing.T) {
	leases := &memLeases{agent: map[string]string{}, every: 30 * time.Millisecond}
	var ended []string
	_, hs := handleFront(t, Config{MaxSessionsPerAgent: 2, Leases: leases}, &ended)
	other := serve(t, Config{Agents: agentsOf(t, "a"), MaxSessionsPerAgent: 2, Leases: leases})
	cs, err := open(other, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ctx := context.Background()
	h, err := hs.Open(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // renewals run; the lease stays
	if _, err := hs.Open(ctx, "a"); err == nil || !strings.Contains(err.Error(), "new browser session refused: agent \"a\" has 2 sessions open (MCP sessions and browser sessions) across the fleet") {
		t.Errorf("a's third session across the fleet: %v", err)
	}
	if err := hs.Close(h, "a"); err != nil {
		t.Fatal(err)
	}
	leases.mu.Lock()
	n := len(leases.agent)
	leases.mu.Unlock()
	if n != 1 {
		t.Errorf("%d leases after the handle closed, want the other replica's alone", n)
	}
}

// TestCallLimitCountsTheHandleTheCallRunsIn: the call limit counts a
// stateless call under the handle it runs in, by the exact key the tool
// set reads, whatever other keys spelled like it the arguments hold.
func TestCallLimitCountsTheHandleTheCallRunsIn(t *testing.T) {
	for args, want := range map[string]string{
		`{"browser_session":"h1","url":"x"}`:              "a\x00h1",
		`{"browser_session":"h1","BROWSER_SESSION":"x7"}`: "a\x00h1",
		`{"BROWSER_SESSION":"h1"}`:                        "",
		`{"browser_session":5}`:                           "",
	} {
		r := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t.navigate", Arguments: json.RawMessage(args)}}
		if got := callSession(r, "a"); got != want {
			t.Errorf("%s: counted under %q, want %q", args, got, want)
		}
	}
}

// TestStatelessStreamsAreBounded: a stateless client's
// subscriptions/listen stream stays open as a session's event stream
// does; an agent may hold at most --max-sessions-per-agent of them.
func TestStatelessStreamsAreBounded(t *testing.T) {
	var ended []string
	f, _ := handleFront(t, Config{MaxSessionsPerAgent: 1}, &ended)
	f.cfg.Stateless.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	// The SDK's client opens its stream as it connects, when it wants to
	// hear of changes to the tools.
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: withToken("a-token")}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	listen := func() string {
		req, _ := http.NewRequest("POST", f.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`))
		req.Header.Set("Authorization", "Bearer a-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if out := listen(); !strings.Contains(out, "subscriptions/listen refused") {
		t.Errorf("a second stream of the agent: %s, want refused", out)
	}
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(listen(), "subscriptions/listen refused") {
		if time.Now().After(deadline) {
			t.Fatal("a stream is still refused after the first closed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
