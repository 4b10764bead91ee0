// Package events is the daemon's operator event stream: every decision,
// every request the egress gate refused, approvals asked and answered,
// sessions opened and ended, published in order to whoever watches (the
// /events WebSocket, the console). A watcher too slow to keep up is
// dropped: publishing never waits for one.
package events

import (
	"sync"
	"time"
)

// Types of event.
const (
	Decision         = "decision"
	Blocked          = "blocked"
	ApprovalAsked    = "approval_asked"
	ApprovalAnswered = "approval_answered"
	SessionOpened    = "session_opened"
	SessionEnded     = "session_ended"
)

// Event is one thing that happened. Arguments and reasons are as the
// evidence records them (secrets masked).
type Event struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Session string    `json:"session,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Command string    `json:"command,omitempty"`
	Args    any       `json:"args,omitempty"`
	// Allowed is set on decisions and answered approvals.
	Allowed *bool  `json:"allowed,omitempty"`
	Stage   string `json:"stage,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	URL     string `json:"url,omitempty"`
	// Layer is where a request was refused (interception, proxy).
	Layer string `json:"layer,omitempty"`
	// Approval is the held call's id; By who answered it, on Channel.
	Approval string `json:"approval,omitempty"`
	By       string `json:"by,omitempty"`
	Channel  string `json:"channel,omitempty"`
	// Detail is more about an approval asked (the question) or a session.
	Detail any `json:"detail,omitempty"`
}

// Bool is a pointer to b, for Event.Allowed.
func Bool(b bool) *bool { return &b }

// DefaultBuffer is how many events a watcher may fall behind before it is
// dropped.
const DefaultBuffer = 4096

// Hub fans events out to watchers. The zero value is not usable; a nil
// *Hub takes events and sends them nowhere.
type Hub struct {
	mu     sync.Mutex
	seq    uint64
	buffer int
	subs   map[*Watch]struct{}
	now    func() time.Time
}

// NewHub returns a hub whose watchers may fall buffer events behind (0:
// DefaultBuffer).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Hub{buffer: buffer, subs: map[*Watch]struct{}{}, now: time.Now}
}

// Watch is one watcher's events.
type Watch struct {
	// C delivers the events in order; it is closed when the watch ends
	// (Close, or the watcher fell behind: Dropped).
	C       <-chan Event
	c       chan Event
	hub     *Hub
	dropped bool
}

// Publish numbers e and sends it to every watcher, at once: a watcher
// whose buffer is full is dropped.
func (h *Hub) Publish(e Event) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq = h.seq
	if e.Time.IsZero() {
		e.Time = h.now().UTC()
	}
	for w := range h.subs {
		select {
		case w.c <- e:
		default:
			w.dropped = true
			delete(h.subs, w)
			close(w.c)
		}
	}
}

// Watch starts a watch of the events published from now on.
func (h *Hub) Watch() *Watch {
	c := make(chan Event, h.buffer)
	w := &Watch{C: c, c: c, hub: h}
	h.mu.Lock()
	h.subs[w] = struct{}{}
	h.mu.Unlock()
	return w
}

// Close ends the watch.
func (w *Watch) Close() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[w]; ok {
		delete(h.subs, w)
		close(w.c)
	}
}

// Dropped reports whether the watch ended because the watcher fell
// behind.
func (w *Watch) Dropped() bool {
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	return w.dropped
}

// Watchers is how many watches are open.
func (h *Hub) Watchers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Seq is the number of the last event published (0: none yet).
func (h *Hub) Seq() uint64 {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}
