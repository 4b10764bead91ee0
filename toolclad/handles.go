package toolclad

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of MCP's 2026-07-28 revision keeps no MCP session: each of its
// requests stands alone on a stateless server. Its browser session is a
// handle the agent holds instead. A tool set made with
// RegisterOptions.Handles serves such clients:
//
//   - browser_session_open gives the agent a new handle;
//   - every command takes it as its browser_session argument, marked
//     (x-mcp-header) for the client to copy into the
//     Mcp-Param-Browser-Session header, on which a load balancer in front
//     of a fleet routes the call to the replica that holds it (the handle
//     starts with the replica's name, as an MCP session id does);
//   - browser_session_close ends it; a handle not used for the idle
//     timeout ends as an idle MCP session does.
//
// A handle is the agent's that opened it: Handles.Check refuses it to any
// other, on every call.

// Names of the handle's argument, its header and the two tools.
const (
	HandleArg        = "browser_session"
	HandleHeader     = "Browser-Session"
	OpenSessionTool  = "browser_session_open"
	CloseSessionTool = "browser_session_close"
)

// Handles open, check and close browser-session handles (the daemon's
// front implements it, with the session limits).
type Handles interface {
	// Open makes a handle for agent, or says why it may not (a limit).
	Open(ctx context.Context, agent string) (string, error)
	// Check says whether handle is open and agent's, and counts a call
	// in it until done is called: a handle with a call under way is
	// neither idle nor ended by Close until the call is done.
	Check(handle, agent string) (done func(), err error)
	// Close ends agent's handle (no call with it starts after), and the
	// runner's session with it once its calls under way are done.
	Close(handle, agent string) error
}

// ErrHandleArg refuses a manifest argument named as the handle's.
var ErrHandleArg = errors.New("argument name reserved for the browser-session handle of stateless MCP clients")

// handleSchema is the handle's property in every command's input schema.
func handleSchema() map[string]any {
	return map[string]any{
		"type":         "string",
		"description":  "The browser session this call runs in: the handle " + OpenSessionTool + " gave you. Each handle is one browser session (its own cookies, tabs and evidence), yours alone.",
		"x-mcp-header": HandleHeader,
	}
}

// withHandle is schema with the handle added as a required property.
func withHandle(schema map[string]any) map[string]any {
	out := maps.Clone(schema)
	props, _ := schema["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	props[HandleArg] = handleSchema()
	out["properties"] = props
	required, _ := schema["required"].([]any)
	out["required"] = append([]any{HandleArg}, required...)
	return out
}

// handleOf takes the handle out of raw (the command's own arguments are
// what is left), or says what is wrong with it.
func handleOf(raw map[string]any) (string, error) {
	v, ok := raw[HandleArg]
	if !ok {
		return "", fmt.Errorf("missing argument %s: open a browser session with %s and pass the handle it gives as %s on every call", HandleArg, OpenSessionTool, HandleArg)
	}
	delete(raw, HandleArg)
	h, ok := v.(string)
	if !ok || h == "" {
		return "", fmt.Errorf("argument %s must be the handle %s gave (a non-empty string), got %s", HandleArg, OpenSessionTool, jsonType(v))
	}
	return h, nil
}

// checkedHandle takes the handle out of raw and checks it is agent's; done
// ends the call's use of it.
func checkedHandle(hs Handles, raw map[string]any, agent string) (h string, done func(), err error) {
	h, err = handleOf(raw)
	if err != nil {
		return "", nil, err
	}
	done, err = hs.Check(h, agent)
	return h, done, err
}

// noCall is the done of a call that holds no handle.
func noCall() {}

// sessionOf is the session of a call to a tool the set does not hold: the
// MCP session, or the call's handle (done ends the call's use of it).
func (ts *ToolSet) sessionOf(r *mcp.CallToolRequest, call *Call) (string, func(), error) {
	if ts.handles == nil {
		return ts.sessions.id(r.Session), noCall, nil
	}
	if call.RawArgs == nil {
		return "", nil, fmt.Errorf("the arguments must be a JSON object holding %s", HandleArg)
	}
	return checkedHandle(ts.handles, call.RawArgs, call.Agent)
}

// sessionTools are the tools that open and close handles.
func (ts *ToolSet) sessionTools() {
	ts.server.AddTool(&mcp.Tool{
		Name: OpenSessionTool,
		Description: "Open a browser session: a fresh browser context (no cookies, one blank tab) that is yours alone. " +
			"It returns a handle; pass it as " + HandleArg + " to every other tool. Close it with " + CloseSessionTool + " when done; a session idle for the daemon's idle timeout ends by itself.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
	}, ts.openSession)
	ts.server.AddTool(&mcp.Tool{
		Name:        CloseSessionTool,
		Description: "Close a browser session: its browser context, tabs and downloads are gone, and its handle no longer works.",
		InputSchema: withHandle(map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}),
	}, ts.closeSession)
}

func (ts *ToolSet) openSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	agent, _ := caller(req.Extra)
	h, err := ts.handles.Open(ctx, agent)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if w, ok := ts.runner.(Warmer); ok {
		w.Warm(h, agent)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("browser session opened: pass %s %q to every tool", HandleArg, h)}},
		StructuredContent: map[string]any{HandleArg: h},
	}, nil
}

func (ts *ToolSet) closeSession(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	agent, _ := caller(req.Extra)
	raw, err := decodeArgs(req.Params.Arguments)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	h, err := handleOf(raw)
	if err == nil && len(raw) > 0 {
		err = fmt.Errorf("%s takes only %s", CloseSessionTool, HandleArg)
	}
	if err == nil {
		err = ts.handles.Close(h, agent)
	}
	if err != nil {
		return errorResult(err.Error()), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "browser session " + h + " closed"}}}, nil
}

// checkHandleArgs refuses manifests a handle-serving set cannot serve: an
// argument with the handle's name, a tool with one of the session tools'.
func checkHandleArgs(seen map[string]string, manifests []*Manifest) error {
	for _, name := range []string{OpenSessionTool, CloseSessionTool} {
		if path, ok := seen[name]; ok {
			return fmt.Errorf("register tools: %w: %q from %s is the stateless clients' own tool", ErrDuplicateTool, name, path)
		}
	}
	for _, m := range manifests {
		for _, c := range m.Commands {
			if c.Arg(HandleArg) != nil {
				return fmt.Errorf("register tools: %s, command %s: %w (%s)", m.Path, c.Name, ErrHandleArg, HandleArg)
			}
		}
	}
	return nil
}

// isSessionTool reports whether name is one of the handle tools.
func isSessionTool(name string) bool {
	return name == OpenSessionTool || name == CloseSessionTool
}
