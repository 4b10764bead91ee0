package executor

import (
	"fmt"
	"maps"
	"time"

	"github.com/browsergate/browsergate/toolclad"
)

// limits bound a session: its lifetime (session_timeout_seconds), idleness
// (idle_timeout_seconds) and interaction budget (max_interactions). One
// rule, expiry, says when a session is over; the gate's decision and the
// timers that free an abandoned session's browser both use it.
type limits struct {
	created      time.Time
	lastCall     time.Time
	interactions int            // concluded gated calls
	counts       map[string]int // executed commands by name
	// expired is why the session takes no more calls ("" while it does).
	expired   string
	idleTimer *time.Timer
	lifeTimer *time.Timer
	// unused: the session was made ready before its first call
	// (Executor.Warm) and has had none yet; its lifetime and idleness
	// count from that call. unusedTimer closes its tab if none comes.
	unused      bool
	unusedTimer *time.Timer
}

func newLimits(now time.Time) limits {
	return limits{created: now, lastCall: now, counts: map[string]int{}}
}

// expiry says why a session with these limits is over at now under the
// manifest's bounds, or "" when it is not: it lived longer than
// session_timeout_seconds or had no call for longer than
// idle_timeout_seconds. (max_interactions is a budget, not an expiry:
// see budgetUsed.) The reason starts with the name of the bound, which is
// the rule a refusal names.
func (l *limits) expiry(b *toolclad.Browser, now time.Time) string {
	switch {
	case l.expired != "":
		return l.expired
	case now.Sub(l.created) > b.SessionTimeout:
		return fmt.Sprintf("session_timeout_seconds: the session is older than %s", b.SessionTimeout)
	case now.Sub(l.lastCall) > b.IdleTimeout:
		return fmt.Sprintf("idle_timeout_seconds: no call for more than %s", b.IdleTimeout)
	}
	return ""
}

// budgetUsed says why one more interaction is over the budget, or "".
func (l *limits) budgetUsed(b *toolclad.Browser) string {
	if l.interactions >= b.MaxInteractions {
		return fmt.Sprintf("max_interactions: the session has used all %d interactions of max_interactions", b.MaxInteractions)
	}
	return ""
}

// counters are the per-session counters Cedar sees (interaction_count is
// separate): session_<command>_count for every built-in command, declared
// or not, so that the schema can declare them all and a policy never reads
// a missing attribute; and the documented session_submit_count.
// snapshot is a copy of the limits that the session's later calls do
// not change (its timers are not the copy's to use).
func (l *limits) snapshot() limits {
	c := *l
	c.counts = maps.Clone(l.counts)
	return c
}

func (l *limits) counters() map[string]int {
	out := make(map[string]int, len(builtinCommands)+1)
	for _, c := range builtinCommands {
		out["session_"+c+"_count"] = l.counts[c]
	}
	out["session_submit_count"] = l.counts["submit_form"]
	return out
}

var builtinCommands = toolclad.BuiltinCommands()

func (l *limits) stopTimers() {
	for _, t := range []*time.Timer{l.idleTimer, l.lifeTimer, l.unusedTimer} {
		if t != nil {
			t.Stop()
		}
	}
}

// armTimers closes the session's browser context as soon as the idle or
// session timeout passes, not only at the next call, so an abandoned tab
// does not keep running. The decision itself is made on the clock, by
// expiry; the timers only free resources.
func (e *Executor) armTimers(s *session) {
	b := &s.manifest.Browser
	expire := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended || s.limits.expired != "" {
			return
		}
		if why := s.limits.expiry(b, e.cfg.Now()); why != "" {
			s.limits.expired = why
			s.closeTabs()
			s.downloads.stop(time.Now().Add(saveEndWait))
			e.recordPending(s, "the session expired ("+why+") and its browser context closed")
		}
	}
	if s.limits.idleTimer == nil {
		s.limits.idleTimer = time.AfterFunc(b.IdleTimeout, expire)
		s.limits.lifeTimer = time.AfterFunc(b.SessionTimeout, expire)
		return
	}
	s.limits.idleTimer.Reset(b.IdleTimeout)
}
