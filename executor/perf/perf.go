// Package perf reads a performance trace of one tab (the browser's Tracing
// domain, Chrome's trace event format) into a short summary: the largest
// contentful paint, the cumulative layout shift, long tasks and total
// blocking time, main-thread time by category and the slowest requests.
//
// A trace covers the whole browser, and so the other tabs of a shared one
// (a pool host, the user's own): Filter keeps only the events of the tab's
// frames and processes, and Analyze reads only those. It is pure: the
// executor records the trace (commands_insight.go).
package perf

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// event is what the summary reads of a trace event.
type event struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`  // microseconds
	Dur  float64 `json:"dur"` // microseconds, for complete ("X") events
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Args struct {
		Frame string `json:"frame"`
		Name  string `json:"name"` // a thread_name metadata event's
		Data  struct {
			Frames []struct {
				Frame     string `json:"frame"`
				Parent    string `json:"parent"`
				ProcessID int    `json:"processId"`
			} `json:"frames"`
			Frame              string  `json:"frame"`
			Parent             string  `json:"parent"`
			ProcessID          int     `json:"processId"`
			WorkerThreadID     int     `json:"workerThreadId"`
			RequestID          string  `json:"requestId"`
			URL                string  `json:"url"`
			Method             string  `json:"requestMethod"`
			StatusCode         int     `json:"statusCode"`
			IsLoadingMainFrame bool    `json:"isLoadingMainFrame"`
			DocumentLoaderURL  string  `json:"documentLoaderURL"`
			WeightedScoreDelta float64 `json:"weighted_score_delta"`
			HadRecentInput     bool    `json:"had_recent_input"`
		} `json:"data"`
	} `json:"args"`
}

// frameOf is the frame an event is about, when it names one.
func (e *event) frameOf() string {
	if e.Args.Frame != "" {
		return e.Args.Frame
	}
	return e.Args.Data.Frame
}

// Trace is a tab's trace: its events (raw, as the browser gave them, for
// the evidence) and the same decoded.
type Trace struct {
	Raw    []json.RawMessage
	events []event
	// Shared is whether a process of the tab runs another tab's frame too:
	// then, of the events that name no frame, only those of the tab's
	// workers' threads are kept.
	Shared bool
}

// thread is a thread of the browser's processes.
type thread struct{ pid, tid int }

// Filter keeps the events of the tab whose main frame is mainFrame: those
// about its frames (its main frame and the frames below it, as the trace's
// TracingStartedInBrowser and FrameCommittedInBrowser events list them),
// and, of those that name no frame, those of the threads of its frames'
// workers (TracingSessionIdForWorker ties a worker's thread to its parent
// frame) and those of the processes its frames run in that run no other
// tab's frame. A process may run another tab's frames too (a site's
// process shared, past the browser's process limit; the user's tabs in
// live mode): its threads that name no frame, the main thread's own work
// among them, cannot be told apart, and are dropped. Everything else (the
// other tabs of the browser, the browser's own work) is dropped. A trace that does not say where the main frame runs
// is an error: nothing of it could be told apart.
func Filter(raw []json.RawMessage, mainFrame string) (*Trace, error) {
	all := make([]event, len(raw))
	for i, r := range raw {
		_ = json.Unmarshal(r, &all[i]) // an event of another shape is read as empty, and dropped
	}
	frames := map[string]bool{mainFrame: true}
	pids := map[int]bool{}
	for grew := true; grew; {
		grew = false
		for _, e := range all {
			type link struct {
				frame, parent string
				pid           int
			}
			var links []link
			switch e.Name {
			case "TracingStartedInBrowser":
				for _, f := range e.Args.Data.Frames {
					links = append(links, link{f.Frame, f.Parent, f.ProcessID})
				}
			case "FrameCommittedInBrowser":
				links = append(links, link{e.Args.Data.Frame, e.Args.Data.Parent, e.Args.Data.ProcessID})
			}
			for _, l := range links {
				if l.frame == "" || !frames[l.frame] && !frames[l.parent] {
					continue
				}
				if !frames[l.frame] || l.pid != 0 && !pids[l.pid] {
					grew = true
				}
				frames[l.frame] = true
				if l.pid != 0 {
					pids[l.pid] = true
				}
			}
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("the trace does not say which process the tab's page runs in, so its events cannot be told from other tabs'")
	}
	// A process is shared when the browser lists another tab's frame in
	// it, or an event of it names a frame not the tab's.
	shared := map[int]bool{}
	workers := map[thread]bool{}
	for _, e := range all {
		switch e.Name {
		case "TracingStartedInBrowser":
			for _, f := range e.Args.Data.Frames {
				if f.Frame != "" && !frames[f.Frame] && pids[f.ProcessID] {
					shared[f.ProcessID] = true
				}
			}
		case "FrameCommittedInBrowser":
			if d := e.Args.Data; d.Frame != "" && !frames[d.Frame] && pids[d.ProcessID] {
				shared[d.ProcessID] = true
			}
		case "TracingSessionIdForWorker":
			if d := e.Args.Data; frames[d.Frame] && d.WorkerThreadID != 0 {
				workers[thread{e.Pid, d.WorkerThreadID}] = true
			}
		}
		if f := e.frameOf(); f != "" && !frames[f] && pids[e.Pid] {
			shared[e.Pid] = true
		}
	}
	t := &Trace{Shared: len(shared) > 0}
	for i, e := range all {
		f := e.frameOf()
		if f != "" && frames[f] || f == "" && (pids[e.Pid] && !shared[e.Pid] || workers[thread{e.Pid, e.Tid}]) {
			t.Raw, t.events = append(t.Raw, raw[i]), append(t.events, e)
		}
	}
	return t, nil
}

// Events is how many events the trace kept.
func (t *Trace) Events() int { return len(t.events) }

// JSON is the trace in Chrome's trace file format ({"traceEvents":[…]}),
// which DevTools' performance panel opens.
func (t *Trace) JSON() []byte {
	b := []byte(`{"traceEvents":[`)
	for i, r := range t.Raw {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...)
}

// Request is one request of the tab, from its send to its end.
type Request struct {
	Method, URL string
	Status      int
	Duration    time.Duration
}

// Summary is what Analyze reads of a trace.
type Summary struct {
	// FCP and LCP are the first and the largest contentful paint of the
	// last page load of the main frame in the trace, from its start; zero
	// when the trace holds no such load (the page had loaded before it
	// began) or no such paint.
	FCP, LCP time.Duration
	Loaded   bool // the trace holds a load of the main frame
	// CLS is the cumulative layout shift of the main frame: the largest
	// session window of shifts (gaps under 1 s, at most 5 s long) not
	// caused by input.
	CLS float64
	// LongTasks are the main-thread tasks over 50 ms, and TBT the time
	// they blocked beyond 50 ms each.
	LongTasks int
	TBT       time.Duration
	// Categories is main-thread time by kind of work (scripting,
	// rendering, painting, loading, other).
	Categories map[string]time.Duration
	// Slowest are the slowest requests, the slowest first (at most
	// maxRequests).
	Slowest []Request
}

// maxRequests bounds the requests a summary lists.
const maxRequests = 5

// longTask is the length beyond which a task is long (and blocks).
const longTask = 50 * time.Millisecond

// categories sorts the main thread's trace events into DevTools' kinds
// of work (its EventCategories, in short).
var categories = map[string]string{
	"FunctionCall": "scripting", "EvaluateScript": "scripting", "v8.compile": "scripting", "v8.compileModule": "scripting",
	"v8.evaluateModule": "scripting", "TimerFire": "scripting", "EventDispatch": "scripting", "FireAnimationFrame": "scripting",
	"RunMicrotasks": "scripting", "V8.Execute": "scripting", "v8.run": "scripting", "XHRReadyStateChange": "scripting",
	"FireIdleCallback": "scripting", "MajorGC": "scripting", "MinorGC": "scripting", "V8.GC_SCAVENGER": "scripting",
	"Layout": "rendering", "UpdateLayoutTree": "rendering", "RecalculateStyles": "rendering", "UpdateLayerTree": "rendering",
	"HitTest": "rendering", "PrePaint": "rendering", "Layerize": "rendering", "IntersectionObserverController::computeIntersections": "rendering",
	"Paint": "painting", "PaintImage": "painting", "CompositeLayers": "painting", "Decode Image": "painting",
	"ImageDecodeTask": "painting", "Commit": "painting", "RasterTask": "painting",
	"ParseHTML": "loading", "ParseAuthorStyleSheet": "loading",
}

// Analyze reads the summary of a filtered trace of the tab whose main
// frame is mainFrame.
func (t *Trace) Analyze(mainFrame string) Summary {
	s := Summary{Categories: map[string]time.Duration{}}
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	mains := map[[2]int]bool{}
	for _, e := range t.events {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			mains[[2]int{e.Pid, e.Tid}] = true
		}
	}
	// The last load of the main frame, and its paints.
	var navStart float64
	for _, e := range t.events {
		if e.Name == "navigationStart" && e.Args.Frame == mainFrame && e.Args.Data.IsLoadingMainFrame && e.Args.Data.DocumentLoaderURL != "" && e.Ts > navStart {
			navStart, s.Loaded = e.Ts, true
		}
	}
	var fcp, lcp float64
	type shift struct{ ts, score float64 }
	var shifts []shift
	var tasks []event
	for _, e := range t.events {
		switch {
		case s.Loaded && e.Ts >= navStart && e.Args.Frame == mainFrame && e.Name == "firstContentfulPaint" && fcp == 0:
			fcp = e.Ts
		case s.Loaded && e.Ts >= navStart && e.Args.Frame == mainFrame && e.Name == "largestContentfulPaint::Candidate" && e.Ts > lcp:
			lcp = e.Ts
		case e.Name == "LayoutShift" && e.frameOf() == mainFrame && !e.Args.Data.HadRecentInput:
			shifts = append(shifts, shift{e.Ts, e.Args.Data.WeightedScoreDelta})
		case e.Ph == "X" && mains[[2]int{e.Pid, e.Tid}]:
			tasks = append(tasks, e)
		}
	}
	if fcp > 0 {
		s.FCP = us(fcp - navStart)
	}
	if lcp > 0 {
		s.LCP = us(lcp - navStart)
	}
	slices.SortFunc(shifts, func(a, b shift) int { return cmpFloat(a.ts, b.ts) })
	var window, start, last float64
	for i, sh := range shifts {
		if i == 0 || sh.ts-last > 1e6 || sh.ts-start > 5e6 {
			window, start = 0, sh.ts
		}
		window += sh.score
		last = sh.ts
		s.CLS = max(s.CLS, window)
	}
	s.mainThread(tasks, us)
	s.Slowest = slowest(t.events)
	return s
}

// mainThread counts long tasks, the time they blocked, and the main
// threads' time by kind of work: each event's self time (its time less
// that of the work of a kind nested in it) goes to its kind, as DevTools
// counts it; task time in no kind's event is "other".
func (s *Summary) mainThread(events []event, us func(float64) time.Duration) {
	slices.SortFunc(events, func(a, b event) int {
		if c := cmpFloat(a.Ts, b.Ts); c != 0 {
			return c
		}
		return cmpFloat(b.Dur, a.Dur) // the enclosing event first
	})
	type open struct {
		kind string
		end  float64
		self float64
	}
	var taskTime, categorised time.Duration
	stacks := map[[2]int][]*open{} // per thread, the work of a kind enclosing the event
	done := func(o *open) {
		s.Categories[o.kind] += us(o.self)
		categorised += us(o.self)
	}
	for _, e := range events {
		if e.Name == "RunTask" || e.Name == "ThreadControllerImpl::RunTask" {
			d := us(e.Dur)
			taskTime += d
			if d > longTask {
				s.LongTasks++
				s.TBT += d - longTask
			}
			continue
		}
		kind, ok := categories[e.Name]
		if !ok {
			continue
		}
		th := [2]int{e.Pid, e.Tid}
		st := stacks[th]
		for len(st) > 0 && st[len(st)-1].end < e.Ts+e.Dur {
			done(st[len(st)-1])
			st = st[:len(st)-1]
		}
		if len(st) > 0 {
			st[len(st)-1].self -= e.Dur
		}
		stacks[th] = append(st, &open{kind: kind, end: e.Ts + e.Dur, self: e.Dur})
	}
	for _, st := range stacks {
		for _, o := range st {
			done(o)
		}
	}
	if taskTime > categorised {
		s.Categories["other"] = taskTime - categorised
	}
}

// slowest pairs each request's send with its end.
func slowest(events []event) []Request {
	type req struct {
		Request
		sent, end float64
	}
	byID := map[string]*req{}
	var order []*req
	for _, e := range events {
		id := e.Args.Data.RequestID
		if id == "" {
			continue
		}
		r := byID[id]
		if r == nil {
			r = &req{}
			byID[id] = r
			order = append(order, r)
		}
		switch e.Name {
		case "ResourceSendRequest":
			r.sent, r.Method, r.URL = e.Ts, e.Args.Data.Method, e.Args.Data.URL
		case "ResourceReceiveResponse":
			r.Status = e.Args.Data.StatusCode
		case "ResourceFinish":
			r.end = e.Ts
		}
	}
	var out []Request
	for _, r := range order {
		if r.sent > 0 && r.end >= r.sent && r.URL != "" {
			r.Duration = time.Duration((r.end - r.sent) * float64(time.Microsecond))
			out = append(out, r.Request)
		}
	}
	slices.SortStableFunc(out, func(a, b Request) int { return int(b.Duration - a.Duration) })
	return out[:min(len(out), maxRequests)]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Text is the summary as the agent reads it. A request's URL and method
// are the page's (a page puts what it likes in them: a typed value in a
// query), so each is marked as page text (package pagetext) for the
// masker; the rest is browsergate's own words.
func (s Summary) Text() string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	switch {
	case s.Loaded && s.LCP == 0 && s.FCP == 0:
		b.WriteString("LCP, FCP: none (the page painted nothing while traced; a tab in the background does not paint)")
	case s.Loaded:
		fmt.Fprintf(&b, "LCP %s, FCP %s", orNone(s.LCP, ms), orNone(s.FCP, ms))
	default:
		b.WriteString("LCP, FCP: not measured (no page load in the trace; reload: true traces one)")
	}
	fmt.Fprintf(&b, "\nCLS %.3f\nlong tasks %d, total blocking time %s\nmain thread:", s.CLS, s.LongTasks, ms(s.TBT))
	kinds := []string{"scripting", "rendering", "painting", "loading", "other"}
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s %s,", k, ms(s.Categories[k]))
	}
	out := strings.TrimSuffix(b.String(), ",")
	if len(s.Slowest) == 0 {
		return out + "\nslowest requests: none in the trace"
	}
	out += "\nslowest requests:"
	for _, r := range s.Slowest {
		status := "no response"
		if r.Status > 0 {
			status = fmt.Sprint(r.Status)
		}
		out += fmt.Sprintf("\n- %s %s %s %s", ms(r.Duration), pagetext.Value(r.Method), status, pagetext.Value(clipURL(r.URL)))
	}
	return out
}

func orNone(d time.Duration, f func(time.Duration) string) string {
	if d == 0 {
		return "none"
	}
	return f(d)
}

// clipURL bounds a URL in the summary.
func clipURL(u string) string {
	if len(u) <= 200 {
		return u
	}
	n := 200
	for n > 0 && !utf8.RuneStart(u[n]) {
		n--
	}
	return u[:n] + "…"
}
