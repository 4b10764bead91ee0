package daemon

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Leases keep the MCP sessions open across a fleet of daemons sharing one
// store (serve --store: package fleet implements it in PostgreSQL), so that
// --max-sessions and --max-sessions-per-agent hold for the fleet, each
// replica's limits against the fleet's count. Without it (nil), the front
// counts its own sessions alone.
type Leases interface {
	// Reserve takes a lease for a session agent opens, unless the fleet
	// has perAgent sessions of agent open, or most in all: then it
	// returns "" with the fleet's counts (total, mine). ended are leases
	// of sessions this front saw end: they are dropped first.
	Reserve(ctx context.Context, agent string, most, perAgent int, ended []string) (lease string, total, mine int, err error)
	// Bind notes the MCP session a lease became.
	Bind(ctx context.Context, lease, session string) error
	// Note notes a session of the replica's evidence log that a lease's
	// MCP session opened: the record of its end, should the lease
	// expire, names it.
	Note(ctx context.Context, lease, evidence string) error
	// Renew extends the leases of live (lease -> agent) and drops those
	// of ended.
	Renew(ctx context.Context, live map[string]string, ended []string) error
	// Drop deletes leases.
	Drop(ctx context.Context, leases []string) error
	// Sweep deletes the fleet's expired leases, recording that their
	// sessions ended (a replica that stopped renewing them died or was
	// cut off), and says how many it recorded.
	Sweep(ctx context.Context) (int, error)
	// LeaseFor is how long a lease lasts unless renewed: the front renews
	// its leases every third of it.
	LeaseFor() time.Duration
}

// leaseWait bounds each exchange with the leases' store.
const leaseWait = 10 * time.Second

// fleetLeases are the front's leases: of each open session, and of the
// sessions being opened; and those of ended sessions not dropped yet.
// Guarded by sessionCount.mu.
type fleetLeases struct {
	of      map[string]string // session id -> lease
	pending map[string]string // lease -> agent, of sessions being opened
	// early are the evidence sessions noted (NoteEvidence) of a session
	// whose lease was not bound yet (a session readied as its client
	// connects, before the response that names it): noted at the binding.
	early map[string]*earlyNotes
	ended []string
	// store orders the front's exchanges with the store: a renewal's
	// snapshot of the live leases is written before a drop of one of
	// them, never after (it would take the dropped lease again).
	store sync.Mutex
}

// earlyNotes are evidence sessions noted before their session's lease was
// bound, since when.
type earlyNotes struct {
	evidence []string
	since    time.Time
}

// reserveLease takes the fleet's lease for a session agent opens, or says
// why it may not be opened. A store that does not answer refuses it: the
// fleet's count is unknown.
func (f *Front) reserveLease(ctx context.Context, agent string) (lease, msg string) {
	f.sessions.leases.store.Lock()
	defer f.sessions.leases.store.Unlock()
	ended := f.sweepSessions()
	ctx, cancel := context.WithTimeout(ctx, leaseWait)
	defer cancel()
	lease, total, mine, err := f.cfg.Leases.Reserve(ctx, agent, f.cfg.MaxSessions, f.cfg.MaxSessionsPerAgent, ended)
	if err != nil {
		f.dropLater(ended)
		f.cfg.Logger.Error("http: the fleet's session leases could not be read: new MCP session refused", "agent", agent, "error", err)
		return "", fmt.Sprintf("new MCP session refused: the fleet's count of open MCP sessions (--max-sessions, --max-sessions-per-agent across every replica sharing the store) could not be read, and no session is opened while it is unknown: %v; try again in %d seconds or more", err, sessionRetryAfter)
	}
	if lease == "" {
		return "", fleetRefusal(agent, mine, total, f.cfg.MaxSessionsPerAgent, f.cfg.MaxSessions, f.cfg.SessionIdle)
	}
	c := f.sessions
	c.mu.Lock()
	c.leases.pending[lease] = agent
	c.mu.Unlock()
	return lease, ""
}

