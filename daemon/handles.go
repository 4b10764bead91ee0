package daemon

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/toolclad"
)

// Clients of MCP's 2026-07-28 revision keep no MCP session: /mcp serves
// their requests (those whose Mcp-Protocol-Version is that revision or
// later) with a stateless server, Config.Stateless, whose tools take a
// browser-session handle instead (toolclad/handles.go). Handles are those
// handles: each is a session as an MCP session is, counted against the
// same limits (--max-sessions, --max-sessions-per-agent, the fleet's
// leases), named as the replica's MCP session ids are (ID-…, so a load
// balancer routes on the Mcp-Param-Browser-Session header as on
// Mcp-Session-Id), the agent's that opened it alone, and ended when closed
// or idle for the idle timeout.

// statelessRevision is the first MCP revision without MCP sessions.
const statelessRevision = "2026-07-28"

// Handles are the open browser-session handles of stateless clients. It
// implements toolclad.Handles; Listen ties it to the front's limits.
type Handles struct {
	end func(id, why string) // ends the runner's session of a handle

	mu    sync.Mutex
	open  map[string]*openHandle
	front *Front // set by Listen
	now   func() time.Time
}

type openHandle struct {
	agent string
	used  time.Time
	calls int    // calls under way with it
	ended string // why it ended, once closed or idle: no call starts; its session ends after the last
}

// NewHandles makes the handle book; end ends the runner's session of a
// handle closed or gone idle, saying why (the executor's EndSessionFor).
func NewHandles(end func(id, why string)) *Handles {
	return &Handles{end: end, open: map[string]*openHandle{}, now: time.Now}
}

// ErrNoHandle refuses a handle that is not open, or not the caller's.
var ErrNoHandle = errors.New("no such browser session")

// Open makes a handle for agent, counted against the session limits as an
// MCP session being opened is.
func (hs *Handles) Open(ctx context.Context, agent string) (string, error) {
	f := hs.frontOf()
	if f == nil {
		return "", errors.New("browser session refused: the daemon is not serving HTTP yet")
	}
	newID := rand.Text // as the SDK makes session ids
	if f.cfg.Replica != "" {
		newID = SessionIDs(f.cfg.Replica)
	}
	id := newID()
	if f.cfg.Leases != nil {
		lease, msg := f.reserveLease(ctx, agent)
		if msg != "" {
			return "", errors.New(forHandles(msg))
		}
		hs.add(id, agent)
		f.releaseLease(agent, lease, id)
	} else {
		if msg := f.reserve(agent); msg != "" {
			return "", errors.New(forHandles(msg))
		}
		hs.add(id, agent)
		f.release(agent, id)
	}
	f.cfg.Logger.Info("mcp: browser session opened for a stateless client", "session", id, "agent", agent)
	return id, nil
}

// forHandles says a session refusal in a stateless client's terms.
func forHandles(msg string) string {
	return strings.NewReplacer("new MCP session refused", "new browser session refused",
		"MCP sessions open", "sessions open (MCP sessions and browser sessions)",
		"end one (DELETE /mcp with its Mcp-Session-Id; MCP clients do this as they close)", "end one (browser_session_close)").Replace(msg)
}

func (hs *Handles) frontOf() *Front {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.front
}

func (hs *Handles) add(id, agent string) {
	hs.mu.Lock()
	hs.open[id] = &openHandle{agent: agent, used: hs.now()}
	hs.mu.Unlock()
}

// Check says whether handle is open and agent's, and counts a call in it
// until done.
func (hs *Handles) Check(handle, agent string) (done func(), err error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h, ok := hs.open[handle]
	if ok && h.agent != agent {
		hs.front.cfg.Logger.Warn("mcp: a call with another agent's browser session: refused", "agent", agent)
	}
	if !ok || h.agent != agent || h.ended != "" {
		return nil, hs.refusal(handle)
	}
	h.used = hs.now()
	h.calls++
	var once sync.Once
	return func() { once.Do(func() { hs.callDone(handle) }) }, nil
}

// callDone ends a call's use of handle; the last call of an ended handle
// ends its session.
func (hs *Handles) callDone(handle string) {
	hs.mu.Lock()
	h := hs.open[handle]
	h.calls--
	h.used = hs.now()
	last := h.calls == 0 && h.ended != ""
	if last {
		delete(hs.open, handle)
	}
	f := hs.front
	hs.mu.Unlock()
	if last {
		hs.ended(f, handle, h.ended)
	}
}

