package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
)

// hover and select_option: moving the mouse over an element, and choosing
// an option of a <select>, each on the element observe judged.

// observePoint finds the element hover moves the mouse over.
func (s *session) observePoint(ctx context.Context, args map[string]any) *gate.Element {
	el, named, err := s.target(ctx, args)
	return &gate.Element{Named: named, Label: el.label, Err: err}
}

func actHover(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	el, _, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	if err := s.hover(ctx, el); err != nil {
		return output{}, err
	}
	return output{Text: "hovered over " + pagetext.Value(el.label)}, nil
}

// option is the option select_option chooses, and what it belongs to.
type option struct {
	el     element // the <option>, or the listbox's role=option element
	native bool    // an <option> of a <select>
}

// findOption finds the option the call names in the select or listbox it
// names: by its value or its label, as select_option's arguments say;
// fill_form's value names it by its value, else by its label
// (optionChoice).
func (s *session) findOption(ctx context.Context, args map[string]any) (element, option, error) {
	box, _, err := s.target(ctx, args)
	if err != nil {
		return element{}, option{}, err
	}
	by, want := optionChoice(args)
	// Whether the box is a <select> is asked beside the option: both only
	// read the box.
	var native bool
	nativeErr := make(chan error, 1)
	go func() { nativeErr <- box.call(ctx, isSelectJS, &native) }()
	opt, err := box.callObject(ctx, s.objectGroup(box.oopif), optionJS, by, want)
	if nerr := <-nativeErr; err == nil {
		err = nerr
	}
	if err != nil {
		return element{}, option{}, err
	}
	opt.label = "option " + strconv.Quote(clip(want, maxNameLen)) + " of " + box.label
	return box, option{el: opt, native: native}, nil
}

// optionChoice is how the option is named: by value or label
// (select_option), or either (a field of fill_form, marked by fillField).
func optionChoice(args map[string]any) (by, want string) {
	if v, ok := args["value"].(string); ok {
		if args[fillField] == true {
			return "either", v
		}
		return "value", v
	}
	label, _ := args["label"].(string)
	return "label", label
}

// isSelectJS says whether the element is a <select>.
const isSelectJS = "function() { return Object.getOwnPropertyDescriptor(Element.prototype, 'localName').get.call(this) === 'select'; }"

// observeSelect finds the option select_option chooses. Choosing an
// option of a <select> leads nowhere by itself (what the page's change
// handlers do is held by the acting guard); an ARIA listbox's option is
// clicked, so the gate judges where a click on it leads.
func (s *session) observeSelect(ctx context.Context, args map[string]any) *gate.Element {
	box, opt, err := s.findOption(ctx, args)
	ef := &gate.Element{Named: true, Label: box.label, Err: err}
	if err == nil && !opt.native {
		ef.Label = opt.el.label
		ef.DestErr = opt.el.call(ctx, destinationJS, &ef.Dest, "click")
	}
	return ef
}

func actSelectOption(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	box, opt, err := s.findOption(ctx, args)
	if err != nil {
		return output{}, err
	}
	if !opt.native {
		var want gate.Destination
		if f != nil && f.Element != nil {
			want = f.Element.Dest
		}
		// The click's hit test names the node it finds by its backend id.
		if opt.el, err = opt.el.described(ctx); err != nil {
			return output{}, err
		}
		if err := s.click(ctx, opt.el, want); err != nil {
			return output{}, err
		}
		return output{Text: "clicked " + pagetext.Value(opt.el.label)}, nil
	}
	// Focused first, in a call of its own: what the page's focus handlers
	// start (their promises' callbacks included) runs before the choice,
	// as it does for a user.
	_, _ = chromedp.Call(box.in(ctx), dom.Focus, dom.FocusParams{ObjectID: box.object})
	var chosen struct{ Label, Value, Refused string }
	if err := box.callOn(ctx, chooseOptionJS, &chosen, &runtime.CallArgument{ObjectID: opt.el.object}); err != nil {
		return output{}, err
	}
	if chosen.Refused != "" {
		return output{}, fmt.Errorf("%s: %s", opt.el.label, chosen.Refused)
	}
	return output{Text: fmt.Sprintf("selected %s (value %s) in %s", pagetext.Value(strconv.Quote(chosen.Label)), pagetext.Value(strconv.Quote(chosen.Value)), pagetext.Value(box.label))}, nil
}

// callObject runs a JavaScript function with the element as this, like
// call, and returns the element the function returns (in object group
// group), without its backend id (see described). A function that returns
// a string instead says why there is no element: that is the error.
func (el element) callObject(ctx context.Context, group, fn string, args ...any) (element, error) {
	var cargs []*runtime.CallArgument
	for _, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return element{}, err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: raw})
	}
	res, err := chromedp.Call(el.in(ctx), runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: el.object, Arguments: cargs, ObjectGroup: group,
	})
	switch {
	case err != nil:
		return element{}, fmt.Errorf("%s: %w", el.label, err)
	case res.ExceptionDetails != nil:
		return element{}, fmt.Errorf("%s: %s", el.label, res.ExceptionDetails.Text)
	case res.Result == nil:
		return element{}, fmt.Errorf("%s: no result", el.label)
	case res.Result.Type == runtime.RemoteObjectTypeString:
		var why string
		_ = json.Unmarshal(res.Result.Value, &why)
		return element{}, fmt.Errorf("%s: %s", el.label, why)
	case res.Result.ObjectID == "":
		return element{}, fmt.Errorf("%s: no element", el.label)
	}
	out := el // the same document and process
	out.object, out.backend = res.Result.ObjectID, 0
	return out, nil
}

// described is the element with its DOM node's backend id, which the
// browser's hit test names (callObject's elements have none).
func (el element) described(ctx context.Context) (element, error) {
	desc, err := chromedp.Call(el.in(ctx), dom.DescribeNode, dom.DescribeNodeParams{ObjectID: el.object})
	if err != nil || desc.Node == nil {
		return element{}, fmt.Errorf("%s: describe the element: %v", el.label, err)
	}
	el.backend = desc.Node.BackendNodeID
	return el, nil
}
