package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/gate"
)

// element is a page element the agent named by ref or CSS selector.
type element struct {
	object  runtime.RemoteObjectID
	backend cdp.BackendNodeID
	frame   cdp.FrameID // the embedded document it is in ("": the tab's own)
	label   string      // how the agent named it, for messages
	// An element in an out-of-process frame: exec is the frame's context
	// (nil: the tab's), hosts the iframe elements that lead to it from the
	// tab, outermost first.
	exec  context.Context
	oopif target.ID
	hosts []snapshot.FrameHost
}

// in is the context the element's process is driven over: the tab's (ctx)
// or its out-of-process frame's.
func (el element) in(ctx context.Context) context.Context {
	if el.exec != nil {
		return el.exec
	}
	return ctx
}

// target resolves the ref or selector argument of a call. With neither, it
// returns the zero element and false.
func (s *session) target(ctx context.Context, args map[string]any) (element, bool, error) {
	if ref, _ := args["ref"].(string); ref != "" {
		el, err := s.resolveRef(ctx, ref)
		return el, true, err
	}
	if sel, _ := args["selector"].(string); sel != "" {
		el, err := s.querySelector(ctx, sel)
		return el, true, err
	}
	return element{}, false, nil
}

func (s *session) resolveRef(ctx context.Context, ref string) (element, error) {
	rt, ok := s.tab.refs[ref]
	if !ok {
		// refsHint never says "take a snapshot" where snapshots hand out
		// no refs: that would send the agent round in a loop.
		return element{}, fmt.Errorf("%w %q: %s", ErrNoSuchRef, ref, s.refsHint())
	}
	if s.tab.refsNavs != s.tab.watch.navigationCount() {
		return element{}, fmt.Errorf("%w %q: it is from the document the tab showed before (the page moved since the snapshot): take a new snapshot", ErrNoSuchRef, ref)
	}
	el := element{backend: rt.Node, frame: rt.Frame, label: "ref " + ref, hosts: rt.Hosts}
	exec := ctx
	if rt.OOPIF != "" {
		fctx, _, err := s.inFrame(ctx, rt.OOPIF) // released with ctx
		if err != nil {
			return element{}, fmt.Errorf("%w %q: its frame is gone (%v): take a new snapshot", ErrNoSuchRef, ref, err)
		}
		exec, el.exec, el.oopif = fctx, fctx, rt.OOPIF
		if now := frameLoader(fctx); now == "" || now != rt.Loader {
			return element{}, errFrameMoved(ref)
		}
	}
	world, err := s.worldIn(exec, rt.OOPIF, rt.Frame)
	if err != nil {
		return element{}, fmt.Errorf("%w %q: its frame is gone (%v): take a new snapshot", ErrNoSuchRef, ref, err)
	}
	res, err := chromedp.Call(exec, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: rt.Node, ExecutionContextID: world, ObjectGroup: s.objectGroup(rt.OOPIF)})
	if err != nil || res.Object == nil {
		return element{}, fmt.Errorf("%w %q: the element is gone (the page changed): take a new snapshot", ErrNoSuchRef, ref)
	}
	if rt.OOPIF != "" && frameLoader(exec) != rt.Loader {
		// It loaded another document as the node was resolved: the node
		// id may be the new document's.
		return element{}, errFrameMoved(ref)
	}
	el.object = res.Object.ObjectID
	return el, nil
}

// refsHint is what an agent that gave a ref no snapshot handed out can do:
// take a snapshot, where the manifest's snapshots hand out refs; else
// name the element by a selector, where the call takes one.
func (s *session) refsHint() string {
	m := s.manifest
	if m.GivesRefs() {
		return "take a snapshot first and use a ref from the latest one"
	}
	why := "snapshot is not declared"
	if m.Offers("snapshot") {
		why = fmt.Sprintf("its snapshots are extract_mode = %q, which has none", m.Browser.ExtractMode)
	}
	hint := "no ref is known: this manifest hands out no refs (" + why + ")"
	if s.command != nil && s.command.Arg("selector") != nil {
		hint += "; name the element by a CSS selector instead (selector)"
	}
	return hint
}

