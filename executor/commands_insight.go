package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/a11y"
	"github.com/browsergate/browsergate/executor/perf"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// actAccessibilityAudit audits the page with axe-core (package a11y), run
// in the gate's isolated world (world.go): the page's scripts can neither
// replace axe nor the built-ins it calls. axe is put in a world once, on
// the first audit of its document.
func actAccessibilityAudit(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	var raw string
	var refs []string
	err := s.inWorld(ctx, func(id runtime.ExecutionContextID) error {
		var err error
		raw, err = runAxe(ctx, id)
		if err == nil {
			refs = s.auditRefs(ctx, id)
		}
		return err
	})
	if err != nil {
		return output{}, fmt.Errorf("accessibility audit: %w", err)
	}
	r, err := a11y.Parse(raw)
	if err != nil {
		return output{}, err
	}
	r.Refs = refs
	s.auditFrames(ctx, r)
	return output{Text: r.Text()}, nil
}

// maxAuditFrames bounds the frames an audit reaches besides the page.
const maxAuditFrames = 20

// auditFrames adds to r the audit of each frame of the tab, up to
// maxAuditFrames, each in a world of its own made in the frame (axe is
// put there afresh): the frames of the tab's own process from its frame
// tree, and each frame of another site's process over its own target,
// with that one's frames. A frame whose document is outside the scope, or
// on a site a secret was typed on, is not audited, nor one that went away
// meanwhile; each is counted.
func (s *session) auditFrames(ctx context.Context, r *a11y.Result) {
	type host struct {
		exec context.Context
		id   target.ID // the frame target's ("": the tab)
	}
	hosts, done := []host{{exec: ctx}}, map[target.ID]bool{s.tab.targetID(): true}
	all, err := chromedp.Targets(ctx)
	if err != nil {
		r.SkipFrame("the browser's frames could not be listed")
	}
	for len(hosts) > 0 {
		h := hosts[0]
		hosts = hosts[1:]
		tree, err := chromedp.Call(h.exec, page.GetFrameTree, cdp.Empty{})
		if err != nil || tree.FrameTree == nil {
			r.SkipFrame("a frame went away")
			continue
		}
		walk := tree.FrameTree.ChildFrames
		if h.id != "" {
			walk = []*page.FrameTree{tree.FrameTree} // its own document too
		}
		for len(walk) > 0 {
			ft := walk[0]
			walk = append(walk[1:], ft.ChildFrames...)
			if ft.Frame == nil {
				continue
			}
			if len(r.Frames)+r.Skipped >= maxAuditFrames {
				r.SkipFrame(fmt.Sprintf("at most %d frames are audited", maxAuditFrames))
				continue
			}
			url := ft.Frame.URL + ft.Frame.URLFragment
			if url != "about:blank" && url != "about:srcdoc" && !s.check(url).Allowed {
				r.SkipFrame("a frame's document is outside the scope")
				continue
			}
			if len(s.typedOn(url)) > 0 {
				// What axe quotes of it (selectors) is masked for the
				// page's site, not for the frame's.
				r.SkipFrame("a secret was typed on a frame's site")
				continue
			}
			fr, err := s.auditFrame(h.exec, ft.Frame.ID)
			if err != nil {
				r.SkipFrame("a frame went away")
				continue
			}
			r.AddFrame(url, fr)
		}
		// The frames of other sites' processes whose parent is this host.
		parent := h.id
		if parent == "" {
			parent = s.tab.targetID()
		}
		for _, t := range all {
			if t.Type != "iframe" || t.ParentID != parent || done[t.TargetID] {
				continue
			}
			done[t.TargetID] = true
			fctx, _, err := s.inFrame(ctx, t.TargetID) // released with ctx
			if err != nil {
				r.SkipFrame("a frame went away")
				continue
			}
			hosts = append(hosts, host{exec: fctx, id: t.TargetID})
		}
	}
}

// auditFrame audits the document of frame in exec with axe, in a world
// made in that frame.
func (s *session) auditFrame(exec context.Context, frame cdp.FrameID) (*a11y.Result, error) {
	id, err := s.worldOf(exec, frame)
	if err != nil {
		return nil, err
	}
	raw, err := runAxe(exec, id)
	if err != nil {
		return nil, err
	}
	return a11y.Parse(raw)
}

// runAxe runs the audit (a11y.Run) in the world id of exec's document,
// putting axe there first unless it already is.
func runAxe(exec context.Context, id runtime.ExecutionContextID) (string, error) {
	inWorld := func(p *runtime.EvaluateParams) { p.ContextID = id }
	loaded, err := chromedp.Run(exec, chromedp.Evaluate[bool](a11y.Loaded, inWorld))
	if err != nil {
		return "", err
	}
	if !loaded {
		if _, err := chromedp.Run(exec, chromedp.Evaluate[json.RawMessage](a11y.Source+"\n;true", inWorld)); err != nil {
			return "", fmt.Errorf("load axe-core: %w", err)
		}
	}
	return chromedp.Run(exec, chromedp.Evaluate[string](a11y.Run, inWorld, chromedp.EvalAwaitPromise))
}

// maxAuditRefs bounds the elements of an audit whose refs are looked up
// (one DOM.describeNode each).
const maxAuditRefs = 100

