package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// waitingSession is a session that has not begun to end, as enter sees it.
func waitingSession() (*session, context.CancelCauseFunc) {
	s := &session{}
	s.stopping, s.stopNow = context.WithCancelCause(context.Background())
	return s, s.stopNow
}

// untilWaiting waits until n calls wait at the turnstile.
func untilWaiting(t *testing.T, ts *turnstile, n int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for ts.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls wait at the turnstile, want %d", ts.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTurnstileServesWaitersInTheirOrder: past its bound, calls wait, and
// each place given back goes to the call that has waited longest.
func TestTurnstileServesWaitersInTheirOrder(t *testing.T) {
	ts := newTurnstile(1, time.Minute)
	s, _ := waitingSession()
	leave, d := ts.enter(context.Background(), s, true)
	if d != nil {
		t.Fatalf("the first call was refused: %v", d)
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			leave, d := ts.enter(context.Background(), s, true)
			if d != nil {
				t.Errorf("waiter %d refused: %v", i, d)
				order <- -1
				return
			}
			order <- i
			leave()
		}()
		untilWaiting(t, ts, int64(i+1)) // each comes after the one before
	}
	leave()
	for want := range 3 {
		if got := <-order; got != want {
			t.Fatalf("waiter %d got its turn in place %d", got, want)
		}
	}
}

// TestTurnstileRefusesAfterItsWait: a call that waits longer than the
// turnstile's wait is refused at stage limits, saying the machine is
// saturated, with the bound and the calls that waited before it; a call
// whose client gives up, or whose session begins to end, is refused too.
// None of them takes a place.
func TestTurnstileRefusesAfterItsWait(t *testing.T) {
	ts := newTurnstile(1, 50*time.Millisecond)
	s, _ := waitingSession()
	leave, _ := ts.enter(context.Background(), s, true)
	defer leave()

	_, d := ts.enter(context.Background(), s, true)
	if d == nil || d.Stage != evidence.StageLimits || d.Rule != "machine saturated" ||
		// (the numbers are marked as values: pagetext)
		!strings.Contains(pagetext.Unmarked(d.Reason), "running 1 browser calls at once, its bound (serve --calls-at-once), and 0 more were waiting before this one: it waited 50ms for its turn and did not run") {
		t.Errorf("a call past the wait: %+v, want the refusal that says the machine is saturated", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, d := newTurnstileHeld(t).enter(ctx, s, true); d == nil || !strings.Contains(d.Reason, "the client gave up while the call waited for its turn") {
		t.Errorf("a call whose client gave up: %+v", d)
	}

	ended, stop := waitingSession()
	stop(&sessionStop{rule: "idle", reason: "the session ended: idle for 30m"})
	if _, d := newTurnstileHeld(t).enter(context.Background(), ended, true); d == nil || d.Rule != "idle" {
		t.Errorf("a call of a session that began to end: %+v, want the session's own reason", d)
	}
	if n := len(ts.places); n != 1 {
		t.Errorf("%d places taken after the refusals, want the first call's only", n)
	}
}

// newTurnstileHeld is a turnstile of one place, taken, with a long wait.
func newTurnstileHeld(t *testing.T) *turnstile {
	ts := newTurnstile(1, time.Hour)
	s, _ := waitingSession()
	if _, d := ts.enter(context.Background(), s, true); d != nil {
		t.Fatal(d)
	}
	return ts
}

// TestTurnstileWaitsWithoutBoundForADecidedCall: a call a human has
// decided (bounded false) waits past the turnstile's wait, and gets the
// place given back.
func TestTurnstileWaitsWithoutBoundForADecidedCall(t *testing.T) {
	ts := newTurnstile(1, 10*time.Millisecond)
	s, _ := waitingSession()
	leave, _ := ts.enter(context.Background(), s, true)
	got := make(chan *DenyError, 1)
	go func() {
		leave, d := ts.enter(context.Background(), s, false)
		if d == nil {
			leave()
		}
		got <- d
	}()
	untilWaiting(t, ts, 1)
	select {
	case d := <-got:
		t.Fatalf("the decided call stopped waiting with the place held: %+v", d)
	case <-time.After(20 * ts.wait):
	}
	leave()
	if d := <-got; d != nil {
		t.Errorf("the decided call, once the place was given back: %+v", d)
	}
}
