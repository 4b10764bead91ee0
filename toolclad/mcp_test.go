package toolclad_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// fakeRunner records every call and answers with a canned reply.
type fakeRunner struct {
	mu    sync.Mutex
	calls []*toolclad.Call
	reply func(*toolclad.Call) *toolclad.Reply
	ended chan string
}

func (f *fakeRunner) Run(_ context.Context, call *toolclad.Call) *toolclad.Reply {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if call.ArgErr != nil {
		return &toolclad.Reply{Text: toolclad.RefusalText(call.ArgErr), IsError: true}
	}
	if call.Command == nil {
		return &toolclad.Reply{Text: "refused: " + call.Tool + " is not declared", IsError: true}
	}
	call.Progress("working")
	if f.reply != nil {
		return f.reply(call)
	}
	return &toolclad.Reply{Text: "ok " + call.Command.Name}
}

func (f *fakeRunner) EndSession(id string) { f.ended <- id }

func (f *fakeRunner) last(t *testing.T) *toolclad.Call {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("the runner saw no call")
	}
	return f.calls[len(f.calls)-1]
}

const outputManifest = `
[tool]
name = "out"
mode = "browser"
[browser.commands.list_tabs]
[output.schema]
type = "object"
required = ["tabs"]
properties.tabs = { type = "integer" }
`

// connect serves the manifests with a real MCP server and returns a real
// client session over in-memory transports.
func connect(t *testing.T, r toolclad.Runner, opts toolclad.RegisterOptions, progress chan<- string, ms ...*toolclad.Manifest) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "browsergate-test", Version: "0"}, nil)
	if err := toolclad.Register(srv, ms, r, opts); err != nil {
		t.Fatalf("Register: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress <- req.Params.Message
			}
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestRegister drives the tools through a real MCP client: the tool list,
// a refused call (the runner still sees it, with ArgErr), a good call (the
// runner sees validated arguments), progress, output-schema checks, and the
// end of the session.
func TestRegister(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	web := mustLoad(t, "../examples/web-app-testing.toml")
	out, err := toolclad.Parse("out.toml", []byte(outputManifest))
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRunner{ended: make(chan string, 4)}
	r.reply = func(*toolclad.Call) *toolclad.Reply {
		return &toolclad.Reply{Text: "ok", Structured: map[string]any{"tabs": 2}, Image: []byte{0x89, 'P', 'N', 'G'}}
	}
	progress := make(chan string, 16)
	cs := connect(t, r, toolclad.RegisterOptions{}, progress, web, out)

	t.Run("list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			s, _ := tool.InputSchema.(map[string]any)
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Errorf("%s: input schema %v", tool.Name, s)
			}
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
		}
		sort.Strings(names)
		want := "out.list_tabs,webapp_test.click,webapp_test.navigate,webapp_test.snapshot,webapp_test.submit_form,webapp_test.type_text"
		if got := strings.Join(names, ","); got != want {
			t.Errorf("tools = %s, want %s", got, want)
		}
	})

	t.Run("bad arguments are refused and recorded", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webapp_test.navigate", Arguments: map[string]any{"url": "ftp://example.com/", "x": 1}})
		if err != nil {
			t.Fatal(err)
		}
		text := textOf(res)
		if !res.IsError || !strings.Contains(text, `argument "url"`) || !strings.Contains(text, "not allowed") || !strings.Contains(text, `argument "x"`) {
			t.Errorf("result = %v %q, want an error naming url and x", res.IsError, text)
		}
		call := r.last(t)
		if call.ArgErr == nil || call.Args != nil || call.RawArgs["url"] != "ftp://example.com/" {
			t.Errorf("runner saw %+v", call)
		}
		if rules := toolclad.ArgErrors(call.ArgErr); len(rules) != 2 || rules[0].Rule != "unknown" || rules[1].Rule != "schemes" {
			t.Errorf("ArgErrors = %v", call.ArgErr)
		}
	})

	t.Run("good arguments reach the runner validated", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webapp_test.click", Arguments: map[string]any{"ref": "e7"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("result is an error: %s", textOf(res))
		}
		call := r.last(t)
		if call.ArgErr != nil || call.Args["ref"] != "e7" || call.Tool != "webapp_test.click" || call.Manifest != web || call.SessionID == "" {
			t.Errorf("runner saw %+v", call)
		}
		if len(res.Content) != 2 {
			t.Errorf("content = %v, want text and image", res.Content)
		} else if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
			t.Errorf("second content = %#v", res.Content[1])
		}
		if s, _ := res.StructuredContent.(map[string]any); s["tabs"] != float64(2) {
			t.Errorf("structured = %#v", res.StructuredContent)
		}
	})

	t.Run("non-object arguments", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webapp_test.snapshot", Arguments: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || r.last(t).RawArgs != nil || r.last(t).ArgErr == nil {
			t.Errorf("result %v %q, runner saw %+v", res.IsError, textOf(res), r.last(t))
		}
	})

	t.Run("progress", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "webapp_test.snapshot", Arguments: map[string]any{}}
		params.SetProgressToken("p1")
		if _, err := cs.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		select {
		case msg := <-progress:
			if msg != "working" {
				t.Errorf("progress message %q", msg)
			}
		case <-time.After(10 * time.Second):
			t.Error("no progress notification")
		}
	})

	t.Run("output schema", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "out.list_tabs"})
		if err != nil || res.IsError {
			t.Fatalf("conforming output refused: %v %s", err, textOf(res))
		}
		r.mu.Lock()
		r.reply = func(*toolclad.Call) *toolclad.Reply {
			return &toolclad.Reply{Structured: map[string]any{"tabs": "two"}}
		}
		r.mu.Unlock()
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "out.list_tabs"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(textOf(res), "output schema") {
			t.Errorf("non-conforming output: %v %q", res.IsError, textOf(res))
		}
	})

	t.Run("end of session", func(t *testing.T) {
		id := r.last(t).SessionID
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-r.ended:
			if got != id {
				t.Errorf("EndSession(%q), want %q", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Error("EndSession was not called")
		}
	})
}