// refusal says why handle is refused (hs.mu held). Whether it is another
// agent's is not said: a handle is no one else's business.
func (hs *Handles) refusal(handle string) error {
	idle := DefaultSessionIdle
	replica := ""
	if hs.front != nil {
		idle, replica = hs.front.cfg.SessionIdle, hs.front.cfg.Replica
	}
	if other, _, named := strings.Cut(handle, "-"); named && replica != "" && other != replica && replicaName.MatchString(other) {
		hs.front.cfg.Logger.Warn("mcp: a call with a browser session of another replica: refused", "session_replica", other)
		return fmt.Errorf("%w %q here: it was opened on replica %s and this is %s (the load balancer sends a call here when %s is down, or when it does not route on the Mcp-Param-%s header); open a new one with %s",
			ErrNoHandle, handle, other, replica, other, toolclad.HandleHeader, toolclad.OpenSessionTool)
	}
	return fmt.Errorf("%w %q of yours is open: it was closed, ended after %s idle, or never opened; open one with %s",
		ErrNoHandle, handle, idle, toolclad.OpenSessionTool)
}

// Close ends agent's handle: its lease (with --store) is dropped and the
// runner's session ends.
func (hs *Handles) Close(handle, agent string) error {
	return hs.endHandle(handle, agent, "the agent closed its browser session (browser_session_close)")
}

// endHandle ends agent's handle for why: at once, or when its calls under
// way are done.
func (hs *Handles) endHandle(handle, agent, why string) error {
	hs.mu.Lock()
	h, ok := hs.open[handle]
	if !ok || h.agent != agent || h.ended != "" {
		err := hs.refusal(handle)
		hs.mu.Unlock()
		return err
	}
	h.ended = why
	now := h.calls == 0
	if now {
		delete(hs.open, handle)
	}
	f := hs.front
	hs.mu.Unlock()
	if now {
		hs.ended(f, handle, why)
	}
	return nil
}

// ended frees a handle's place in the limits and ends its session.
func (hs *Handles) ended(f *Front, id, why string) {
	if f != nil {
		if f.cfg.Leases != nil {
			f.closed(id)
		} else {
			f.sessions.mu.Lock()
			delete(f.sessions.agent, id)
			f.sessions.mu.Unlock()
		}
	}
	hs.end(id, why)
}

// count is how many handles are open (those ended with a call under way
// included: they hold their place until it is done).
func (hs *Handles) count() int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.open)
}

// live adds the open handles to ids.
func (hs *Handles) live(ids map[string]bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for id := range hs.open {
		ids[id] = true
	}
}

// expire ends the handles unused for idle (a handle with a call under way
// is in use).
func (hs *Handles) expire(idle time.Duration) {
	hs.mu.Lock()
	var gone []string
	for id, h := range hs.open {
		if h.calls == 0 && h.ended == "" && hs.now().Sub(h.used) >= idle {
			gone = append(gone, id)
			delete(hs.open, id)
		}
	}
	f := hs.front
	hs.mu.Unlock()
	for _, id := range gone {
		f.cfg.Logger.Info("mcp: browser session of a stateless client ended: idle", "session", id, "idle", idle)
		hs.ended(f, id, fmt.Sprintf("the browser session was not used for %s (--session-idle)", idle))
	}
}

// expireIdle ends idle handles until ctx ends, looking every tenth of the
// idle timeout (at most a minute apart).
func (hs *Handles) expireIdle(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(max(min(idle/10, time.Minute), time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			hs.expire(idle)
		}
	}
}

// stateless reports whether r is a request of a client of the stateless
// revision, by its Mcp-Protocol-Version header (which the revision
// requires on every request, and the SDK checks against the body's).
func stateless(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	return v != "" && v >= statelessRevision
}

// statelessHandler serves the stateless clients' requests.
func (f *Front) statelessHandler() http.Handler {
	return f.limitStreams(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.cfg.Stateless },
		&mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: f.cfg.MaxRequestBytes, Logger: f.cfg.Logger,
			DisableLocalhostProtection: true}))
}

// streams counts the subscriptions/listen streams of stateless clients,
// by agent: each stays open until its client ends it, as an MCP session's
// event stream does, and is bounded as MCP sessions are.
type streams struct {
	mu    sync.Mutex
	total int
	of    map[string]int
}

// limitStreams refuses a subscriptions/listen request past
// --max-sessions-per-agent of its agent's, or --max-sessions in all. The
// SDK checks the request's Mcp-Method header against its body, so the
// header is the method.
func (f *Front) limitStreams(next http.Handler) http.Handler {
	c := &streams{of: map[string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			next.ServeHTTP(w, r)
			return
		}
		agent := auth.TokenInfoFromContext(r.Context()).UserID
		c.mu.Lock()
		mine, total := c.of[agent], c.total
		ok := mine < f.cfg.MaxSessionsPerAgent && total < f.cfg.MaxSessions
		if ok {
			c.of[agent]++
			c.total++
		}
		c.mu.Unlock()
		if !ok {
			f.refuseSession(w, r, agent, fmt.Sprintf("subscriptions/listen refused: agent %q has %d notification streams open, the daemon %d; at most --max-sessions-per-agent %d of an agent's, and --max-sessions %d in all, are open at once: end one",
				agent, mine, total, f.cfg.MaxSessionsPerAgent, f.cfg.MaxSessions))
			return
		}
		defer func() {
			c.mu.Lock()
			c.total--
			if c.of[agent]--; c.of[agent] == 0 {
				delete(c.of, agent)
			}
			c.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}
