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
	end func(id string) // ends the runner's session of a handle

	mu    sync.Mutex
	open  map[string]*openHandle
	front *Front // set by Listen
	now   func() time.Time
}

type openHandle struct {
	agent string
	used  time.Time
}

// NewHandles makes the handle book; end ends the runner's session of a
// handle closed or gone idle (the executor's EndSession).
func NewHandles(end func(id string)) *Handles {
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
	id := rand.Text()
	if f.cfg.Replica != "" {
		id = SessionIDs(f.cfg.Replica)()
	}
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
	return strings.ReplaceAll(msg, "new MCP session refused", "new browser session refused")
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

// Check says whether handle is open and agent's, and counts the call as
// its use.
func (hs *Handles) Check(handle, agent string) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h, ok := hs.open[handle]
	if !ok || h.agent != agent {
		return hs.refusal(handle)
	}
	h.used = hs.now()
	return nil
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
	hs.mu.Lock()
	h, ok := hs.open[handle]
	if !ok || h.agent != agent {
		err := hs.refusal(handle)
		hs.mu.Unlock()
		return err
	}
	delete(hs.open, handle)
	f := hs.front
	hs.mu.Unlock()
	hs.ended(f, handle)
	return nil
}

// ended frees a handle's place in the limits and ends its session.
func (hs *Handles) ended(f *Front, id string) {
	if f != nil {
		if f.cfg.Leases != nil {
			f.closed(id)
		} else {
			f.sessions.mu.Lock()
			delete(f.sessions.agent, id)
			f.sessions.mu.Unlock()
		}
	}
	hs.end(id)
}

// live adds the open handles to ids.
func (hs *Handles) live(ids map[string]bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for id := range hs.open {
		ids[id] = true
	}
}

// expire ends the handles unused for idle.
func (hs *Handles) expire(idle time.Duration) {
	hs.mu.Lock()
	var gone []string
	for id, h := range hs.open {
		if hs.now().Sub(h.used) >= idle {
			gone = append(gone, id)
			delete(hs.open, id)
		}
	}
	f := hs.front
	hs.mu.Unlock()
	for _, id := range gone {
		f.cfg.Logger.Info("mcp: browser session of a stateless client ended: idle", "session", id, "idle", idle)
		hs.ended(f, id)
	}
}

// expireIdle ends idle handles until ctx ends, looking every tenth of the
// idle timeout (at most a minute apart).
func (hs *Handles) expireIdle(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(min(idle/10, time.Minute))
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
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.cfg.Stateless },
		&mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: f.cfg.MaxRequestBytes, Logger: f.cfg.Logger,
			DisableLocalhostProtection: true})
}
