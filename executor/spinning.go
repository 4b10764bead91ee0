package executor

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/internal/sparetime"
)

// A page whose script never yields (for (;;) {}) keeps a core busy for as
// long as it is open, and every other session's calls share what is left.
// While its session waits for the agent, nothing its page does is for a
// call: the daemon then lets the page's renderer run on spare processor
// time only (package sparetime), and gives the renderer its priority back
// as the session's next call begins, before it reads the page. The page
// keeps running and is told nothing; it gets what no other process needs.
//
// Once a second the watch reads, for each renderer of each browser the
// daemon launched (a browser in live mode is the user's: its processes
// are left alone), how long its main thread was running or waiting to
// run: a thread that never yields is runnable all the time, however
// little of a core it gets. For a renderer runnable spinBusyTicks seconds
// in a row, the watch looks for its session among those with no call
// under way that have had none for spinGrace. Each browser context has
// renderers of its own, so a renderer is one session's. A tab is in that
// renderer when the processor time the renderer reports for itself
// (Performance.getMetrics' ProcessTime, which a page stuck in a loop still
// answers) is that process's, and no other renderer's, in /proc, twice,
// and rising.
const (
	spinTick      = time.Second
	spinBusy      = 0.9 // the share of a tick a renderer's main thread was runnable to count as busy
	spinBusyTicks = 2
	spinGrace     = 3 * time.Second
	// spinRetry is how long a busy renderer whose session was not found is
	// left before it is looked for again. When every session was asked
	// (it may be an out-of-process frame's), it doubles with each such
	// miss, up to spinRetryMax; not when a session could not be (a call
	// under way, or one that just ended).
	spinRetry    = 2 * time.Second
	spinRetryMax = time.Minute
	// spinAskWait bounds each question to a tab while the watch holds its
	// session's lock: a call that arrives meanwhile waits for it.
	spinAskWait = 300 * time.Millisecond
)

// watchSpinning runs the watch until done is closed; sessions lists the
// open sessions at each tick.
func watchSpinning(done <-chan struct{}, sessions func() []*session) {
	ticker := time.NewTicker(spinTick)
	defer ticker.Stop()
	w := spinWatch{procs: map[int]*watchedProc{}}
	for {
		select {
		case <-done:
			return
		case <-ticker.C:
			w.tick(sessions())
		}
	}
}

// spinWatch is what the watch knows of the browsers' processes between
// ticks.
type spinWatch struct {
	procs map[int]*watchedProc // by pid
}

// watchedProc is one process below a launched browser.
type watchedProc struct {
	start uint64 // proctree.Stat.Start: a pid taken again is another process
	// kind is its ChromiumType, read once it is first busy (a child just
	// forked reads as its zygote for a moment).
	kind     string
	runnable time.Duration // proctree.Runnable at the last tick
	at       time.Time
	busy     int // busy ticks in a row
	misses   int // looks that found no session
	nextLook time.Time
}

// tick is one look at the renderers of every launched browser of the
// sessions.
func (w *spinWatch) tick(sessions []*session) {
	browsers := map[int][]*session{} // browser pid → its sessions
	pids := map[*backend]int{}
	for _, s := range sessions {
		pid, ok := pids[s.backend]
		if !ok {
			if !s.backend.noLowering.Load() {
				pid = s.backend.browserPID()
			}
			pids[s.backend] = pid
		}
		if pid != 0 {
			browsers[pid] = append(browsers[pid], s)
		}
	}
	if len(browsers) == 0 {
		clear(w.procs)
		return
	}
	stats := proctree.Stats()
	seen := map[int]bool{}
	for browser, sessions := range browsers {
		below := proctree.DescendantsIn(stats, browser)
		var due []int
		for _, pid := range below {
			seen[pid] = true
			if w.due(pid, stats[pid].Start) && !sparetime.Idle(pid) {
				due = append(due, pid)
			}
		}
		if len(due) == 0 {
			continue
		}
		// Every renderer of the browser, busy or not, for the check that
		// a tab's time fits no other (a process's kind is kept only once
		// it is busy).
		var renderers []int
		for _, pid := range below {
			if proctree.ChromiumType(pid) == "renderer" {
				renderers = append(renderers, pid)
			}
		}
		for _, pid := range due {
			p := w.procs[pid]
			look := lookNotIn
			for _, s := range sessions {
				if l := s.lowerIfIn(pid, p.start, renderers); l == lookFound {
					look = lookFound
					break
				} else if l == lookSkipped {
					look = lookSkipped
				}
			}
			switch look {
			case lookFound, lookSkipped:
				p.misses = 0
			case lookNotIn:
				p.misses++
			}
			p.nextLook = time.Now().Add(min(spinRetry<<min(p.misses, 8), spinRetryMax))
		}
	}
	for pid := range w.procs {
		if !seen[pid] {
			delete(w.procs, pid)
		}
	}
}

// due reads how long process pid (started at start) was runnable, and
// reports whether it is a renderer due to be looked for (note).
func (w *spinWatch) due(pid int, start uint64) bool {
	r, ok := proctree.Runnable(pid)
	if !ok {
		return false // ended
	}
	return w.note(pid, start, r, time.Now(), func() string { return proctree.ChromiumType(pid) })
}

