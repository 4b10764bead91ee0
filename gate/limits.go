package gate

import (
	"fmt"
	"maps"
	"time"

	"github.com/browsergate/browsergate/toolclad"
)

// Limits are the counters that bound a session: its lifetime
// (session_timeout_seconds), idleness (idle_timeout_seconds) and
// interaction budget (max_interactions), and the counts Cedar's rate
// limits read. One rule, Expiry, says when a session is over; the
// decision and the executor's timers that free an abandoned session's
// browser both use it.
type Limits struct {
	Created      time.Time
	LastCall     time.Time
	Interactions int // concluded gated calls
	// Continuations are the free continuations the session has had: calls
	// that handed out a page further on in a reply the agent had (Reading)
	// and did not count in Interactions. TakeContinuation bounds them.
	Continuations int
	Counts        map[string]int // executed commands by name
	// Expired is why the session takes no more calls ("" while it does).
	Expired string
}

// NewLimits returns the limits of a session created at now.
func NewLimits(now time.Time) Limits {
	return Limits{Created: now, LastCall: now, Counts: map[string]int{}}
}

// Expiry says why a session with these limits is over at now under the
// manifest's bounds, or "" when it is not: it lived longer than
// session_timeout_seconds or had no call for longer than
// idle_timeout_seconds. (max_interactions is a budget, not an expiry:
// see BudgetUsed.) The reason starts with the name of the bound, which is
// the rule a refusal names.
func (l *Limits) Expiry(b *toolclad.Browser, now time.Time) string {
	switch {
	case l.Expired != "":
		return l.Expired
	case now.Sub(l.Created) > b.SessionTimeout:
		return fmt.Sprintf("session_timeout_seconds: the session is older than %s", b.SessionTimeout)
	case now.Sub(l.LastCall) > b.IdleTimeout:
		return fmt.Sprintf("idle_timeout_seconds: no call for more than %s", b.IdleTimeout)
	}
	return ""
}

// BudgetUsed says why one more interaction is over the budget, or "".
func (l *Limits) BudgetUsed(b *toolclad.Browser) string {
	if l.Interactions >= b.MaxInteractions {
		return fmt.Sprintf("max_interactions: the session has used all %d interactions of max_interactions", b.MaxInteractions)
	}
	return ""
}

// TakeContinuation says whether a free continuation (Reading.Advance) may
// go uncounted, and counts it among the session's continuations when it
// may: a session has at most max_interactions of them, so that the calls
// that run in it are at most twice max_interactions whatever its pages
// hold. Past that bound a continuation counts as any call does.
func (l *Limits) TakeContinuation(b *toolclad.Browser) bool {
	if l.Continuations >= b.MaxInteractions {
		return false
	}
	l.Continuations++
	return true
}

// Snapshot is a copy of the limits that the session's later calls do not
// change.
func (l *Limits) Snapshot() Limits {
	c := *l
	c.Counts = maps.Clone(l.Counts)
	return c
}

// Counters are the per-session counters Cedar sees (interaction_count is
// separate): session_<command>_count for every built-in command, declared
// or not, so that the schema can declare them all and a policy never reads
// a missing attribute; and the documented session_submit_count.
func (l *Limits) Counters() map[string]int {
	out := make(map[string]int, len(builtinCommands)+1)
	for _, c := range builtinCommands {
		out["session_"+c+"_count"] = l.Counts[c]
	}
	out["session_submit_count"] = l.Counts["submit_form"]
	return out
}

var builtinCommands = toolclad.BuiltinCommands()
