package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// DefaultMaxCallsPerSession is how many tool calls of one MCP session may
// be under way at once: the one running and those waiting behind it.
const DefaultMaxCallsPerSession = 8

// CodeOverloaded is the JSON-RPC error code of a request refused because
// a limit of the daemon is reached (JSON-RPC leaves -32000 to -32099 to
// the server; MCP names none for this).
const CodeOverloaded = -32001

// sessionRetryAfter is the Retry-After of a refused session, in seconds.
const sessionRetryAfter = 30

// sessionRefusal says why agent may not open one more MCP session, with
// mine sessions of its own and total in all open or being opened, under
// the limits perAgent and most ("": it may). The agent reads it: it names
// the limit, how many are open, and what to do.
func sessionRefusal(agent string, mine, total, perAgent, most int, idle time.Duration) string {
	switch {
	case mine >= perAgent:
		return fmt.Sprintf("new MCP session refused: agent %q has %d MCP sessions open, its limit (--max-sessions-per-agent %d): "+
			"end one (DELETE /mcp with its Mcp-Session-Id; MCP clients do this as they close) or wait: a session idle for %s is ended", agent, mine, perAgent, idle)
	case total >= most:
		return fmt.Sprintf("new MCP session refused: the daemon has %d MCP sessions open, its limit (--max-sessions %d): "+
			"try again in %d seconds or more (a session idle for %s is ended); the sessions open keep working", total, most, sessionRetryAfter, idle)
	}
	return ""
}

// refuseSession answers a request that would open an MCP session past a
// limit, with msg. An MCP client reads an HTTP status as the transport's
// failure and may not show its body (the Go SDK's client reports a 429 as
// "Too Many Requests" and nothing more), so a JSON-RPC request is answered
// as the server refusing it: a JSON-RPC error with the reason, which every
// client gives its caller. Anything else gets 429 with the reason as
// text. Retry-After is set either way.
func (f *Front) refuseSession(w http.ResponseWriter, r *http.Request, agent, msg string) {
	f.cfg.Logger.Warn("http: new MCP session refused", "agent", agent, "remote", r.RemoteAddr, "reason", msg)
	w.Header().Set("Retry-After", fmt.Sprint(sessionRetryAfter))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.cfg.MaxRequestBytes))
	if err == nil {
		if req, ok := decodeRequest(body); ok {
			if out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: CodeOverloaded, Message: msg}}); err == nil {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(out)
				return
			}
		}
	}
	http.Error(w, msg, http.StatusTooManyRequests)
}

// decodeRequest is body's JSON-RPC request, if it is one that expects an
// answer.
func decodeRequest(body []byte) (*jsonrpc.Request, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil, false
	}
	return req, true
}

// callLimit counts the tool calls under way in each MCP session. A
// session's calls run one at a time (each holds the session while it
// runs), so those an agent sends at once wait for each other: bounded,
// an agent that sends hundreds gets a refusal for those past the bound
// at once, rather than a queue that holds requests, goroutines and the
// agent's own timeouts for as long as it grows.
type callLimit struct {
	most   int
	logger *slog.Logger
	mu     sync.Mutex
	calls  map[string]int // by MCP session id, or browser-session handle
}

func newCallLimit(most int, logger *slog.Logger) *callLimit {
	return &callLimit{most: most, logger: logger, calls: map[string]int{}}
}

// enter counts one more call of session ss, or says why it may not run.
func (c *callLimit) enter(ss string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.calls[ss]; n >= c.most {
		return callRefusal(n, c.most)
	}
	c.calls[ss]++
	return ""
}

// leave ends a call that entered.
func (c *callLimit) leave(ss string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[ss]--; c.calls[ss] <= 0 {
		delete(c.calls, ss)
	}
}

// callSession is the session a tool call runs in: its MCP session, or
// (a stateless client's) the browser-session handle it names, with its
// agent (a handle is the agent's alone: another's call with it is refused
// later, and must not count against it). "": none to count.
func callSession(r *mcp.CallToolRequest, agent string) string {
	if r.Session != nil && r.Session.ID() != "" {
		return r.Session.ID()
	}
	// The exact key, as the tool set reads it (encoding/json would match
	// a struct field's name in any case: a call could then be counted
	// under another key than the handle it runs in).
	var args map[string]json.RawMessage
	var handle string
	if json.Unmarshal(r.Params.Arguments, &args) != nil || json.Unmarshal(args[toolclad.HandleArg], &handle) != nil || handle == "" {
		return "" // refused before it runs: no handle
	}
	return agent + "\x00" + handle
}

// callRefusal says why a call was refused with n calls of its session
// under way, the limit most.
func callRefusal(n, most int) string {
	return fmt.Sprintf("refused: this MCP session has %d tool calls under way, its limit (--max-calls-per-session %d): "+
		"a session runs its calls one at a time, so send the next when one has answered; this call was not run", n, most)
}

// middleware refuses a tool call past the limit of its session with a
// tool error the agent reads (the call never reaches the gate: nothing
// of it ran, and it is in the daemon's log, not the evidence).
func (c *callLimit) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		agent := ""
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			agent = extra.TokenInfo.UserID
		}
		ss := callSession(r, agent)
		if ss == "" {
			return next(ctx, method, req)
		}
		if msg := c.enter(ss); msg != "" {
			c.logger.Warn("mcp: tool call refused: too many under way in its session", "session", ss, "agent", agent, "tool", r.Params.Name, "reason", msg)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
		}
		defer c.leave(ss)
		return next(ctx, method, req)
	}
}