// errFrameMoved refuses a ref into an out-of-process frame that has
// loaded another document since the snapshot.
func errFrameMoved(ref string) error {
	return fmt.Errorf("%w %q: its frame has loaded another document since the snapshot: take a new snapshot", ErrNoSuchRef, ref)
}

// worldIn is the isolated world of a document: of the tab's
// (oopif "") or of an out-of-process frame's process (exec), its top
// document or its same-process frame.
func (s *session) worldIn(exec context.Context, oopif target.ID, frame cdp.FrameID) (runtime.ExecutionContextID, error) {
	if oopif == "" {
		return s.worldOf(exec, frame)
	}
	if frame == "" {
		frame = cdp.FrameID(oopif) // its top document's frame has the target's id
	}
	res, err := chromedp.Call(exec, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: worldName})
	if err != nil {
		return 0, fmt.Errorf("create the gate's isolated world in the frame: %w", err)
	}
	return res.ExecutionContextID, nil
}

func (s *session) querySelector(ctx context.Context, sel string) (element, error) {
	lit, _ := json.Marshal(sel)
	obj, err := s.evalInWorld(ctx, "document.querySelector("+string(lit)+")")
	if err != nil {
		var ex *chromedp.ExceptionError
		if errors.As(err, &ex) {
			return element{}, fmt.Errorf("selector %q is not valid CSS", sel)
		}
		return element{}, fmt.Errorf("query selector %q: %w", sel, err)
	}
	if obj == nil || obj.ObjectID == "" {
		return element{}, fmt.Errorf("%w selector %q", ErrNoElement, sel)
	}
	desc, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID})
	if err != nil || desc.Node == nil {
		return element{}, fmt.Errorf("describe element %q: %v", sel, err)
	}
	return element{object: obj.ObjectID, backend: desc.Node.BackendNodeID, label: "selector " + string(lit)}, nil
}

// call runs a JavaScript function with the element as this and the given
// JSON-encodable arguments, and decodes its JSON result into out (when out
// is not nil).
func (el element) call(ctx context.Context, fn string, out any, args ...any) error {
	var cargs []*runtime.CallArgument
	for _, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: raw})
	}
	return el.callOn(ctx, fn, out, cargs...)
}

// callOn is call with the arguments as CDP gives them (an object by its
// id, say).
func (el element) callOn(ctx context.Context, fn string, out any, args ...*runtime.CallArgument) error {
	byValue, await := true, true
	params := runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            el.object,
		ReturnByValue:       &byValue,
		AwaitPromise:        &await,
		Arguments:           args,
	}
	res, err := chromedp.Call(el.in(ctx), runtime.CallFunctionOn, params)
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		msg := res.ExceptionDetails.Text
		if res.ExceptionDetails.Exception != nil && res.ExceptionDetails.Exception.Description != "" {
			msg = res.ExceptionDetails.Exception.Description
		}
		return fmt.Errorf("%s: %s", el.label, msg)
	}
	if out != nil && res.Result != nil && len(res.Result.Value) > 0 {
		return json.Unmarshal(res.Result.Value, out)
	}
	return nil
}

// click scrolls the element into view and clicks its centre with real
// mouse events, as a user would. Each event of the click can run the
// page's handlers, which may change the page: before the mouse moves, before
// the button goes down and before it comes up (which fires the click), the
// node the browser's hit test finds at that point must be the element or
// inside it, in the main document, and what a click there would do must be
// within what the gate judged (want). The page's own handlers of the
// release itself (mouseup, click) run after the last check: a form they
// submit is caught by the acting guard of the interceptor (guard_requests.go).
func (s *session) click(ctx context.Context, el element, want gate.Destination) error {
	return s.clickWith(ctx, el, want, mouseClick{})
}

