package toolclad

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Runner runs validated calls. The executor implements it; toolclad calls it
// through this interface so that it never imports the executor.
type Runner interface {
	// Run runs one call, or refuses it, and always returns a reply. It is
	// called also when call.ArgErr is set, so that the refusal is recorded.
	Run(ctx context.Context, call *Call) *Reply
	// EndSession is called once when an MCP session that made at least one
	// call ends, so that its browser context can be closed.
	EndSession(sessionID string)
}

// warmsUp are the requests a client makes before its first call (the
// handshake of either protocol generation, and the tool list).
// server/discover is left out: on a stateful HTTP server the SDK makes a
// session for that one request and ends it at once.
var warmsUp = map[string]bool{"initialize": true, "notifications/initialized": true, "tools/list": true}

// Warmer is a Runner that can prepare an MCP session's first call when the
// client has initialised (its browser context and tab), in the
// background: Warm must return at once.
type Warmer interface {
	Warm(sessionID, agent string)
}

// Call is one tool call as the runner sees it.
type Call struct {
	Manifest *Manifest
	Command  *Command
	// Tool is the MCP tool name that was called.
	Tool string
	// SessionID is the MCP session id, or a random id assigned to the
	// session when the transport has none (stdio, in-memory).
	SessionID string
	// Agent is the calling agent over HTTP (serve --agents): its id, the
	// Cedar principal, and its groups, the principal's parents. "" on
	// stdio, where the daemon's --principal is the agent.
	Agent  string
	Groups []string
	// RawArgs are the arguments as received (nil if not a JSON object).
	RawArgs map[string]any
	// Args are the validated arguments (nil when ArgErr is set).
	Args map[string]any
	// ArgErr is the validation failure: *ArgError values (see ArgErrors). The
	// runner records the refusal and replies with RefusalText(ArgErr).
	ArgErr error
	// Progress sends an MCP progress notification when the client asked for
	// progress; otherwise it does nothing. Never nil.
	Progress func(message string)
	// CanElicit is true when the client declared the elicitation
	// capability: its user can be asked a question (see Reply.Ask).
	CanElicit bool
	// Resume is set when the client retries a call after answering the
	// question the previous round asked (MCP multi round-trip requests).
	Resume *Resume
}

// Resume is the client's return after a Reply.Ask: the state the previous
// round handed out, and the answers by question key.
type Resume struct {
	State   string
	Answers map[string]ElicitAnswer
}

// ElicitAnswer is the client user's answer to an elicitation.
type ElicitAnswer struct {
	// Action is "accept", "decline" or "cancel" (dismissed without a choice).
	Action string
	// By is the name the user gave in the form ("" when none).
	By string
}

// Question asks the client's user through MCP elicitation instead of
// answering the call: the client shows the form to its user and calls again
// with the answer and State (a multi round-trip request). For clients on
// protocol versions before multi round-trip the SDK asks the client itself
// and calls the runner again, so the runner sees the same two rounds.
type Question struct {
	Key     string // names the answer in Resume.Answers
	Message string
	State   string // opaque to the client; the runner must authenticate it
}

// elicitSchema is the form shown with an elicitation: accepting it is the
// answer; the name, if given, goes into the evidence.
var elicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approved_by": map[string]any{"type": "string", "description": "Your name, recorded in the evidence log with the decision"},
	},
}

// Reply is the runner's answer, turned into an MCP CallToolResult.
type Reply struct {
	// Text is the first TextContent.
	Text string
	// Structured is the StructuredContent (nil = none). When the manifest has
	// an output schema it must validate against it.
	Structured map[string]any
	// Image, when set, is added as ImageContent of type ImageType
	// (image/png when empty).
	Image     []byte
	ImageType string
	// IsError marks a refusal or a failure.
	IsError bool
	// Ask, when set, asks the client's user a question first (see
	// Question); the other fields are ignored. A runner sets it only for a
	// call with CanElicit.
	Ask *Question
}

// RegisterOptions configures Register. The zero value is the default.
type RegisterOptions struct {
	// Separator joins tool and command names: "." (default) gives
	// "<tool>.<command>" as ToolClad names them; "_" gives "<tool>_<command>"
	// for clients behind LLM APIs that accept only [A-Za-z0-9_-] in names.
	Separator string
	// Handles, when set, makes the set serve clients that keep no MCP
	// session (a stateless server, handles.go): every command takes a
	// browser-session handle, and two tools open and close one.
	Handles Handles
}