// TestRegisterSeparator proves the "_" form for LLM APIs that accept only
// [A-Za-z0-9_-] in function names.
func TestRegisterSeparator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := mustLoad(t, "../examples/debugging-live.toml")
	r := &fakeRunner{ended: make(chan string, 4)}
	cs := connect(t, r, toolclad.RegisterOptions{Separator: "_"}, nil, m)
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if !strings.HasPrefix(tool.Name, "page_debugger_") || strings.Contains(tool.Name, ".") {
			t.Errorf("tool name %q", tool.Name)
		}
	}
	got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "page_debugger_screenshot", Arguments: map[string]any{}})
	if err != nil || got.IsError {
		t.Fatalf("call: %v %v", err, got)
	}
	if call := r.last(t); call.Tool != "page_debugger_screenshot" || call.Args["full_page"] != false {
		t.Errorf("runner saw %+v", call)
	}
	if name := toolclad.ToolName(m, m.Command("snapshot"), ""); name != "page_debugger.snapshot" {
		t.Errorf("ToolName default = %q", name)
	}
}

// TestRegisterRefuses proves that Register adds nothing it would have to
// shadow or could not run.
func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, "../examples/debugging-live.toml")
	r := &fakeRunner{}
	tests := []struct {
		name string
		ms   []*toolclad.Manifest
		r    toolclad.Runner
		opts toolclad.RegisterOptions
		want error
	}{
		{"duplicate", []*toolclad.Manifest{m, m}, r, toolclad.RegisterOptions{}, toolclad.ErrDuplicateTool},
		{"separator", []*toolclad.Manifest{m}, r, toolclad.RegisterOptions{Separator: "/"}, toolclad.ErrBadSeparator},
		{"no runner", []*toolclad.Manifest{m}, nil, toolclad.RegisterOptions{}, toolclad.ErrNoRunner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
			if err := toolclad.Register(srv, tt.ms, tt.r, tt.opts); !errors.Is(err, tt.want) {
				t.Errorf("Register error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestUndeclaredToolReachesTheRunner: a call to a tool the server does not
// offer is not answered by the SDK alone (nothing would record it): the
// runner gets it, with no command and the manifest its name points into,
// and its refusal is the result.
func TestUndeclaredToolReachesTheRunner(t *testing.T) {
	m := mustParse(t, "m.toml", `
[tool]
name = "docs"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.navigate]
`)
	r := &fakeRunner{ended: make(chan string, 4)}
	cs := connect(t, r, toolclad.RegisterOptions{}, nil, m)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "docs.click", Arguments: map[string]any{"ref": "e1"}})
	if err != nil {
		t.Fatalf("docs.click: %v (want a tool result, not a protocol error)", err)
	}
	if !res.IsError || !strings.Contains(textOf(res), "docs.click is not declared") {
		t.Fatalf("docs.click: %+v", res)
	}
	call := r.last(t)
	if call.Command != nil || call.Tool != "docs.click" || call.Manifest != m || call.RawArgs["ref"] != "e1" {
		t.Fatalf("the runner saw %+v", call)
	}
	// A name that matches no manifest reaches the runner too.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "other.navigate"}); err != nil {
		t.Fatal(err)
	}
	if call := r.last(t); call.Tool != "other.navigate" || call.Manifest != nil {
		t.Fatalf("the runner saw %+v", call)
	}
}

// TestSetNotifiesOnlyWhenTheListChanges: replacing the manifests with ones
// whose tools are the same (a policy or scope edit) keeps the tools and
// tells the client nothing; a new command is announced.
func TestSetNotifiesOnlyWhenTheListChanges(t *testing.T) {
	src := `
[tool]
name = "docs"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.navigate]
`
	m1 := mustParse(t, "m.toml", src)
	r := &fakeRunner{ended: make(chan string, 4)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	ts, err := toolclad.NewToolSet(srv, r, toolclad.RegisterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Set([]*toolclad.Manifest{m1}); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	var mu sync.Mutex
	count := 0
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			mu.Lock()
			count++
			mu.Unlock()
			changed <- struct{}{}
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	// A change the tools do not show (navigate's description names the
	// scope, so a scope change would show).
	m2 := mustParse(t, "m.toml", strings.Replace(src, "[browser.scope]", "[browser]\nmax_interactions = 7\n[browser.scope]", 1))
	if err := ts.Set([]*toolclad.Manifest{m2}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)                                 // the SDK sends list_changed 10 ms after a change
	if _, err := cs.ListTools(context.Background(), nil); err != nil { // a round trip: anything sent before has arrived
		t.Fatal(err)
	}
	mu.Lock()
	if count != 0 {
		t.Fatalf("a reload with the same tools sent %d list_changed notification(s)", count)
	}
	mu.Unlock()
	// The unchanged tool now runs the new manifest's command.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "docs.navigate", Arguments: map[string]any{"url": "https://example.com/"}}); err != nil {
		t.Fatal(err)
	}
	if call := r.last(t); call.Manifest != m2 {
		t.Fatal("the unchanged tool still runs the old manifest")
	}

	m3 := mustParse(t, "m.toml", src+"[browser.commands.snapshot]\n")
	if err := ts.Set([]*toolclad.Manifest{m3}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("a new command was never announced with list_changed")
	}
	// A new scope changes navigate's description: the agent is told.
	m4 := mustParse(t, "m.toml", strings.Replace(src, `["example.com"]`, `["example.org"]`, 1)+"[browser.commands.snapshot]\n")
	if err := ts.Set([]*toolclad.Manifest{m4}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("a new scope was never announced with list_changed")
	}
}

// mustParse parses a manifest held in the test.
func mustParse(t *testing.T, name, src string) *toolclad.Manifest {
	t.Helper()
	m, err := toolclad.Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}