// clickWith clicks as a mouse would: it moves to the element's centre,
// then presses and releases the button once per click in a row, holding
// the modifier keys; the browser's hit test must find the element there
// before each of those events.
func (s *session) clickWith(ctx context.Context, el element, want gate.Destination, c mouseClick) error {
	x, y, err := s.centre(ctx, el, "clicked")
	if err != nil {
		return err
	}
	judged := map[string]any{"urls": append([]string{want.URL}, want.URLs...), "submits": want.Submits}
	events := []input.DispatchMouseEventParams{{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y, Modifiers: c.modifiers}}
	for n := int64(1); n <= max(c.count, 1); n++ {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			events = append(events, input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: cmp.Or(c.button, input.MouseButtonLeft), ClickCount: n, Modifiers: c.modifiers})
		}
	}
	if c.opensTab() {
		// The browser would open the link or form such a click reaches in
		// a tab of its own making, which sends its first request before
		// the guard holds it: the opening is cancelled, in the isolated
		// world, for this click only (the gate refused the click where it
		// was judged to lead anywhere; this holds what the page changes
		// under it meanwhile).
		if err := el.call(ctx, noNewTabJS, nil, true); err != nil {
			return fmt.Errorf("click %s: the page's link opening cannot be held: %w", el.label, err)
		}
		defer func() { _ = el.call(context.WithoutCancel(ctx), noNewTabJS, nil, false) }()
	}
	for _, p := range events {
		if err := s.hitCheck(ctx, el, x, y, judged); err != nil {
			if p.Type == input.DispatchMouseEventTypeMouseReleased {
				// The button is down: move away without letting it go
				// over the element.
				_, _ = chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 0, Y: 0})
			}
			return err
		}
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, p); err != nil {
			return fmt.Errorf("click %s: %w", el.label, err)
		}
	}
	return nil
}

// noNewTabJS (on, in the isolated world of the element's document) holds
// or lets go what cancels what a click, an auxclick or a key would open
// through a link or a form: the default action of such an event on a link
// (an HTML or SVG a, an area) or a form's control (any button or input,
// whatever its type or form now: the page may change them while the event
// is dispatched), and any form's submission, which the page's own
// listeners cannot bring back. The listener is the one no_new_tab.js added
// as the document began, ahead of the page's, and one added now besides:
// a document that began without it (one that was there before the guard)
// or whose listeners document.open() erased has only that one. It
// also cancels the default of a middle button's mouseup, which on Linux
// pastes the desktop's primary selection into an editable element (what
// the user last selected anywhere, not the agent's to type).
const noNewTabJS = `function(on) {
  const w = this.ownerDocument.defaultView;
  const key = Symbol.for('browsergate.noNewTab');
  const types = ['click', 'auxclick', 'mouseup', 'submit'];
  if (w[key]) { for (const t of types) w.removeEventListener(t, w[key], true); delete w[key]; }
  if (!on) return;
  const HTML = 'http://www.w3.org/1999/xhtml', SVG = 'http://www.w3.org/2000/svg';
  const opens = n => n instanceof Element && (n.namespaceURI === SVG ? n.localName === 'a' :
    n.namespaceURI === HTML && ['a', 'area', 'button', 'input'].includes(n.localName));
  w[key] = e => {
    if (e.type === 'submit' || (e.type === 'mouseup' ? e.button === 1 : e.composedPath().some(opens)))
      e.preventDefault();
  };
  for (const t of types) w.addEventListener(t, w[key], true);
}`

// hover moves the mouse to the element's centre, once the browser's hit
// test finds the element there (no overlay takes the pointer). What the
// page's mouseover handlers do is held by the acting guard.
func (s *session) hover(ctx context.Context, el element) error {
	x, y, err := s.centre(ctx, el, "hovered")
	if err != nil {
		return err
	}
	if err := s.hitCheck(ctx, el, x, y, map[string]any{"pointOnly": true}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return fmt.Errorf("hover %s: %w", el.label, err)
	}
	return nil
}

