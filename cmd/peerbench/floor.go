package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The floor: the same scenario done by Chromium alone, driven over the
// DevTools protocol by chromedp in this process, with no MCP server, no
// gate and no evidence, and nothing waited for but the load event of a
// navigate. Each step is the least any server needs:
//
//   - cold start: launch Chromium (the same binary and flags, a fresh
//     profile), open a tab, navigate;
//   - a snapshot: one Accessibility.getFullAXTree (the tree the peers'
//     and browsergate's snapshots are built from), a line per node;
//   - fill: focus the field, insert the text; click: the mouse pressed
//     and released at the element's centre; choose an option: set the
//     select's value and dispatch change;
//   - the flows are speed.go's, run through this agent.
//
// It is not a server an agent could use (no refs, no waits, no safety);
// it shows how close a goal can come on this machine: a ratio to the
// better peer that the floor itself does not reach cannot be reached by
// any server built on Chromium's accessibility tree.
//
// The second floor (floorWaitsName) is the same Chromium with
// browsergate's waits after each action and nothing else of browsergate
// (settle): what a server that waits as browsergate does, so that its
// reply says what the action did, needs at the least.

// floorFlags are the floor's Chromium flags beyond every server's, so that
// it is the least this Chromium needs: no omnibox popups kept ready (as
// browsergate launches it), and other hosts than loopback failing at once
// (this machine has no internet; a page's requests to them would
// otherwise hold its load event for seconds).
var floorFlags = map[string]string{
	"disable-features":    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
	"host-resolver-rules": "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
}

// floorName and floorWaitsName are the floors' columns in the table.
const (
	floorName      = "chromium-alone"
	floorWaitsName = "chromium-alone+waits"
)

var floors = []string{floorName, floorWaitsName}

// floorTab is a Chromium with one tab, driven directly.
type floorTab struct {
	ctx    context.Context
	cancel func()
	dir    string
	// watch is nil for the floor without waits.
	watch *floorWatch
}

func startFloor(waits bool) (*floorTab, error) {
	dir, err := os.MkdirTemp("", "peerbench-floor-")
	if err != nil {
		return nil, err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), floorAllocator(dir)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t := &floorTab{ctx: ctx, dir: dir, cancel: func() {
		cancelTab()
		cancelAlloc()
		os.RemoveAll(dir)
	}}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil { // starts the browser
		t.cancel()
		return nil, fmt.Errorf("start Chromium: %w", err)
	}
	if waits {
		t.watch = &floorWatch{inflight: map[network.RequestID]bool{}, frame: cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID), last: time.Now()}
		// Each document's mutations are watched from the end of its
		// parsing, as browsergate watches them (in the page's world here:
		// the floor has no gate to keep the page from).
		if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: domWatchJS}); err != nil {
			t.cancel()
			return nil, fmt.Errorf("watch the DOM's changes: %w", err)
		}
		if err := chromedp.Listen(ctx, t.watch.listen); err != nil {
			t.cancel()
			return nil, fmt.Errorf("listen to the tab: %w", err)
		}
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			t.cancel()
			return nil, fmt.Errorf("enable the network domain: %w", err)
		}
	}
	return t, nil
}

// floorAllocator is how the floors launch Chromium: the binary and flags
// of every server's, the floor's own, and the profile in dir.
func floorAllocator(dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath("/usr/bin/chromium"), chromedp.UserDataDir(dir)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(strings.TrimPrefix(f, "--"), true))
	}
	for name, value := range floorFlags {
		opts = append(opts, chromedp.Flag(name, value))
	}
	return opts
}

// browsergate's quiet windows (executor/commands.go's settle and watch.go's
// afterLoadWindow), which settle waits out.
const (
	navigateWindow  = 0
	typeWindow      = 20 * time.Millisecond
	clickWindow     = 50 * time.Millisecond
	afterLoadWindow = 20 * time.Millisecond
)

