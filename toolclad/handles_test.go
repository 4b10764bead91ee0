package toolclad_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// bookOfOne is a handle book holding the handle "h1" alone.
type bookOfOne struct{ closed []string }

func (b *bookOfOne) Open(context.Context, string) (string, error) { return "h1", nil }
func (b *bookOfOne) Check(h, _ string) (func(), error) {
	if h != "h1" {
		return nil, errors.New("no such browser session")
	}
	return func() {}, nil
}
func (b *bookOfOne) Close(h, agent string) error {
	b.closed = append(b.closed, h)
	_, err := b.Check(h, agent)
	return err
}

// TestHandleToolsRunInTheirHandle: a tool set serving handles runs a call
// in the session its browser_session names, with the command's own
// arguments alone; a call without a handle, or with one the book refuses,
// never reaches the runner.
func TestHandleToolsRunInTheirHandle(t *testing.T) {
	m := mustParse(t, "m.toml", `
[tool]
name = "docs"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.navigate]
`)
	r := &fakeRunner{ended: make(chan string, 4)}
	book := &bookOfOne{}
	cs := connect(t, r, toolclad.RegisterOptions{Handles: book}, nil, m)
	ctx := context.Background()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := call("browser_session_open", nil); res.IsError || res.StructuredContent.(map[string]any)["browser_session"] != "h1" {
		t.Fatalf("open: %s", textOf(res))
	}
	for _, args := range []map[string]any{{"url": "https://example.com/"}, {"url": "https://example.com/", "browser_session": "h2"}, {"browser_session": 7}} {
		if res := call("docs.navigate", args); !res.IsError {
			t.Errorf("navigate with %v ran: %s", args, textOf(res))
		}
	}
	// An undeclared tool with a refused handle is refused before the
	// runner too.
	if res := call("docs.click", map[string]any{"browser_session": "h2"}); !res.IsError || !strings.Contains(textOf(res), "no such browser session") {
		t.Errorf("docs.click with a refused handle: %s", textOf(res))
	}
	r.mu.Lock()
	n := len(r.calls)
	r.mu.Unlock()
	if n != 0 {
		t.Fatalf("the runner saw %d calls without a good handle", n)
	}
	if res := call("docs.navigate", map[string]any{"url": "https://example.com/", "browser_session": "h1"}); res.IsError {
		t.Fatalf("navigate in h1: %s", textOf(res))
	}
	got := r.last(t)
	if got.SessionID != "h1" || got.Args["url"] != "https://example.com/" || got.Args["browser_session"] != nil || got.RawArgs["browser_session"] != nil {
		t.Errorf("the runner got session %q, args %v (raw %v)", got.SessionID, got.Args, got.RawArgs)
	}
	if res := call("browser_session_close", map[string]any{"browser_session": "h1"}); res.IsError || len(book.closed) != 1 {
		t.Errorf("close: %s (closed %v)", textOf(res), book.closed)
	}
}