// centre scrolls the element into view and returns its centre in the
// viewport; verb says what could not be done to an invisible element.
func (s *session) centre(ctx context.Context, el element, verb string) (x, y float64, err error) {
	ox, oy, err := s.frameOffset(ctx, el)
	if err != nil {
		return 0, 0, fmt.Errorf("%s cannot be %s: %w", el.label, verb, err)
	}
	_, _ = chromedp.Call(el.in(ctx), dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: el.object})
	q, err := chromedp.Call(el.in(ctx), dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: el.object})
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return 0, 0, fmt.Errorf("%s is not visible, so it cannot be %s", el.label, verb)
	}
	quad := q.Quads[0]
	for i := 0; i < 8; i += 2 {
		x += quad[i] / 4
		y += quad[i+1] / 4
	}
	// The pointer goes to a whole pixel of the element's document, the
	// one the hit check tests (nodeAt): a mouse event at a fraction of a
	// pixel finds what lies up to a pixel beyond the point the check
	// looked at, where a page could put a box of its own.
	vx, vy, err := s.viewportOffset(el.in(ctx))
	if err != nil {
		return 0, 0, fmt.Errorf("%s cannot be %s: %w", el.label, verb, err)
	}
	x, y = math.Floor(x+vx)-vx, math.Floor(y+vy)-vy
	if len(el.hosts) > 0 {
		// The browser sends the pointer to an out-of-process frame by
		// what the compositor last showed, not by the layout the hit
		// check reads: right after a scroll (and a frame that was off
		// screen renders nothing until it is on), it may still have the
		// old picture. A probe (a tall page, a click into the frame below
		// it, three or four browsergates at once) lost 2 of 1,320 such
		// clicks without this wait and 0 of 1,000 with it: too few to
		// prove, but what TestFrames once saw in CI. Two of the frame's
		// own animation frames mean it has been drawn where it is now.
		_ = el.call(ctx, framesShownJS, nil)
	}
	return x + ox, y + oy, nil
}

// framesShownJS resolves once the element's document has begun two
// animation frames since it was called, or after 250 ms if it renders none.
const framesShownJS = `function() {
  return new Promise(done => {
    const t = setTimeout(done, 250);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(); }));
  });
}`

// wholePixelSlack is how far from a whole pixel a point that centre put on
// one may be found again by nodeAt: the rounding of subtracting the
// frames' offsets and adding them back, far below the 1/64 pixel Blink
// lays out in.
const wholePixelSlack = 1.0 / 256

// viewportOffset is where the visual viewport of the document exec runs
// in (the tab's, or an out-of-process frame's) starts in that document,
// in CSS pixels: its scroll, and a pinch zoom's pan.
func (s *session) viewportOffset(exec context.Context) (x, y float64, err error) {
	m, err := chromedp.Call(exec, page.GetLayoutMetrics, struct{}{})
	if err != nil {
		return 0, 0, fmt.Errorf("the browser cannot say where the page's viewport is, so what is at the click point cannot be checked: %w", err)
	}
	if m.CSSVisualViewport == nil {
		return 0, 0, errors.New("the browser cannot say where the page's viewport is, so what is at the click point cannot be checked")
	}
	return m.CSSVisualViewport.PageX, m.CSSVisualViewport.PageY, nil
}

// frameOffset scrolls the iframe elements that lead to an element in an
// out-of-process frame into view, outermost first, and returns where the
// frame's viewport starts in the tab's: the sum of their content boxes'
// corners (each in its own process's coordinates). 0, 0 for an element of
// the tab's process.
func (s *session) frameOffset(ctx context.Context, el element) (x, y float64, err error) {
	for _, h := range el.hosts {
		if h.Nested {
			return 0, 0, errNestedFrame
		}
		hctx := ctx
		if h.OOPIF != "" {
			c, cancel, err := s.inFrame(ctx, h.OOPIF)
			if err != nil {
				return 0, 0, err
			}
			defer cancel()
			hctx = c
		}
		_, _ = chromedp.Call(hctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: h.Node})
		bx, by, err := s.frameBox(ctx, hctx, h)
		if err != nil {
			return 0, 0, err
		}
		x, y = x+bx, y+by
	}
	return x, y, nil
}

