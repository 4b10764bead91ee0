package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// element is a page element the agent named by ref or CSS selector.
type element struct {
	object  runtime.RemoteObjectID
	backend cdp.BackendNodeID
	label   string // how the agent named it, for messages
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
	id, ok := s.refs[ref]
	if !ok {
		return element{}, fmt.Errorf("%w %q: take a snapshot first and use a ref from the latest one", ErrNoSuchRef, ref)
	}
	world, err := s.world(ctx)
	if err != nil {
		return element{}, err
	}
	res, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: world})
	if err != nil || res.Object == nil {
		return element{}, fmt.Errorf("%w %q: the element is gone (the page changed): take a new snapshot", ErrNoSuchRef, ref)
	}
	return element{object: res.Object.ObjectID, backend: id, label: "ref " + ref}, nil
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
	byValue, await := true, true
	params := runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            el.object,
		ReturnByValue:       &byValue,
		AwaitPromise:        &await,
	}
	for _, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return err
		}
		params.Arguments = append(params.Arguments, &runtime.CallArgument{Value: raw})
	}
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, params)
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
// mouse events, as a user would.
func (el element) click(ctx context.Context) error {
	_, _ = chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: el.object})
	q, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: el.object})
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return fmt.Errorf("%s is not visible, so it cannot be clicked", el.label)
	}
	quad := q.Quads[0]
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += quad[i] / 4
		y += quad[i+1] / 4
	}
	var onTop bool
	if err := el.call(ctx, hitTestJS, &onTop, x, y); err != nil {
		return err
	}
	if !onTop {
		return fmt.Errorf("%s is covered by another element at its centre, so a click would hit that element instead", el.label)
	}
	return chromedp.Do(ctx, chromedp.MouseClickXY(x, y))
}

// destinationJS reports where acting on the element would send the tab,
// reading the DOM through the built-in prototypes so that a form field
// named "action" or "type" cannot shadow what it reads. With mode "click"
// it is the enclosing link's href, or, when the element is (inside) a
// submit button, the action its form would post to; with mode "submit" it
// is the action of the element's form. Empty url: the act navigates nowhere.
const destinationJS = `function(mode) {
  const desc = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const closest = (el, sel) => Element.prototype.closest.call(el, sel);
  const formAction = desc(HTMLFormElement.prototype, 'action');
  if (mode === 'click') {
    const a = closest(this, 'a[href], area[href]');
    if (a) return {url: a.href, submits: false, inForm: false};
  }
  let submitter = closest(this, 'button, input[type=submit], input[type=image]');
  if (submitter) {
    const proto = submitter.tagName === 'BUTTON' ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    const type = desc(proto, 'type').call(submitter);
    if (type !== 'submit' && type !== 'image') submitter = null;
  }
  let form = null;
  if (mode === 'click') {
    if (!submitter) return {url: '', submits: false, inForm: false};
    form = desc(Object.getPrototypeOf(submitter), 'form') ? submitter.form : null;
  } else {
    form = this.tagName === 'FORM' ? this : (this.form || closest(this, 'form'));
  }
  if (!form) return {url: '', submits: false, inForm: false};
  let url = formAction.call(form);
  if (submitter && Element.prototype.hasAttribute.call(submitter, 'formaction')) {
    const proto = submitter.tagName === 'BUTTON' ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    url = desc(proto, 'formAction').call(submitter);
  }
  return {url: url, submits: true, inForm: true};
}`

// destination is what destinationJS reports.
type destination struct {
	URL     string `json:"url"`
	Submits bool   `json:"submits"`
	InForm  bool   `json:"inForm"`
}

func (el element) destination(ctx context.Context, mode string) (destination, error) {
	var d destination
	err := el.call(ctx, destinationJS, &d, mode)
	return d, err
}

// hitTestJS reports whether the element itself (or one of its
// descendants) is what a click at (x, y) would hit, so that a transparent
// overlay cannot take a click meant for an in-scope element.
const hitTestJS = `function(x, y) {
  const root = this.getRootNode();
  const hit = (root && root.elementFromPoint ? root : document).elementFromPoint(x, y);
  return !!hit && (hit === this || Node.prototype.contains.call(this, hit));
}`

// isPasswordJS reports whether the element is a password field.
const isPasswordJS = `function() {
  return this instanceof HTMLInputElement &&
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'type').get.call(this) === 'password';
}`

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