// auditRefs gives the refs the latest snapshot of the document handed out
// for the elements the audit names (a11y.Elements), in order: "" for one
// it has none for, and none at all when the snapshot is of another
// document, or the lookup fails (the selectors still name them).
func (s *session) auditRefs(ctx context.Context, world runtime.ExecutionContextID) []string {
	if len(s.tab.refs) == 0 || s.tab.refsNavs != s.tab.watch.navigationCount() {
		return nil
	}
	byNode := map[cdp.BackendNodeID]string{}
	for ref, rt := range s.tab.refs {
		if rt.OOPIF == "" {
			byNode[rt.Node] = ref
		}
	}
	arr, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject](a11y.Elements, func(p *runtime.EvaluateParams) {
		p.ContextID, p.ObjectGroup = world, s.objectGroup("")
	}))
	if err != nil || arr == nil || arr.ObjectID == "" {
		return nil
	}
	own := true
	props, err := chromedp.Call(ctx, runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: arr.ObjectID, OwnProperties: &own})
	if err != nil {
		return nil
	}
	var refs []string
	for _, p := range props.Result {
		i, err := strconv.Atoi(p.Name)
		if err != nil || i >= maxAuditRefs {
			continue
		}
		for len(refs) <= i {
			refs = append(refs, "")
		}
		if p.Value == nil || p.Value.ObjectID == "" {
			continue
		}
		if d, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: p.Value.ObjectID}); err == nil && d.Node != nil {
			refs[i] = byNode[d.Node.BackendNodeID]
		}
	}
	return refs
}

// performance_trace's bounds: how long it traces (duration_ms) and how
// long the browser has to hand the trace over once it is ended (what it
// keeps: traceMaxBytes, tracesink.go).
const (
	traceDefault = 3 * time.Second
	traceEndWait = 15 * time.Second
)

// traceCategories are the trace categories DevTools' performance panel
// records, without JavaScript sampling and screenshots.
var traceCategories = []string{"-*", "devtools.timeline", "disabled-by-default-devtools.timeline",
	"disabled-by-default-devtools.timeline.frame", "toplevel", "blink.user_timing", "loading", "latencyInfo",
	"v8.execute", "disabled-by-default-v8.compile", "__metadata"}

// actPerformanceTrace records a trace of the tab (the Tracing domain) for
// duration_ms, across a reload of the page when reload is true (judged as
// reload is: specOf), and replies with its summary, read in Go (package
// perf) from the events of the tab's own frames; those events are kept
// with the record as a trace blob (evidence revision 17).
func actPerformanceTrace(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	d := traceDefault
	if v, ok := args["duration_ms"].(int64); ok {
		d = time.Duration(v) * time.Millisecond
	}
	reload, _ := args["reload"].(bool)
	w, tabCtx := s.tab.watch, s.tab.ctx
	main := string(s.tab.targetID())
	sink := &traceSink{done: make(chan struct{})}
	if !w.trace.CompareAndSwap(nil, sink) {
		return output{}, fmt.Errorf("performance trace: a trace of this tab is being recorded")
	}
	defer w.trace.CompareAndSwap(sink, nil)
	_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{RecordMode: tracing.TraceConfigRecordModeRecordUntilFull, IncludedCategories: traceCategories}})
	if err != nil {
		return output{}, fmt.Errorf("performance trace: start the browser's trace (one browser runs one trace at a time): %w", err)
	}
	began := time.Now()
	var reloadErr error
	if reload {
		reloadErr = reloadFresh(ctx)
	}
	select {
	case <-time.After(time.Until(began.Add(d))):
	case <-ctx.Done():
	}
	// The trace is ended on the tab's own context, bounded: the browser
	// must never be left tracing because the call's time ran out.
	ectx, cancel := context.WithTimeout(tabCtx, traceEndWait)
	defer cancel()
	if _, err := chromedp.Call(ectx, tracing.End, cdp.Empty{}); err != nil {
		return output{}, fmt.Errorf("performance trace: end the trace: %w", err)
	}
	select {
	case <-sink.done:
	case <-ectx.Done():
		return output{}, fmt.Errorf("performance trace: the browser did not hand the trace over within %s", traceEndWait)
	}
	took := time.Since(began)
	if reloadErr != nil {
		return output{}, fmt.Errorf("performance trace: reload: %w", reloadErr)
	}
	sink.mu.Lock()
	raw, dropped := sink.events, sink.dropped
	sink.mu.Unlock()
	tr, err := perf.Filter(raw, main)
	if err != nil {
		return output{}, fmt.Errorf("performance trace: %w", err)
	}
	head := fmt.Sprintf("performance trace of %s over %d ms%s: %d of the browser's %d events are the tab's",
		pagetext.Value(inert(f.State.URL)), took.Milliseconds(), map[bool]string{true: ", across a reload"}[reload], tr.Events(), len(raw))
	if tr.Shared {
		head += " (its renderer process runs another tab too: of the events that name no frame, only its workers' are kept)"
	}
	if dropped > 0 {
		head += fmt.Sprintf(" (%d more not kept: the trace's bound is %d MiB)", dropped, traceMaxBytes>>20)
	}
	return output{Text: head + "\n" + tr.Analyze(main).Text(),
		Recording: []evidence.RecordingRef{{Kind: evidence.RecordingTrace, Data: tr.JSON()}}}, nil
}
