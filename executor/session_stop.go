package executor

import (
	"context"

	"github.com/browsergate/browsergate/evidence"
)

// sessionStop is why a session is ending, as the refusal of a call in
// flight on it says: the cause of the session's stopping context.
type sessionStop struct {
	rule, reason string
}

func (s *sessionStop) Error() string { return s.reason }

// stopCalls marks the session as ending, before its lock is taken: the
// call that holds the lock may be anywhere between observing and acting,
// and a flag it finds only once it waits for a human would miss a call
// still deciding (it would then open an approval and act on it after the
// session was ended). A call waiting for a human stops waiting, a command
// under way is cancelled, and a call checks the flag after every wait and
// before it acts, and is refused then with rule and reason. The first stop
// is the one a call is told of.
func (s *session) stopCalls(rule, reason string) {
	s.stopNow(&sessionStop{rule: rule, reason: reason})
}

// stopped is the refusal of a call on a session that is ending (nil: it
// is not).
func (s *session) stopped() *DenyError {
	if s.stopping.Err() == nil {
		return nil
	}
	why, ok := context.Cause(s.stopping).(*sessionStop)
	if !ok {
		return deny(evidence.StageLimits, "session ended", "the session ended while this call was in flight; nothing was done")
	}
	return &DenyError{Stage: evidence.StageLimits, Rule: why.rule, Reason: why.reason}
}

// untilStopped is ctx, cancelled too when the session begins to end.
func (s *session) untilStopped(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stopping, cancel)
	return ctx, func() { stop(); cancel() }
}