// fleetRefusal is sessionRefusal for the fleet's count.
func fleetRefusal(agent string, mine, total, perAgent, most int, idle time.Duration) string {
	if mine >= perAgent {
		return fmt.Sprintf("new MCP session refused: agent %q has %d MCP sessions open across the fleet (every replica sharing the store), its limit (--max-sessions-per-agent %d): "+
			"end one (DELETE /mcp with its Mcp-Session-Id; MCP clients do this as they close) or wait: a session idle for %s is ended", agent, mine, perAgent, idle)
	}
	return fmt.Sprintf("new MCP session refused: the fleet (every replica sharing the store) has %d MCP sessions open, its limit (--max-sessions %d): "+
		"try again in %d seconds or more (a session idle for %s is ended); the sessions open keep working", total, most, sessionRetryAfter, idle)
}

// releaseLease ends the opening of lease's session: it became session id,
// or none ("": its lease is dropped).
func (f *Front) releaseLease(agent, lease, id string) {
	c := f.sessions
	c.leases.store.Lock()
	defer c.leases.store.Unlock()
	c.mu.Lock()
	delete(c.leases.pending, lease)
	var early []string
	if id != "" {
		c.agent[id] = agent
		c.leases.of[id] = lease
		if n := c.leases.early[id]; n != nil {
			early = n.evidence
		}
		delete(c.leases.early, id)
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), leaseWait)
	defer cancel()
	if id == "" {
		if err := f.cfg.Leases.Drop(ctx, []string{lease}); err != nil {
			f.dropLater([]string{lease})
		}
		return
	}
	if err := f.cfg.Leases.Bind(ctx, lease, id); err != nil {
		f.cfg.Logger.Warn("http: the fleet's session lease was not given its session id", "session", id, "error", err)
	}
	for _, e := range early {
		f.noteLease(ctx, lease, e)
	}
}

// sweepSessions forgets the sessions the server no longer has (closed by
// the client, or idle) and returns the leases to drop: theirs, and those
// left to drop before.
func (f *Front) sweepSessions() []string {
	c := f.sessions
	c.mu.Lock()
	defer c.mu.Unlock()
	live := f.liveSessions()
	ended := c.leases.ended
	c.leases.ended = nil
	for id, n := range c.leases.early {
		if !live[id] && time.Since(n.since) > time.Minute {
			delete(c.leases.early, id)
		}
	}
	for id := range c.agent {
		if !live[id] {
			delete(c.agent, id)
			if l, ok := c.leases.of[id]; ok {
				ended = append(ended, l)
				delete(c.leases.of, id)
			}
		}
	}
	return ended
}

// dropLater keeps leases to drop at the next exchange with the store.
func (f *Front) dropLater(leases []string) {
	c := f.sessions
	c.mu.Lock()
	c.leases.ended = append(c.leases.ended, leases...)
	c.mu.Unlock()
}

// closed drops the lease of session id, which a DELETE just ended, before
// the client hears of it: the fleet has its place back at once.
func (f *Front) closed(id string) {
	c := f.sessions
	c.leases.store.Lock()
	defer c.leases.store.Unlock()
	c.mu.Lock()
	lease, ok := c.leases.of[id]
	delete(c.leases.of, id)
	delete(c.agent, id)
	c.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseWait)
	defer cancel()
	if err := f.cfg.Leases.Drop(ctx, []string{lease}); err != nil {
		f.cfg.Logger.Warn("http: the lease of an ended MCP session was not dropped; it is dropped later, or expires", "session", id, "error", err)
		f.dropLater([]string{lease})
	}
}

// renewLeases renews the leases of the sessions open and being opened
// every third of LeaseFor, and drops those of the ended ones, until ctx
// ends; then it drops every lease the front holds.
func (f *Front) renewLeases(ctx context.Context) {
	every := f.cfg.Leases.LeaseFor() / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			f.dropAllLeases()
			return
		case <-t.C:
		}
		f.renewOnce(ctx, every)
	}
}

