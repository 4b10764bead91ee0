package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// IdleCPURate is how many times slower than the machine a session's pages
// run while none of its calls runs (after IdleThrottleAfter), in a
// browser browsergate launched
// (Emulation.setCPUThrottlingRate; 1: full speed). The sessions share the
// machine's cores: a page that keeps its renderer busy (a script's
// for (;;) {}, or long loops its timers start again) would take one of
// them from every other session's calls. Chromium throttles by
// suspending the renderer's main thread for all but 1/IdleCPURate of the
// time, which holds a busy loop too (BenchmarkStuckNeighbour measures
// what that gives the other sessions). Each call of the session lifts it
// before it acts and sets it again when it ends, so the agent's own page
// runs at full speed while a call of its runs. Live mode is never
// throttled: its browser is the user's, whose tabs are theirs to run.
const IdleCPURate = 32

// throttleWait bounds each throttle command: a renderer that does not
// answer in time is left as it is (the call goes on; it has its own
// timeout).
const throttleWait = 2 * time.Second

// IdleThrottleAfter is how long after a call of the session its pages
// run at full speed still: what a page does as a call leaves it (loading,
// rendering, its timers' first work) is not slowed, and a page that keeps
// its renderer busy for longer is held.
const IdleThrottleAfter = 20 * time.Second

// idleThrottle are the tabs whose pages run throttled between the
// session's calls.
type idleThrottle struct {
	tabs []context.Context // chromedp contexts of the tabs throttled
	// timer throttles the tabs IdleThrottleAfter after the call's end
	// (nil: no call has armed it); setting is closed when it has: tabs is
	// its until then.
	timer   *time.Timer
	setting chan struct{}
}

// throttles reports whether the session's pages are throttled between
// its calls: those of a browser browsergate launched.
func (s *session) throttles() bool {
	return IdleCPURate > 1 && s.backend != nil && s.backend.key.connect == "launch" && s.web == nil
}

// fullSpeed lifts the throttle from the tabs it was set on after the
// session's previous call, or stops it from being set.
func (s *session) fullSpeed() {
	if s.idle.timer != nil {
		if !s.idle.timer.Stop() {
			<-s.idle.setting // it fired: let it finish
		}
		s.idle.timer, s.idle.setting = nil, nil
	}
	for _, ctx := range s.idle.tabs {
		setCPURate(ctx, 1)
	}
	s.idle.tabs = nil
}

// throttleIdle arms the throttle of the session's tabs (the current one
// and those it switched away from) as its call ends, for when it has
// been idle IdleThrottleAfter.
func (s *session) throttleIdle() {
	if !s.throttles() {
		return
	}
	var tabs []context.Context
	if s.tab.open() {
		tabs = append(tabs, s.tab.ctx)
	}
	for _, t := range s.tabs.parked {
		if t.open() {
			tabs = append(tabs, t.ctx)
		}
	}
	done := make(chan struct{})
	s.idle.setting = done
	s.idle.timer = time.AfterFunc(IdleThrottleAfter, func() {
		defer close(done)
		for _, ctx := range tabs {
			if setCPURate(ctx, IdleCPURate) {
				s.idle.tabs = append(s.idle.tabs, ctx)
			}
		}
	})
}

// setCPURate sets the CPU throttling rate of the tab of ctx, and reports
// whether it was set.
func setCPURate(ctx context.Context, rate float64) bool {
	if ctx.Err() != nil {
		return false
	}
	c, cancel := context.WithTimeout(ctx, throttleWait)
	defer cancel()
	_, err := chromedp.Call(c, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate})
	return err == nil
}

// unanswered says what an error of a call whose time ran out means: the
// page did not answer in time (a renderer kept busy by a script that
// never yields does this), rather than Chromium's bare "context deadline
// exceeded"; the call ended, so the session takes calls again.
func (s *session) unanswered(ctx context.Context, err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: the page did not answer within the call's timeout (timeout_seconds %d): its renderer may be kept busy by a script that never yields; navigate elsewhere (the tab is replaced if the page still does not answer)",
		err, s.manifest.Tool.TimeoutSeconds)
}
