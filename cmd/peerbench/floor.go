package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
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

// floorFlags are the floor's Chromium flags beyond every server's, so that
// it is the least this Chromium needs: no omnibox popups kept ready (as
// browsergate launches it), and other hosts than loopback failing at once
// (this machine has no internet; a page's requests to them would
// otherwise hold its load event for seconds).
var floorFlags = map[string]string{
	"disable-features":    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
	"host-resolver-rules": "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
}

// floorName is the floor's column in the table.
const floorName = "chromium-alone"

// floorTab is a Chromium with one tab, driven directly.
type floorTab struct {
	ctx    context.Context
	cancel func()
	dir    string
}

func startFloor() (*floorTab, error) {
	dir, err := os.MkdirTemp("", "peerbench-floor-")
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath("/usr/bin/chromium"), chromedp.UserDataDir(dir)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(strings.TrimPrefix(f, "--"), true))
	}
	for name, value := range floorFlags {
		opts = append(opts, chromedp.Flag(name, value))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
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
	return t, nil
}

func (t *floorTab) pid() int {
	if c := chromedp.FromContext(t.ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		return c.Browser.Process().Pid
	}
	return 0
}

func (t *floorTab) navigate(u string) error { return chromedp.Do(t.ctx, chromedp.Navigate(u)) }

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
	_, err := chromedp.Call(t.ctx, input.InsertText, input.InsertTextParams{Text: text})
	return err
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
	return err
}

// runFloor measures the floor on the scenario runSpeed measures the
// servers on.
func runFloor(runs int, site, docs string, pages []page) *speedResult {
	r := &speedResult{flows: map[string]stat{}, calls: map[string]int{}, docs: map[string]stat{}}
	var colds []time.Duration
	for range runs {
		t0 := time.Now()
		t, err := startFloor()
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

	t, err := startFloor()
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
