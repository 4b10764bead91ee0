package executor

import (
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
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
// keeps running and is told nothing; it gets what no other session needs.
//
// Once a second the watch reads the processor time of each renderer of
// each browser the daemon launched (a browser in live mode is the user's:
// its processes are left alone). A renderer that kept a core busy for
// spinTicks seconds is looked for among the tabs of the sessions that have
// no call under way and have had none for spinGrace. Each browser context
// has renderers of its own, so a renderer is one session's. A tab is in
// that renderer when the processor time the renderer reports for itself
// (Performance.getMetrics' ProcessTime, which a page whose script never
// yields still answers) is the process's, read from /proc, twice, and
// rising.
const (
	spinTick  = time.Second
	spinBusy  = 0.9 // the share of a core a renderer used over a tick to count as busy
	spinTicks = 2
	spinGrace = 3 * time.Second
	// spinRetry is how long a busy renderer that was not found in an
	// idle session's tab (its session may have had a call under way) is
	// left before it is looked for again.
	spinRetry = 2 * time.Second
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
		case now := <-ticker.C:
			w.tick(sessions(), now)
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
	start    uint64 // proctree.Stat.Start: a pid taken again is another process
	renderer bool
	cpu      int64 // proctree.Stat.CPU at the last tick
	at       time.Time
	busy     int       // busy ticks in a row
	nextLook time.Time // when a busy renderer is looked for again
}

// tick is one look at the renderers of every launched browser of the
// sessions.
func (w *spinWatch) tick(sessions []*session, now time.Time) {
	browsers := map[int][]*session{} // browser pid → its sessions
	pids := map[*backend]int{}
	for _, s := range sessions {
		pid, ok := pids[s.backend]
		if !ok {
			pid = s.backend.browserPID()
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
		for _, pid := range proctree.DescendantsIn(stats, browser) {
			seen[pid] = true
			if w.busy(pid, stats[pid], now) && !sparetime.Idle(pid) {
				w.procs[pid].nextLook = now.Add(spinRetry)
				for _, s := range sessions {
					if s.lowerIfIn(pid, stats[pid].Start) {
						break
					}
				}
			}
		}
	}
	for pid := range w.procs {
		if !seen[pid] {
			delete(w.procs, pid)
		}
	}
}

// busy notes process pid's processor time, and reports whether it is a
// renderer that kept a core busy for spinTicks ticks and is due to be
// looked for.
func (w *spinWatch) busy(pid int, st proctree.Stat, now time.Time) bool {
	p := w.procs[pid]
	if p == nil || p.start != st.Start {
		w.procs[pid] = &watchedProc{start: st.Start, renderer: isRenderer(pid), cpu: st.CPU, at: now}
		return false
	}
	used := float64(st.CPU-p.cpu) / proctree.ClockTicks / now.Sub(p.at).Seconds()
	p.cpu, p.at = st.CPU, now
	if !p.renderer || used < spinBusy {
		p.busy = 0
		return false
	}
	p.busy++
	return p.busy >= spinTicks && !now.Before(p.nextLook)
}

// isRenderer reports whether pid is a Chromium renderer: its command line
// (which Chromium rewrites, spaces between the arguments) says
// --type=renderer.
func isRenderer(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(strings.ReplaceAll(string(data), "\x00", " ")+" ", "--type=renderer ")
}

// lowerIfIn lowers renderer pid (started at start) if one of the
// session's tabs is in it and the session has no call under way and has
// had none for spinGrace. It reports whether the renderer is the
// session's.
func (s *session) lowerIfIn(pid int, start uint64) bool {
	if !s.mu.TryLock() {
		return false // a call is under way
	}
	defer s.mu.Unlock()
	if s.ended || time.Since(s.lastCallEnd) < spinGrace {
		return false
	}
	for _, ctx := range s.tabContexts() {
		if !tabInProcess(ctx, pid) {
			continue
		}
		l, err := sparetime.Lower(pid, start)
		if err != nil {
			s.backend.logger.Debug("could not lower a busy renderer", "session", s.id, "pid", pid, "error", err)
			return true
		}
		s.lowered = append(s.lowered, l)
		s.backend.logger.Info("a page keeps its renderer busy while its session waits for the agent: it runs on spare processor time until the session's next call",
			"session", s.id, "pid", pid)
		return true
	}
	return false
}

// raiseLowered gives the session's lowered renderers their priority back,
// as a call begins (s.mu held).
func (s *session) raiseLowered() {
	for _, l := range s.lowered {
		if err := l.Raise(); err != nil && !errors.Is(err, sparetime.ErrEnded) {
			s.backend.logger.Warn("could not give a renderer its priority back", "session", s.id, "pid", l.PID, "error", err)
		}
	}
	s.lowered = nil
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

// tabInProcess reports whether the tab of ctx is in process pid: twice,
// the processor time its renderer reports is pid's, read right after, and
// the second is later than the first (an idle renderer's time stands
// still, and may equal a busy one's once).
func tabInProcess(ctx context.Context, pid int) bool {
	first, ok := reportsTimeOf(ctx, pid)
	if !ok {
		return false
	}
	time.Sleep(50 * time.Millisecond)
	second, ok := reportsTimeOf(ctx, pid)
	return ok && second > first
}

// reportsTimeOf asks the tab's renderer for its processor time and reads
// pid's: it returns the renderer's, in clock ticks, and whether pid's is
// the same, give or take a tick, or ahead of it by no more than a busy
// process used while the answer came back.
func reportsTimeOf(ctx context.Context, pid int) (int64, bool) {
	ctx, cancel := context.WithTimeout(ctx, spinAskWait)
	defer cancel()
	t0 := time.Now()
	r, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
	took := time.Since(t0)
	if err != nil {
		return 0, false
	}
	st, ok := proctree.ReadStat(pid)
	if !ok {
		return 0, false
	}
	for _, m := range r.Metrics {
		if m.Name == "ProcessTime" {
			reported := int64(math.Round(m.Value * proctree.ClockTicks))
			ahead := st.CPU - reported
			return reported, ahead >= -1 && ahead <= int64(took.Seconds()*proctree.ClockTicks)+2
		}
	}
	return 0, false
}
