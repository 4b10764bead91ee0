package executor

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// A turnstile bounds the calls of browser sessions that run at once in
// the daemon, all browsers together: past the bound, a call waits for its
// turn (first come, first served) before it reads the page. On a machine
// with more agents than its cores can serve, every call running at once
// gets a share of the cores too small to read a long page within its
// deadline (the read after a navigate has 10 s); with the turnstile, the
// calls that run get the cores they need and the others wait, outside
// their commands' time. A call that waits longer than the turnstile's wait
// is refused, having done nothing, with the reason: the machine is
// saturated. docs/performance.md ("Many agents at once") has the figures
// the default was chosen by.
//
// A call holds its place while it runs, whatever it waits for (a slow
// site's answer too): calls of sessions that wait on the network take
// places from those that would use the cores. The default bound is
// generous for that reason.
type turnstile struct {
	places  chan struct{}
	wait    time.Duration
	waiting atomic.Int64 // calls waiting for a place now
}

// DefaultCallsPerCore is how many browser calls run at once in the daemon
// for each core (GOMAXPROCS) when Config.CallsAtOnce is 0.
const DefaultCallsPerCore = 8

// DefaultCallWait is how long a call waits for its turn before it is
// refused, when Config.CallWait is 0.
const DefaultCallWait = 30 * time.Second

// newTurnstile lets n calls run at once (0: DefaultCallsPerCore a core),
// and a call wait at most wait (0: DefaultCallWait).
func newTurnstile(n int, wait time.Duration) *turnstile {
	if n <= 0 {
		n = DefaultCallsPerCore * runtime.GOMAXPROCS(0)
	}
	if wait <= 0 {
		wait = DefaultCallWait
	}
	return &turnstile{places: make(chan struct{}, n), wait: wait}
}

// enter waits for a place for the call: it returns the function that
// gives the place back, or the refusal when the wait ran out (bounded:
// the turnstile's wait; otherwise there is none), the client gave up (ctx)
// or the session began to end.
func (ts *turnstile) enter(ctx context.Context, s *session, bounded bool) (leave func(), _ *DenyError) {
	select {
	case ts.places <- struct{}{}:
		return ts.leave, nil
	default:
	}
	ahead := ts.waiting.Add(1) - 1
	defer ts.waiting.Add(-1)
	var waited <-chan time.Time // nil: no bound
	if bounded {
		timer := time.NewTimer(ts.wait)
		defer timer.Stop()
		waited = timer.C
	}
	// Go's runtime hands a place given back to the sender that has waited
	// longest (its channels queue blocked senders in order; the language
	// does not promise it): first come, first served. ahead counts the
	// calls that were waiting as this one began to (approximately: one
	// may be on its way into the select).
	select {
	case ts.places <- struct{}{}:
		return ts.leave, nil
	case <-waited:
		return nil, deny(evidence.StageLimits, "machine saturated",
			"the daemon is running %d browser calls at once, its bound (serve --calls-at-once), and %d more were waiting before this one: it waited %v for its turn and did not run; try again in a moment",
			cap(ts.places), ahead, ts.wait)
	case <-ctx.Done():
		return nil, deny(evidence.StageLimits, "client gave up",
			"the client gave up while the call waited for its turn (the daemon is running %d browser calls at once, its bound): it did not run", cap(ts.places))
	case <-s.stopping.Done():
		return nil, s.stopped()
	}
}

func (ts *turnstile) leave() { <-ts.places }