// ToolName is the MCP tool name of command c of manifest m.
func ToolName(m *Manifest, c *Command, sep string) string {
	if sep == "" {
		sep = "."
	}
	return m.Tool.Name + sep + c.Name
}

// Register adds one MCP tool per command of each manifest to s. It refuses
// (before adding anything) a nil runner, a bad separator, and two commands
// that would get the same tool name: the SDK would silently replace one.
func Register(s *mcp.Server, manifests []*Manifest, r Runner, opts RegisterOptions) error {
	ts, err := NewToolSet(s, r, opts)
	if err != nil {
		return err
	}
	return ts.Set(manifests)
}

// ToolSet is the server's tools for a set of manifests, replaceable as a
// whole when the manifests are reloaded. MCP session ids stay the same
// across replacements, so the runner's sessions do too.
type ToolSet struct {
	server   *mcp.Server
	runner   Runner
	sep      string
	sessions *sessionIDs
	handles  Handles // nil: sessions are MCP sessions

	mu        sync.Mutex
	tools     map[string]*handler // the tools registered, by name
	manifests []*Manifest         // the current set, for calls to undeclared tools
}

// NewToolSet checks the runner and the options; it registers nothing. A
// call to a tool the set does not hold is not left to the SDK (which would
// answer with a protocol error that nothing records): the runner gets it
// as a Call with no Command, to refuse and record.
func NewToolSet(s *mcp.Server, r Runner, opts RegisterOptions) (*ToolSet, error) {
	if r == nil {
		return nil, ErrNoRunner
	}
	sep := opts.Separator
	if sep == "" {
		sep = "."
	}
	if sep != "." && sep != "_" {
		return nil, fmt.Errorf("register tools: %w (got %q)", ErrBadSeparator, sep)
	}
	ts := &ToolSet{server: s, runner: r, sep: sep, tools: map[string]*handler{}, handles: opts.Handles,
		sessions: &sessionIDs{ids: make(map[*mcp.ServerSession]string), runner: r}}
	s.AddReceivingMiddleware(ts.undeclared)
	if ts.handles != nil {
		ts.sessionTools()
	}
	return ts, nil
}

// Set makes the server's tools exactly those of manifests: a tool whose
// definition is unchanged keeps its registration (its calls go to the new
// manifest's command), a new or changed one is added or replaced in place
// (a client never sees a tool missing that both sets have), and those no
// manifest declares any more are removed. The SDK tells connected clients
// that the list changed only when it did. Two commands with the same tool
// name are refused before anything changes.
func (ts *ToolSet) Set(manifests []*Manifest) error {
	seen, err := ts.toolNames(manifests)
	if err != nil {
		return err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	next := make(map[string]*handler, len(seen))
	for _, m := range manifests {
		for _, c := range m.Commands {
			h := &handler{manifest: m, command: c, name: ToolName(m, c, ts.sep), runner: ts.runner, sessions: ts.sessions, handles: ts.handles}
			h.def = h.tool()
			if old, ok := ts.tools[h.name]; ok && sameTool(old.def, h.def) {
				old.swap(m, c)
				next[h.name] = old
				continue
			}
			ts.server.AddTool(h.def, h.handle)
			next[h.name] = h
		}
	}
	var gone []string
	for name := range ts.tools {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		ts.server.RemoveTools(gone...)
	}
	ts.tools, ts.manifests = next, manifests
	return nil
}

// ToolSets are tool sets of several servers kept to the same manifests
// (the daemon's stateful and stateless servers).
type ToolSets []*ToolSet

// Check reports whether every set would accept manifests.
func (sets ToolSets) Check(manifests []*Manifest) error {
	for _, ts := range sets {
		if err := ts.Check(manifests); err != nil {
			return err
		}
	}
	return nil
}

// Set sets every set's tools to manifests, once each would accept them.
func (sets ToolSets) Set(manifests []*Manifest) error {
	if err := sets.Check(manifests); err != nil {
		return err
	}
	for _, ts := range sets {
		if err := ts.Set(manifests); err != nil {
			return err
		}
	}
	return nil
}

// sameTool reports whether two tool definitions are the same to a client.
func sameTool(a, b *mcp.Tool) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// undeclared is receiving middleware: a tools/call for a tool the set
// does not hold goes to the runner, which refuses and records it. An
// agent probing for tools it was not given is what an auditor wants to
// see.
func (ts *ToolSet) undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if warmsUp[method] && ts.handles == nil {
			// The client is getting ready (the handshake, or listing the
			// tools): a runner that can get a session's browser ready
			// before its first call starts now, while the agent decides
			// what to do.
			if w, ok := ts.runner.(Warmer); ok {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					agent, _ := caller(req.GetExtra())
					ts.sessions.warm(ss, func(id string) { w.Warm(id, agent) })
				}
			}
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		ts.mu.Lock()
		_, known := ts.tools[r.Params.Name]
		var m *Manifest
		for _, cand := range ts.manifests {
			if strings.HasPrefix(r.Params.Name, cand.Tool.Name+ts.sep) {
				m = cand
			}
		}
		ts.mu.Unlock()
		if known || ts.handles != nil && isSessionTool(r.Params.Name) {
			return next(ctx, method, req)
		}
		call := &Call{Manifest: m, Tool: r.Params.Name, Progress: func(string) {}}
		call.Agent, call.Groups = caller(r.Extra)
		raw, err := decodeArgs(r.Params.Arguments)
		if err == nil {
			call.RawArgs = raw
		}
		var done func()
		call.SessionID, done, err = ts.sessionOf(r, call)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		defer done()
		reply := ts.runner.Run(ctx, call)
		if reply == nil {
			return errorResult("internal error: the runner returned no reply"), nil
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: reply.Text}}}, nil
	}
}