// note keeps that process pid (started at start) had been runnable for
// runnable by now, and reports whether it is a renderer (kind) that was
// runnable at least spinBusy of the time for spinBusyTicks ticks in a row
// and is due to be looked for.
func (w *spinWatch) note(pid int, start uint64, runnable time.Duration, now time.Time, kind func() string) bool {
	p := w.procs[pid]
	if p == nil || p.start != start {
		w.procs[pid] = &watchedProc{start: start, runnable: runnable, at: now}
		return false
	}
	busy := float64(runnable-p.runnable)/float64(now.Sub(p.at)) >= spinBusy
	p.runnable, p.at = runnable, now
	if !busy {
		p.busy = 0
		return false
	}
	if p.kind == "" {
		p.kind = kind()
	}
	if p.kind != "renderer" {
		return false
	}
	p.busy++
	return p.busy >= spinBusyTicks && !now.Before(p.nextLook)
}

// look is what a session's look for a busy renderer found.
type look int

const (
	lookNotIn   look = iota // none of the session's tabs is in it
	lookFound               // one is (and it was lowered, if it could be)
	lookSkipped             // the session was not asked: a call under way, or one that just ended
)

// lowerIfIn lowers renderer pid (started at start) if one of the
// session's tabs is in it and the session has no call under way, has had
// none for spinGrace and is not ending; renderers are every renderer of
// the session's browser.
func (s *session) lowerIfIn(pid int, start uint64, renderers []int) look {
	if !s.mu.TryLock() {
		return lookSkipped // a call is under way
	}
	defer s.mu.Unlock()
	if s.ended || s.stopped() != nil {
		return lookNotIn
	}
	if time.Since(s.lastCallEnd) < spinGrace {
		return lookSkipped
	}
	ctx, stop := s.untilStopped(context.Background())
	defer stop()
	for _, tab := range s.tabContexts() {
		if !tabInProcess(ctx, tab, pid, renderers) {
			continue
		}
		l, err := sparetime.Lower(pid, start)
		if err != nil && !errors.Is(err, sparetime.ErrEnded) {
			s.backend.noLowering.Store(true)
			s.backend.logger.Warn("could not lower a busy renderer: no more renderers are lowered in this browser", "session", s.id, "pid", pid, "error", err)
		}
		if err != nil {
			return lookFound
		}
		s.lowered = append(s.lowered, l)
		s.backend.logger.Info("a page keeps its renderer busy while its session waits for the agent: it runs on spare processor time until the session's next call",
			"session", s.id, "pid", pid)
		return lookFound
	}
	return lookNotIn
}

// raiseLowered gives the session's lowered renderers their priority back,
// as a call begins (s.mu held). One it could not raise is kept, to try
// again at the next call, and nothing of the session's browser is lowered
// any more.
func (s *session) raiseLowered() {
	kept := s.lowered[:0]
	for _, l := range s.lowered {
		err := l.Raise()
		switch {
		case err == nil:
			s.backend.logger.Debug("a renderer runs at its priority again", "session", s.id, "pid", l.PID)
		case errors.Is(err, sparetime.ErrEnded):
		default:
			s.backend.noLowering.Store(true)
			s.backend.logger.Error("could not give a renderer its priority back: no more renderers are lowered in this browser", "session", s.id, "pid", l.PID, "error", err)
			kept = append(kept, l)
		}
	}
	s.lowered = kept
}

// tabContexts are the contexts of the session's open tabs.
func (s *session) tabContexts() []context.Context {
	var out []context.Context
	if s.tab.open() {
		out = append(out, s.tab.ctx)
	}
	for _, t := range s.tabs.parked {
		if t.open() {
			out = append(out, t.ctx)
		}
	}
	return out
}

// tabInProcess reports whether the tab of tab is in process pid: twice,
// 50 ms apart, the processor time its renderer reports is pid's and no
// other renderer's, and the second is later than the first (an idle
// renderer's time stands still, and may equal a busy one's once). ctx
// ends the questions early.
func tabInProcess(ctx context.Context, tab context.Context, pid int, renderers []int) bool {
	first, ok := processTimeMatches(ctx, tab, pid, renderers)
	if !ok {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(50 * time.Millisecond):
	}
	second, ok := processTimeMatches(ctx, tab, pid, renderers)
	return ok && second > first
}

// processTimeMatches asks the tab's renderer for its processor time and
// returns it, in clock ticks, and whether pid is the one renderer whose
// time, read from /proc right after the answer, fits it: the same or a
// tick behind (the renderer rounds what /proc truncates), or ahead by no
// more than a busy process used while the answer came back, and a tick
// for the reading.
func processTimeMatches(ctx context.Context, tab context.Context, pid int, renderers []int) (int64, bool) {
	ctx, cancel := boundBy(tab, ctx)
	defer cancel()
	ctx, cancelAsk := context.WithTimeout(ctx, spinAskWait)
	defer cancelAsk()
	t0 := time.Now()
	r, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
	took := time.Since(t0)
	if err != nil {
		return 0, false
	}
	var reported int64 = -1
	for _, m := range r.Metrics {
		if m.Name == "ProcessTime" {
			reported = int64(math.Round(m.Value * proctree.ClockTicks))
		}
	}
	if reported <= 0 {
		return 0, false
	}
	slack := int64(math.Ceil(took.Seconds()*proctree.ClockTicks)) + 1
	var fits []int
	for _, other := range renderers {
		if st, ok := proctree.ReadStat(other); ok && st.CPU-reported >= -1 && st.CPU-reported <= slack {
			fits = append(fits, other)
		}
	}
	return reported, len(fits) == 1 && fits[0] == pid
}
