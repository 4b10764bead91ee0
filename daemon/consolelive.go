package daemon

import (
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
)

// liveView is what the console shows of the event stream: the sessions
// (open, and the last ones that ended, with why) and their last calls, and
// the last held calls that were answered, with what became of each call
// afterwards. The calls still waiting are the broker's (approval.Broker.List).
type liveView struct {
	mu       sync.Mutex
	sessions map[string]*liveSession
	answers  map[string]*liveAnswer
	// seq is the last event taken; changed is closed (and replaced) at
	// each, for caughtUp.
	seq     uint64
	changed chan struct{}
	// missed is when the view's watch was dropped for falling behind
	// (zero: never): the events it missed will not come again, and the
	// daemon keeps no list of them to rebuild from, so the page says
	// that what it shows of sessions and answers may be incomplete.
	missed time.Time
}

// liveSession is a session and its last calls, newest first. Version
// changes whenever what the console shows of it does.
type liveSession struct {
	ID, Agent, Tool string
	Opened          time.Time
	// Ended is when the session ended (zero: open), and EndedWhy why: its
	// MCP client ended it or went idle, the daemon shut down or reloaded,
	// or an operator ended it.
	Ended    time.Time
	EndedWhy string
	Last     []events.Event
	Version  uint64
}

// liveAnswer is a held call that was answered (or not in time), and what
// became of the call.
type liveAnswer struct {
	Request approval.Request
	// Approved is the answer; Channel, By and Note as the broker gave them
	// (Channel timeout: nobody answered; cancelled: the call or its session
	// ended first).
	Approved  bool
	Channel   string
	By, Note  string
	Answered  time.Time
	Outcome   *events.Event // the call's decision after the answer (nil: not yet)
	Version   uint64
	requested bool // Request came from the approval_asked event
}

// liveCalls is how many of a session's last calls the console keeps;
// liveEnded how many ended sessions, liveAnswers how many answered calls.
const (
	liveCalls   = 10
	liveEnded   = 50
	liveAnswers = 50
)

func newLiveView() *liveView {
	return &liveView{sessions: map[string]*liveSession{}, answers: map[string]*liveAnswer{}, changed: make(chan struct{})}
}

// follow keeps the view up to date until the hub stops sending; a watch
// dropped for falling behind is taken up again.
func (v *liveView) follow(h *events.Hub) {
	if h == nil {
		return
	}
	for {
		w := h.Watch()
		// Caught up from here: what was published before this watch (or
		// while a dropped one was not read) will never come.
		v.mu.Lock()
		v.tick(h.Seq())
		v.mu.Unlock()
		for e := range w.C {
			v.take(e)
		}
		if !w.Dropped() {
			return
		}
		v.mu.Lock()
		v.missed = time.Now()
		v.mu.Unlock()
	}
}

// missedAt is when the view last missed events (zero: never).
func (v *liveView) missedAt() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.missed
}

func (v *liveView) take(e events.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.tick(e.Seq)
	switch e.Type {
	case events.SessionOpened:
		v.sessions[e.Session] = &liveSession{ID: e.Session, Agent: e.Agent, Tool: e.Tool, Opened: e.Time, Version: e.Seq}
	case events.SessionEnded:
		s := v.session(e)
		s.Ended, s.EndedWhy, s.Version = e.Time, e.Reason, e.Seq
		v.forgetEnded()
	case events.Decision, events.ApprovalAsked, events.ApprovalAnswered:
		s := v.session(e)
		s.Last = slices.Insert(s.Last, 0, e)
		if len(s.Last) > liveCalls {
			s.Last = s.Last[:liveCalls]
		}
		s.Version = e.Seq
		v.takeApproval(e)
	}
}

// tick notes that the event seq was taken; v.mu must be held.
func (v *liveView) tick(seq uint64) {
	v.seq = max(v.seq, seq)
	close(v.changed)
	v.changed = make(chan struct{})
}

// session is the session of e, made when the view missed its opening;
// v.mu must be held.
func (v *liveView) session(e events.Event) *liveSession {
	s := v.sessions[e.Session]
	if s == nil {
		s = &liveSession{ID: e.Session, Agent: e.Agent, Tool: e.Tool, Opened: e.Time}
		v.sessions[e.Session] = s
	}
	return s
}

// takeApproval follows a held call: asked, answered, and the decision on
// the call after the answer; v.mu must be held.
func (v *liveView) takeApproval(e events.Event) {
	if e.Approval == "" {
		return
	}
	a := v.answers[e.Approval]
	switch e.Type {
	case events.ApprovalAsked:
		req, _ := e.Detail.(approval.Request)
		if a == nil {
			// Kept until answered: only answered ones are shown.
			v.answers[e.Approval] = &liveAnswer{Request: req, Version: e.Seq, requested: true}
		}
		return
	case events.ApprovalAnswered:
		if a == nil {
			a = &liveAnswer{Request: approval.Request{ID: e.Approval, Session: e.Session, Agent: e.Agent, Tool: e.Tool, Command: e.Command}}
			v.answers[e.Approval] = a
		}
		a.Approved = e.Allowed != nil && *e.Allowed
		a.Channel, a.By, a.Note, a.Answered = e.Channel, e.By, e.Reason, e.Time
	case events.Decision:
		if a == nil {
			return
		}
		d := e
		a.Outcome = &d
	}
	a.Version = e.Seq
	v.forgetAnswers()
}