// frameBox is the corner of the content box of an iframe element that
// leads to an out-of-process frame, in its process's coordinates. It is
// refused unless the box is the iframe's own size, upright: a transform
// or a zoom on the iframe or around it maps the pointer's point into the
// frame in a way the gate does not follow, so the element the pointer
// reached would not be the one the gate checked.
func (s *session) frameBox(ctx, hctx context.Context, h snapshot.FrameHost) (x, y float64, err error) {
	box, err := chromedp.Call(hctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: h.Node})
	if err != nil || box.Model == nil || len(box.Model.Content) < 8 {
		return 0, 0, fmt.Errorf("the frame it is in is not visible (%v)", err)
	}
	q := box.Model.Content
	world, err := s.worldIn(hctx, h.OOPIF, "")
	if err != nil {
		return 0, 0, err
	}
	host, err := chromedp.Call(hctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: h.Node, ExecutionContextID: world, ObjectGroup: s.objectGroup(h.OOPIF)})
	if err != nil || host.Object == nil {
		return 0, 0, fmt.Errorf("the frame the element is in is gone: %v", err)
	}
	var size [2]float64 // the content box as laid out, before any transform
	hel := element{object: host.Object.ObjectID, exec: hctx, label: "the frame"}
	if err := hel.call(ctx, frameSizeJS, &size); err != nil {
		return 0, 0, err
	}
	near := func(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }
	upright := near(q[1], q[3], 0.5) && near(q[2], q[4], 0.5) && near(q[5], q[7], 0.5) && near(q[6], q[0], 0.5)
	if !upright || !near(q[2]-q[0], size[0], 1.5) || !near(q[5]-q[3], size[1], 1.5) {
		return 0, 0, errors.New("the frame the element is in is transformed or zoomed (its box on the page is not its own size, upright), so where the pointer lands in it cannot be told: use a command that needs no pointer, or a page that shows the frame as it is")
	}
	return q[0], q[1], nil
}

// errNestedFrame refuses a pointer command into an out-of-process frame
// whose iframe element is inside a frame of its own process.
var errNestedFrame = errors.New("the frame the element is in is inside another frame of its page, where the pointer's point cannot be checked: use a command that needs no pointer")

// frameOnTopJS says whether the iframe element (this) is what its
// document shows at (x, y): "" if so, "covered" if another element is on
// top there, "nested" if its document is not its process's top one (the
// tab's top document when tabTop, else an out-of-process frame's root,
// whose parent is not reachable from it; frameElement is null there, but
// also in a frame of another origin inside that process:
// snapshot.FrameHost.Nested says that one).
const frameOnTopJS = `function(x, y, tabTop) {
  const w = this.ownerDocument.defaultView;
  if (tabTop ? w.parent !== w : w.frameElement !== null) return 'nested';
  return this.ownerDocument.elementFromPoint(x, y) === this ? '' : 'covered';
}`

// frameSizeJS is an iframe element's (this) content box as laid out:
// width and height, before transforms.
const frameSizeJS = `function() {
  const cs = getComputedStyle(this), px = v => parseFloat(v) || 0;
  return [this.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight), this.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom)];
}`

// hitCheck: the node the browser's hit test finds at (x, y) must be the
// element or inside it, and (unless judged says pointOnly) what a click
// there would do must be within judged.
func (s *session) hitCheck(ctx context.Context, el element, x, y float64, judged map[string]any) error {
	hit, err := s.nodeAt(ctx, x, y, el)
	if err != nil {
		return fmt.Errorf("%s: %v", el.label, err)
	}
	raw, err := json.Marshal(judged)
	if err != nil {
		return err
	}
	var why string
	if err := el.callOn(ctx, clickCheckJS, &why, &runtime.CallArgument{ObjectID: hit.object}, &runtime.CallArgument{Value: raw}); err != nil {
		return err
	}
	switch why {
	case "":
		return nil
	case "covered":
		return fmt.Errorf("%s is covered by another element at its centre, so the pointer would reach that element instead", el.label)
	}
	return fmt.Errorf("%s: %s", el.label, why)
}