// browsergate's own quiet-DOM wait, executor/js/dom_quiet.js and
// dom_watch.js with dom_changes.js in them, read from the repository by
// runSpeed (readDOMScripts): dom_watch.js starts the watch of each
// document's mutations once it is parsed, and dom_quiet.js is a function of
// its cap that resolves once the document has seen no mutation for 20 ms,
// counted from the last.
var domQuietJS, domWatchJS string

// domQuietCap is the executor's cap on the quiet-DOM wait (dom_quiet.go),
// counted from the action's end or the new document's load.
const domQuietCap = 500 * time.Millisecond

// readDOMScripts reads the quiet-DOM wait's scripts from the repository
// at repo, and puts dom_changes.js in place of DOM_CHANGES as the executor
// does (executor/js.go).
func readDOMScripts(repo string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(repo, "executor/js", name))
		return string(b), err
	}
	changes, err := read("dom_changes.js")
	if err != nil {
		return err
	}
	with := func(name string) (string, error) {
		src, err := read(name)
		return strings.ReplaceAll(src, "DOM_CHANGES", "("+strings.TrimSpace(changes)+")"), err
	}
	if domQuietJS, err = with("dom_quiet.js"); err != nil {
		return err
	}
	domWatchJS, err = with("dom_watch.js")
	return err
}

// floorWatch follows the tab's requests, loads and navigations.
type floorWatch struct {
	mu       sync.Mutex
	frame    cdp.FrameID // the main frame
	inflight map[network.RequestID]bool
	loading  bool
	navs     int
	last     time.Time // the last event
}

func (w *floorWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.FrameID == w.frame {
			w.inflight[e.RequestID] = true
		}
	case *network.EventLoadingFinished:
		delete(w.inflight, e.RequestID)
	case *network.EventLoadingFailed:
		delete(w.inflight, e.RequestID)
	case *cdppage.EventFrameStartedLoading:
		if e.FrameID == w.frame {
			w.loading = true
		}
	case *cdppage.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			w.navs++
			w.loading = true
			clear(w.inflight)
		}
	case *cdppage.EventLoadEventFired:
		w.loading = false
	default:
		return
	}
	w.last = time.Now()
}

// state is whether the tab is quiet for window since start (no request
// in flight, not loading, no event), whether it is loading, and how many
// navigations it has made.
func (w *floorWatch) state(window time.Duration, start time.Time) (quiet, loading bool, navs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	last := w.last
	if start.After(last) {
		last = start
	}
	return !w.loading && len(w.inflight) == 0 && time.Since(last) >= window, w.loading, w.navs
}

// settle waits as browsergate waits after an action: no request, load or
// navigation for window after the action (once a navigation the action
// started has loaded: afterLoadWindow), and then the document the tab is
// on without DOM mutations for 20 ms, counted from its last mutation (its
// cap from the action's end or the new document's load). Nothing else of
// browsergate runs.
func (t *floorTab) settle(window time.Duration) {
	if t.watch == nil {
		return
	}
	start := time.Now()
	_, _, navs := t.watch.state(0, start)
	domFrom, newDoc := start, false
	for time.Since(start) < 5*time.Second {
		win := window
		if _, loading, n := t.watch.state(0, start); n != navs && !loading {
			win = min(window, afterLoadWindow)
			if !newDoc {
				newDoc, domFrom = true, time.Now()
			}
		}
		if quiet, _, _ := t.watch.state(win, start); quiet {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	cap := max(domQuietCap-time.Since(domFrom), 0)
	ctx, cancel := context.WithTimeout(t.ctx, cap+500*time.Millisecond)
	defer cancel()
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf("(%s)(%d)", domQuietJS, cap.Milliseconds()), chromedp.EvalAwaitPromise))
}

func (t *floorTab) navigate(u string) error {
	if err := chromedp.Do(t.ctx, chromedp.Navigate(u)); err != nil {
		return err
	}
	t.settle(navigateWindow)
	return nil
}

