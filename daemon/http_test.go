package daemon

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// front serves an MCP server with no tools for the agents a, b and c
// (tokens "a-token", ...), with the given limits.
func front(t *testing.T, perAgent, total int) *Front {
	t.Helper()
	return serve(t, Config{Agents: agentsOf(t, "a", "b", "c"), MaxSessionsPerAgent: perAgent, MaxSessions: total})
}

// agentsOf is an agents file of the agents ids, each with the token
// "<id>-token".
func agentsOf(t *testing.T, ids ...string) func() *toolclad.Agents {
	t.Helper()
	var doc strings.Builder
	for _, id := range ids {
		doc.WriteString("[agents." + id + "]\ntoken_sha256 = \"" + toolclad.TokenHash(id+"-token") + "\"\n")
	}
	as, err := toolclad.ParseAgents("agents.toml", []byte(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	return func() *toolclad.Agents { return as }
}

// serve listens on a port of 127.0.0.1 the system chooses with cfg and an
// MCP server with no tools, and serves until the test ends.
func serve(t testing.TB, cfg Config) *Front {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.Server = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	f, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

type withToken string

func (w withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(w))
	return http.DefaultTransport.RoundTrip(r)
}

func open(f *Front, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: withToken(token)}, MaxRetries: -1}, nil)
}

// TestSessionLimits: an agent at its limit is refused a new session (the
// MCP client is told which limit, and how many are open) while another
// agent is not; the daemon's total limit holds across
// agents; a session the client ends frees its place.
func TestSessionLimits(t *testing.T) {
	f := front(t, 2, 3)
	refused := func(err error) bool { return err != nil && strings.Contains(err.Error(), "new MCP session refused") }
	a1, err := open(f, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(f, "a-token"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(f, "a-token"); !refused(err) || !strings.Contains(err.Error(), `agent "a" has 2 MCP sessions open, its limit (--max-sessions-per-agent 2)`) {
		t.Errorf("a's third session: %v, want a refusal that names the limit", err)
	}
	if _, err := open(f, "b-token"); err != nil {
		t.Errorf("b's first session: %v", err)
	}
	if _, err := open(f, "c-token"); !refused(err) || !strings.Contains(err.Error(), "the daemon has 3 MCP sessions open, its limit (--max-sessions 3)") {
		t.Errorf("c's session past the total of 3: %v, want a refusal that names the limit", err)
	}
	if err := a1.Close(); err != nil {
		t.Fatal(err)
	}
	// The server forgets the closed session as the DELETE is served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs, err := open(f, "c-token")
		if err == nil {
			cs.Close()
			break
		}
		if !refused(err) || time.Now().After(deadline) {
			t.Fatalf("c's session after a's ended: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := open(f, "nobody"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("a session without a valid token: %v", err)
	}
}

// TestListenNeedsTLSBeyondLoopback: an address that is not loopback is
// refused without TLS, before anything listens.
func TestListenNeedsTLSBeyondLoopback(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	agents := func() *toolclad.Agents { return nil }
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		_, err := Listen(Config{Addr: addr, Server: srv, Agents: agents})
		if !errors.Is(err, ErrNeedsTLS) {
			t.Errorf("%s: %v, want ErrNeedsTLS", addr, err)
		}
	}
	if _, err := Listen(Config{Addr: "127.0.0.1:0", Server: srv, Agents: agents, TLSCert: "c.pem"}); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a certificate without a key: %v", err)
	}
}

func TestBearer(t *testing.T) {
	for h, want := range map[string]string{
		"Bearer abc": "abc", "bearer  abc ": "abc", "Bearer": "", "Bearer a b": "", "Basic abc": "", "": "",
	} {
		if got, ok := bearer(h); got != want || ok != (want != "") {
			t.Errorf("bearer(%q) = %q, %v", h, got, ok)
		}
	}
}
