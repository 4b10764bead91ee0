package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// drag: an element dragged onto another with the mouse, as a user would;
// an HTML drag the page starts is carried by the browser's own drag
// events. The drop is judged like a click on the element dropped on, and
// a drop into a form as that form's submission (its drop handler may
// submit it).

// dragEnd is the ref or selector argument drag's from or to names.
func dragEnd(args map[string]any, key string) map[string]any {
	v, _ := args[key].(string)
	if toolclad.IsRef(v) {
		return map[string]any{"ref": v}
	}
	return map[string]any{"selector": v}
}

// observeDrop finds the element dragged and the one it is dropped on, and
// where a drop there leads: where a click on it leads, or, for an element
// in a form, that form's submission.
func (s *session) observeDrop(ctx context.Context, args map[string]any) *gate.Element {
	from, _, err := s.target(ctx, dragEnd(args, "from"))
	if err != nil {
		return &gate.Element{Named: true, Label: from.label, Err: err}
	}
	to, _, err := s.target(ctx, dragEnd(args, "to"))
	ef := &gate.Element{Named: true, Label: to.label, Err: err}
	if err != nil {
		return ef
	}
	ef.Label = from.label + " dropped on " + to.label
	if ef.DestErr = to.call(ctx, destinationJS, &ef.Dest, "click"); ef.DestErr != nil || ef.Dest.Submits {
		return ef
	}
	var form gate.Destination
	if ef.DestErr = to.call(ctx, destinationJS, &form, "submit"); ef.DestErr == nil && form.InForm {
		form.URLs = append(form.URLs, ef.Dest.URLs...)
		form.Embeds = form.Embeds || ef.Dest.Embeds
		ef.Dest = form
	}
	return ef
}

func actDrag(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	from, _, err := s.target(ctx, dragEnd(args, "from"))
	if err != nil {
		return output{}, err
	}
	to, _, err := s.target(ctx, dragEnd(args, "to"))
	if err != nil {
		return output{}, err
	}
	var want gate.Destination
	if f != nil && f.Element != nil {
		want = f.Element.Dest
	}
	html5, err := s.drag(ctx, from, to, want)
	if err != nil {
		return output{}, err
	}
	how := "with the mouse"
	if html5 {
		how = "with HTML drag and drop"
	}
	return output{Text: fmt.Sprintf("dragged %s onto %s %s", pagetext.Value(from.label), pagetext.Value(to.label), how)}, nil
}

// dragSteps is how many mouse moves carry the pointer from the element
// dragged to the one it is dropped on: a pointer-based sortable sees it
// move, and crosses its threshold, as with a hand's drag.
const dragSteps = 5

// drag presses the mouse on from, moves it to to and lets go there, each
// point checked by the browser's hit test first, the drop point as a
// click judged to lead to want. When the page starts an HTML drag, the
// browser hands it over (Input.setInterceptDrags) and the drop is the
// browser's own drag events over to, carrying the page's drag data. It
// reports whether the page started an HTML drag.
func (s *session) drag(ctx context.Context, from, to element, want gate.Destination) (bool, error) {
	fx, fy, err := s.centre(ctx, from, "dragged")
	if err != nil {
		return false, err
	}
	if err := s.hitCheck(ctx, from, fx, fy, map[string]any{"pointOnly": true}); err != nil {
		return false, err
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	intercepted := make(chan *input.DragData, 1)
	if err := chromedp.Listen(lctx, func(ev any) {
		if e, ok := ev.(*input.EventDragIntercepted); ok {
			select {
			case intercepted <- e.Data:
			default:
			}
		}
	}); err != nil {
		return false, fmt.Errorf("drag %s: %w", from.label, err)
	}
	if _, err := chromedp.Call(ctx, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: true}); err != nil {
		return false, fmt.Errorf("drag %s: the browser does not hand over HTML drags: %w", from.label, err)
	}
	defer func() {
		_, _ = chromedp.Call(context.WithoutCancel(ctx), input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: false})
	}()
	mouse := func(typ input.DispatchMouseEventType, x, y float64) error {
		p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}
		if typ == input.DispatchMouseEventTypeMouseReleased {
			p.Buttons = 0
		}
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, p); err != nil {
			return fmt.Errorf("drag %s: %w", from.label, err)
		}
		return nil
	}
	letGo := func(x, y float64) { _ = mouse(input.DispatchMouseEventTypeMouseReleased, x, y) }
	if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: fx, Y: fy}); err != nil {
		return false, fmt.Errorf("drag %s: %w", from.label, err)
	}
	if err := mouse(input.DispatchMouseEventTypeMousePressed, fx, fy); err != nil {
		return false, err
	}
	tx, ty, err := s.centre(ctx, to, "dropped on")
	if err != nil {
		letGo(0, 0)
		return false, err
	}
	for i := 1; i <= dragSteps; i++ {
		x, y := fx+(tx-fx)*float64(i)/dragSteps, fy+(ty-fy)*float64(i)/dragSteps
		if err := mouse(input.DispatchMouseEventTypeMouseMoved, x, y); err != nil {
			letGo(0, 0)
			return false, err
		}
	}
	judged := map[string]any{"urls": append([]string{want.URL}, want.URLs...), "submits": want.Submits}
	var data *input.DragData
	select {
	case data = <-intercepted:
	default:
	}
	if err := s.hitCheck(ctx, to, tx, ty, judged); err != nil {
		// Let go away from the element, so that nothing is dropped on
		// what the gate did not judge.
		if data != nil {
			_, _ = chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: input.DispatchDragEventTypeDragCancel, X: 0, Y: 0, Data: data})
		}
		letGo(0, 0)
		return false, err
	}
	if data != nil {
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: tx, Y: ty, Data: data}); err != nil {
				letGo(0, 0)
				return true, fmt.Errorf("drop on %s: %w", to.label, err)
			}
		}
	}
	return data != nil, mouse(input.DispatchMouseEventTypeMouseReleased, tx, ty)
}