// answeredHere notes an answer the console gave, before the call's own
// event says so (the page the operator is sent back to shows it).
func (v *liveView) answeredHere(req approval.Request, o approval.Outcome, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a := v.answers[req.ID]
	if a == nil {
		a = &liveAnswer{Request: req}
		v.answers[req.ID] = a
	}
	if a.Channel == "" {
		a.Approved, a.Channel, a.By, a.Note, a.Answered = o.Approved, o.Channel, o.By, o.Note, at
		a.Version++
	}
}

// endedHere notes a session the console ended, before its event says so.
func (v *liveView) endedHere(id, why string, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.sessions[id]; s != nil && s.Ended.IsZero() {
		s.Ended, s.EndedWhy = at, why
		s.Version++
	}
}

// forgetEnded drops the oldest ended sessions beyond liveEnded; v.mu must
// be held.
func (v *liveView) forgetEnded() {
	var ended []*liveSession
	for _, s := range v.sessions {
		if !s.Ended.IsZero() {
			ended = append(ended, s)
		}
	}
	if len(ended) <= liveEnded {
		return
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].Ended.Before(ended[j].Ended) })
	for _, s := range ended[:len(ended)-liveEnded] {
		delete(v.sessions, s.ID)
	}
}

// forgetAnswers drops the oldest answered calls beyond liveAnswers, and
// asked ones never answered (withdrawn) once as many are held; v.mu must
// be held.
func (v *liveView) forgetAnswers() {
	if len(v.answers) <= 2*liveAnswers {
		return
	}
	all := make([]*liveAnswer, 0, len(v.answers))
	for _, a := range v.answers {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Version < all[j].Version })
	for _, a := range all[:len(all)-liveAnswers] {
		delete(v.answers, a.Request.ID)
	}
}

// caughtUp waits until the view has taken the event seq, or wait has
// passed: a page the console's script asks for after an event shows it.
func (v *liveView) caughtUp(seq uint64, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		v.mu.Lock()
		done, ch := v.seq >= seq, v.changed
		v.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		}
	}
}

// list is the sessions, oldest first (a row never moves: new sessions
// come last, and an ended one stays where it was), copied.
func (v *liveView) list() []liveSession {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]liveSession, 0, len(v.sessions))
	for _, s := range v.sessions {
		c := *s
		c.Last = slices.Clone(s.Last)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Opened.Equal(out[j].Opened) {
			return out[i].Opened.Before(out[j].Opened)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// answered is the held calls answered, the last answered first, copied.
func (v *liveView) answered() []liveAnswer {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []liveAnswer
	for _, a := range v.answers {
		if a.Channel == "" {
			continue
		}
		c := *a
		if a.Outcome != nil {
			o := *a.Outcome
			c.Outcome = &o
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Answered.After(out[j].Answered) })
	return out[:min(len(out), liveAnswers)]
}

// Key and Version name an answered call's card for the page's script.
func (a liveAnswer) Key() string { return "answer-" + a.Request.ID }

// VersionText is Version as the page carries it.
func (a liveAnswer) VersionText() string { return strconv.FormatUint(a.Version, 10) }

// VersionText is Version as the page carries it.
func (s liveSession) VersionText() string {
	if s.Ended.IsZero() {
		return strconv.FormatUint(s.Version, 10)
	}
	return "ended-" + strconv.FormatUint(s.Version, 10)
}

// Answer says how the held call was answered, for the console.
func (a liveAnswer) Answer() string {
	by := ""
	if a.By != "" {
		by = " by " + a.By
	}
	switch a.Channel {
	case approval.ChannelTimeout:
		return "Nobody answered before the deadline: the call was refused."
	case approval.ChannelCancelled:
		return "The call or its session ended before an answer: the call was refused."
	}
	if a.Approved {
		return "Approved" + by + " (" + a.Channel + ")."
	}
	return "Denied" + by + " (" + a.Channel + "): the call was refused."
}

// ThenText says what became of an approved call ("" for a call that was
// not approved), and ThenClass its class on the page: "ran", "refused" or
// "waiting".
func (a liveAnswer) ThenText() string { text, _ := a.then(); return text }

// ThenClass: see ThenText.
func (a liveAnswer) ThenClass() string { _, class := a.then(); return class }

func (a liveAnswer) then() (text, class string) {
	if !a.Approved {
		return "", ""
	}
	switch o := a.Outcome; {
	case o == nil:
		return "The call has not finished yet.", "waiting"
	case o.Allowed != nil && *o.Allowed:
		return "Then the call ran: allowed.", "ran"
	default:
		text = "Then the call was refused at " + o.Stage
		if o.Reason != "" {
			text += ": " + o.Reason
		}
		return text, "refused"
	}
}