// Check reports whether Set would accept manifests, changing nothing.
func (ts *ToolSet) Check(manifests []*Manifest) error {
	_, err := ts.toolNames(manifests)
	return err
}

// toolNames maps each tool name of manifests to the manifest's path,
// refusing two commands with the same name.
func (ts *ToolSet) toolNames(manifests []*Manifest) (map[string]string, error) {
	seen := make(map[string]string)
	for _, m := range manifests {
		for _, c := range m.Commands {
			name := ToolName(m, c, ts.sep)
			if prev, dup := seen[name]; dup {
				return nil, fmt.Errorf("register tools: %w: %q from %s and %s", ErrDuplicateTool, name, prev, m.Path)
			}
			seen[name] = m.Path
		}
	}
	if ts.handles != nil {
		if err := checkHandleArgs(seen, manifests); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// handler serves one tool. A reload that leaves the tool's definition as
// it was swaps in the new manifest's command without re-registering it.
type handler struct {
	name     string
	def      *mcp.Tool
	runner   Runner
	sessions *sessionIDs
	handles  Handles

	mu       sync.Mutex
	manifest *Manifest
	command  *Command
}

// swap makes the handler serve command c of manifest m.
func (h *handler) swap(m *Manifest, c *Command) {
	h.mu.Lock()
	h.manifest, h.command = m, c
	h.mu.Unlock()
}

func (h *handler) current() (*Manifest, *Command) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.manifest, h.command
}

func (h *handler) tool() *mcp.Tool {
	t := &mcp.Tool{
		Name:        h.name,
		Description: h.description(),
		InputSchema: h.command.InputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: h.command.ReadOnly()},
	}
	if h.manifest.Output.Schema != nil {
		t.OutputSchema = h.manifest.Output.Schema
	}
	if h.handles != nil {
		t.InputSchema = withHandle(h.command.InputSchema())
	}
	return t
}

// description is the command's tool description; a command that takes a
// scope-checked URL also says what the scope is.
func (h *handler) description() string {
	d := h.command.ToolDescription()
	for _, a := range h.command.Args {
		if a.Type == TypeURL && a.ScopeCheck {
			return joinSentences(d, h.manifest.scopeSummary(a.Schemes))
		}
	}
	return d
}