func (t *floorTab) pid() int {
	if c := chromedp.FromContext(t.ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		return c.Browser.Process().Pid
	}
	return 0
}

// snapshot reads the accessibility tree once, as lines of role, name and
// DOM node: button "Sign in" #12.
func (t *floorTab) snapshot() (string, error) {
	res, err := chromedp.Call(t.ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, n := range res.Nodes {
		if !n.Ignored {
			fmt.Fprintf(&b, "%s %q #%d\n", axText(n.Role), axText(n.Name), n.BackendDOMNodeID)
		}
	}
	return b.String(), nil
}

func axText(v *accessibility.Value) string {
	var s string
	if v != nil && json.Unmarshal(v.Value, &s) == nil {
		return s
	}
	return ""
}

func (t *floorTab) ref(snap, role, name string) string {
	return find(snap, `(?m)^`+regexp.QuoteMeta(role)+` `+regexp.QuoteMeta(strconv.Quote(name))+` #(\d+)$`)
}

// node is the DOM node a ref names.
func node(ref string) cdp.BackendNodeID {
	n, _ := strconv.ParseInt(ref, 10, 64)
	return cdp.BackendNodeID(n)
}

func (t *floorTab) fill(ref, text string) error {
	if _, err := chromedp.Call(t.ctx, dom.Focus, dom.FocusParams{BackendNodeID: node(ref)}); err != nil {
		return err
	}
	if _, err := chromedp.Call(t.ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		return err
	}
	t.settle(typeWindow)
	return nil
}

func (t *floorTab) click(ref string) error {
	q, err := chromedp.Call(t.ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node(ref)})
	if err != nil {
		return err
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return fmt.Errorf("node %s has no box", ref)
	}
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x, y = x+q.Quads[0][i]/4, y+q.Quads[0][i+1]/4
	}
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := chromedp.Call(t.ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1}); err != nil {
			return err
		}
	}
	t.settle(clickWindow)
	return nil
}

func (t *floorTab) choose(ref, value, _ string) error {
	obj, err := chromedp.Call(t.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: node(ref)})
	if err != nil {
		return err
	}
	arg, _ := json.Marshal(value)
	_, err = chromedp.Call(t.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function(v) { this.value = v; this.dispatchEvent(new Event("change", {bubbles: true})); }`,
		ObjectID:            obj.Object.ObjectID,
		Arguments:           []*runtime.CallArgument{{Value: arg}},
	})
	if err != nil {
		return err
	}
	t.settle(clickWindow)
	return nil
}

// runFloor measures the floor on the scenario runSpeed measures the
// servers on.
func runFloor(runs int, site, docs string, pages []page, waits bool) *speedResult {
	r := &speedResult{flows: map[string]stat{}, calls: map[string]int{}, docs: map[string]stat{}}
	var colds []time.Duration
	for range runs {
		t0 := time.Now()
		t, err := startFloor(waits)
		if err == nil {
			err = t.navigate(site + "/start")
		}
		if err != nil {
			r.errs = append(r.errs, "cold start: "+err.Error())
			if t != nil {
				t.cancel()
			}
			break
		}
		colds = append(colds, time.Since(t0))
		t.cancel()
	}
	r.cold = stats(colds)

	t, err := startFloor(waits)
	if err != nil {
		r.errs = append(r.errs, "start: "+err.Error())
		return r
	}
	defer t.cancel()
	stop := make(chan struct{})
	peak := peakPSS(t.pid(), stop)
	for _, f := range flows {
		r.flows[f.name] = r.timed(f.name, runs, func() error {
			calls, err := f.run(t, site)
			r.calls[f.name] = calls
			return err
		})
	}
	for _, p := range pages {
		r.docs[p.name] = r.timed(p.name, runs, func() error {
			err := t.navigate(docs + "/" + p.name)
			if err == nil {
				_, err = t.snapshot()
			}
			return err
		})
	}
	close(stop)
	r.peak = <-peak
	return r
}
