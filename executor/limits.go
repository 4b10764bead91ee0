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