func (h *handler) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	m, c := h.current()
	call := &Call{Manifest: m, Command: c, Tool: h.name, Progress: func(string) {}}
	call.Agent, call.Groups = caller(req.Extra)
	raw, err := decodeArgs(req.Params.Arguments)
	if h.handles == nil {
		call.SessionID = h.sessions.id(req.Session)
	} else {
		// Without its handle the call has no session to run, or be
		// recorded, in: it is refused here.
		var done func()
		if err == nil {
			call.SessionID, done, err = checkedHandle(h.handles, raw, call.Agent)
		}
		if err != nil {
			return errorResult(err.Error()), nil
		}
		defer done()
	}
	if err != nil {
		call.ArgErr = &ArgError{Command: c.Name, Rule: "type", Message: err.Error()}
	} else {
		call.RawArgs = raw
		call.Args, call.ArgErr = c.Validate(raw)
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		var mu sync.Mutex
		n := 0
		call.Progress = func(msg string) {
			mu.Lock()
			n++
			p := float64(n)
			mu.Unlock()
			// A lost progress notice must not fail the call.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: msg, Progress: p})
		}
	}
	// The client's capabilities: of its MCP session, or (the 2026-07-28
	// revision) of the request itself.
	if caps := req.ClientCapabilities(); caps != nil && caps.Elicitation != nil {
		call.CanElicit = true
	}
	if req.Params.RequestState != "" || req.Params.InputResponses != nil {
		call.Resume = &Resume{State: req.Params.RequestState, Answers: map[string]ElicitAnswer{}}
		for key, r := range req.Params.InputResponses {
			if er, ok := r.(*mcp.ElicitResult); ok {
				by, _ := er.Content["approved_by"].(string)
				call.Resume.Answers[key] = ElicitAnswer{Action: er.Action, By: by}
			}
		}
	}
	reply := h.runner.Run(ctx, call)
	if q := reply.Ask; q != nil && call.CanElicit {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{q.Key: &mcp.ElicitParams{Message: q.Message, RequestedSchema: elicitSchema}},
			RequestState:  q.State,
		}, nil
	}
	return result(m, reply), nil
}

// decodeArgs decodes the arguments object, keeping numbers as json.Number so
// that integers are not rounded through float64. Absent or null arguments
// are an empty object.
func decodeArgs(data json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonType(v))
	}
	return m, nil
}

// result converts a reply, checking its structured content against the
// manifest's output schema: the MCP specification requires a tool with an
// output schema to return conforming structured content.
func result(m *Manifest, reply *Reply) *mcp.CallToolResult {
	if reply == nil {
		return errorResult("internal error: the runner returned no reply")
	}
	res := &mcp.CallToolResult{IsError: reply.IsError}
	if rs := m.outputSchema; rs != nil && !reply.IsError {
		if reply.Structured == nil {
			return errorResult("output error: the tool has an output schema but the result has no structured content")
		}
		inst, err := normalizeJSON(reply.Structured)
		if err == nil {
			err = rs.Validate(inst)
		}
		if err != nil {
			return errorResult("output error: the result does not match the tool's output schema: " + err.Error())
		}
	}
	text := reply.Text
	if text == "" && reply.Structured != nil {
		// Clients that ignore structured content still see the result.
		if b, err := json.Marshal(reply.Structured); err == nil {
			text = string(b)
		}
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	if len(reply.Image) > 0 {
		res.Content = append(res.Content, &mcp.ImageContent{Data: reply.Image, MIMEType: cmp.Or(reply.ImageType, "image/png")})
	}
	if reply.Structured != nil {
		res.StructuredContent = reply.Structured
	}
	return res
}

// ResultText is the text of a tool result, its text parts joined by
// newlines (for a client: browsergate call, the quick start's agent).
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// normalizeJSON round-trips v through JSON so that the validator sees what a
// client will (float64 numbers, plain maps).
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// sessionIDs gives each MCP session a stable id and tells the runner when
// the session ends.
type sessionIDs struct {
	mu     sync.Mutex
	ids    map[*mcp.ServerSession]string
	runner Runner
}

func (s *sessionIDs) id(ss *mcp.ServerSession) string {
	if ss == nil {
		return randomID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[ss]; ok {
		return id
	}
	id := ss.ID()
	if id == "" {
		id = randomID()
	}
	s.ids[ss] = id
	go func() {
		_ = ss.Wait() // how the session ended does not matter here
		s.mu.Lock()
		delete(s.ids, ss)
		s.mu.Unlock()
		s.runner.EndSession(id)
	}()
	return id
}

// warm runs fn with the session's id while the session is still
// registered (under the lock its end takes to unregister it), so that
// what fn makes for it is ended with it: a session that has already
// ended is not warmed.
func (s *sessionIDs) warm(ss *mcp.ServerSession, fn func(id string)) {
	id := s.id(ss)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, live := s.ids[ss]; live {
		fn(id)
	}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// AgentGroupsKey is the key of the agent's groups ([]string) in the
// bearer token's auth.TokenInfo.Extra; its UserID is the agent's id.
const AgentGroupsKey = "browsergate.groups"

// caller is the agent an HTTP request authenticated as (none on stdio).
func caller(extra *mcp.RequestExtra) (agent string, groups []string) {
	if extra == nil || extra.TokenInfo == nil {
		return "", nil
	}
	groups, _ = extra.TokenInfo.Extra[AgentGroupsKey].([]string)
	return extra.TokenInfo.UserID, groups
}