// nodeAt is the node the browser's hit test finds at (x, y) in the tab,
// resolved in the isolated world of el's document: a point in
// another document (an iframe the element is not in) cannot be resolved
// there, and is refused. For an element in an out-of-process frame, the
// point must be on each iframe element that leads to it, and the node is
// the frame's hit at the point in its own coordinates.
func (s *session) nodeAt(ctx context.Context, x, y float64, el element) (element, error) {
	for _, h := range el.hosts {
		hctx := ctx
		if h.OOPIF != "" {
			c, cancel, err := s.inFrame(ctx, h.OOPIF)
			if err != nil {
				return element{}, err
			}
			defer cancel()
			hctx = c
		}
		// The browser's hit test does not answer for a point in another
		// process's frame: the host's document says what is on top there.
		// That document must be its process's top one, whose viewport the
		// point is in (an iframe inside a same-process frame is refused:
		// as the snapshot found it, and as the document says now).
		if h.Nested {
			return element{}, errNestedFrame
		}
		world, err := s.worldIn(hctx, h.OOPIF, "")
		if err != nil {
			return element{}, err
		}
		host, err := chromedp.Call(hctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: h.Node, ExecutionContextID: world, ObjectGroup: s.objectGroup(h.OOPIF)})
		if err != nil || host.Object == nil {
			return element{}, fmt.Errorf("the frame the element is in is gone: %v", err)
		}
		var why string
		hel := element{object: host.Object.ObjectID, exec: hctx, label: "the frame"}
		if err := hel.call(ctx, frameOnTopJS, &why, x, y, h.OOPIF == ""); err != nil {
			return element{}, err
		}
		switch why {
		case "nested":
			return element{}, errNestedFrame
		case "covered":
			return element{}, errors.New("the click point is not on the frame the element is in: another element covers it")
		}
		bx, by, err := s.frameBox(ctx, hctx, h)
		if err != nil {
			return element{}, err
		}
		x, y = x-bx, y-by
	}
	exec := el.in(ctx)
	// The point is in the (visual) viewport's coordinates, where the mouse
	// goes; DOM.getNodeForLocation takes it in the document's (Chromium
	// maps it with DocumentToFrame), so the viewport's offset in the
	// document is added: else on a scrolled (or pinch-zoomed) page the hit
	// test looks where the point would be were the page at its top. centre
	// chose the point so that it falls on a whole pixel of the document;
	// if it no longer does, the viewport moved by a fraction of a pixel
	// since, and the check would test another point than the pointer's.
	vx, vy, err := s.viewportOffset(exec)
	if err != nil {
		return element{}, err
	}
	px, py := x+vx, y+vy
	rx, ry := math.Round(px), math.Round(py)
	if math.Abs(px-rx) > wholePixelSlack || math.Abs(py-ry) > wholePixelSlack {
		return element{}, errors.New("the page moved under the pointer by a fraction of a pixel while the click point was checked")
	}
	res, err := chromedp.Call(exec, dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(rx), Y: int64(ry)})
	if err != nil {
		return element{}, fmt.Errorf("the browser cannot say what is at the click point: %v", err)
	}
	want := el.frame
	switch {
	case want != "":
	case el.oopif != "":
		want = cdp.FrameID(el.oopif)
	default:
		want = cdp.FrameID(s.tab.targetID())
	}
	if res.FrameID != "" && res.FrameID != want {
		return element{}, errors.New("the click point is inside another document (an embedded frame) than the element's")
	}
	hit := el
	hit.label = "the element at the click point"
	if res.BackendNodeID != 0 && res.BackendNodeID == el.backend {
		// The hit is the element itself (a node's backend id is its own
		// for its life), already resolved in the isolated world.
		return hit, nil
	}
	world, err := s.worldIn(exec, el.oopif, el.frame)
	if err != nil {
		return element{}, err
	}
	obj, err := chromedp.Call(exec, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: res.BackendNodeID, ExecutionContextID: world, ObjectGroup: s.objectGroup(el.oopif)})
	if err != nil || obj.Object == nil {
		return element{}, fmt.Errorf("the node at the click point cannot be read: %v", err)
	}
	hit.object, hit.backend = obj.Object.ObjectID, res.BackendNodeID
	return hit, nil
}

// focused is the page's focused element (the body when none is).
func (s *session) focused(ctx context.Context) (element, error) {
	obj, err := s.evalInWorld(ctx, "document.activeElement || document.body")
	if err != nil {
		return element{}, err
	}
	if obj == nil || obj.ObjectID == "" {
		return element{}, fmt.Errorf("%w: no focused element", ErrNoElement)
	}
	return element{object: obj.ObjectID, label: "the focused element"}, nil
}

// observeField finds the element type_text types into (named, or the
// focused one) and what kind of field it is.
func (s *session) observeField(ctx context.Context, args map[string]any) *gate.Element {
	el, named, err := s.target(ctx, args)
	if err != nil {
		return &gate.Element{Named: named, Err: err}
	}
	if !named {
		if el, err = s.focused(ctx); err != nil {
			return &gate.Element{Label: "the focused element", FieldErr: err}
		}
	}
	ef := &gate.Element{Named: named, Label: el.label}
	ef.FieldErr = el.call(ctx, fieldJS, &ef.Field)
	return ef
}