// renewOnce renews the front's leases, drops the ended ones and sweeps
// the fleet's expired ones.
func (f *Front) renewOnce(ctx context.Context, every time.Duration) {
	c := f.sessions
	c.leases.store.Lock()
	defer c.leases.store.Unlock()
	ended := f.sweepSessions()
	c.mu.Lock()
	live := make(map[string]string, len(c.leases.of)+len(c.leases.pending))
	for id, l := range c.leases.of {
		live[l] = c.agent[id]
	}
	for l, a := range c.leases.pending {
		live[l] = a
	}
	c.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, min(leaseWait, every))
	defer cancel()
	if err := f.cfg.Leases.Renew(rctx, live, ended); err != nil {
		f.cfg.Logger.Error("http: the fleet's session leases were not renewed: they expire unless the next renewal reaches the store", "sessions", len(live), "error", err)
		f.dropLater(ended)
	}
	// Every replica sweeps on its rounds, so that a dead one's sessions
	// are recorded as ended whether or not a session is opened. A sweep
	// that fails ends nothing; the next round sweeps again.
	switch n, err := f.cfg.Leases.Sweep(rctx); {
	case err != nil:
		f.cfg.Logger.Warn("http: the fleet's expired session leases were not swept: the next round tries again", "error", err)
	case n > 0:
		f.cfg.Logger.Warn("http: the fleet recorded as ended the MCP sessions whose leases expired: their replica stopped renewing them", "sessions", n)
	}
}

// dropAllLeases drops every lease of the front, as it stops.
func (f *Front) dropAllLeases() {
	c := f.sessions
	c.leases.store.Lock()
	defer c.leases.store.Unlock()
	c.mu.Lock()
	all := c.leases.ended
	for _, l := range c.leases.of {
		all = append(all, l)
	}
	for l := range c.leases.pending {
		all = append(all, l)
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), leaseWait)
	defer cancel()
	if err := f.cfg.Leases.Drop(ctx, all); err != nil {
		f.cfg.Logger.Warn("http: the fleet's session leases were not dropped as the daemon stopped: they expire", "leases", len(all), "error", err)
	}
}

// deleteWatch calls ended as a DELETE's response says the session ended
// (204), before the client reads it.
type deleteWatch struct {
	http.ResponseWriter
	ended func()
	done  bool
}

func (d *deleteWatch) WriteHeader(code int) {
	if !d.done {
		d.done = true
		if code == http.StatusNoContent {
			d.ended()
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *deleteWatch) Write(b []byte) (int, error) {
	d.done = true
	return d.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer beneath.
func (d *deleteWatch) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// NoteEvidence notes, with the fleet's leases, that MCP session id (or
// browser-session handle) opened session evidence of the replica's log,
// so that the fleet's record of its end names it should the replica die.
// It returns at once: the executor calls it as it opens the session.
func (f *Front) NoteEvidence(id, evidence string) {
	if f.cfg.Leases == nil {
		return
	}
	c := f.sessions
	c.mu.Lock()
	lease, ok := c.leases.of[id]
	if !ok {
		// Not bound yet: noted as it is (releaseLease). A session that is
		// never bound (its opening failed) is forgotten by the next sweep.
		n := c.leases.early[id]
		if n == nil {
			n = &earlyNotes{since: time.Now()}
			c.leases.early[id] = n
		}
		n.evidence = append(n.evidence, evidence)
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), leaseWait)
		defer cancel()
		f.noteLease(ctx, lease, evidence)
	}()
}

// noteLease notes evidence in lease, logging a failure.
func (f *Front) noteLease(ctx context.Context, lease, evidence string) {
	if err := f.cfg.Leases.Note(ctx, lease, evidence); err != nil {
		f.cfg.Logger.Warn("http: the fleet's lease was not given its evidence session: should its replica die, the fleet's record of the end names no session of the log", "session", evidence, "error", err)
	}
}
