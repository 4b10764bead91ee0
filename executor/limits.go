package executor

import (
	"time"

	"github.com/browsergate/browsergate/gate"
)

// limits are a session's gate.Limits — its lifetime, idleness and
// interaction budget, and the counts Cedar reads, which the decision
// judges by — and the timers that free an abandoned session's browser.
type limits struct {
	gate.Limits
	idleTimer *time.Timer
	lifeTimer *time.Timer
	// unused: the session was made ready before its first call
	// (Executor.Warm) and has had none yet; its lifetime and idleness
	// count from that call. unusedTimer closes its tab if none comes.
	unused      bool
	unusedTimer *time.Timer
}

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
// Expiry; the timers only free resources.
func (e *Executor) armTimers(s *session) {
	b := &s.manifest.Browser
	expire := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended || s.limits.Expired != "" {
			return
		}
		if why := s.limits.Expiry(b, e.cfg.Now()); why != "" {
			s.limits.Expired = why
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
