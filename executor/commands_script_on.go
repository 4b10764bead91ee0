package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// execute_js on an element (ref) or in a frame (frame): the agent's script
// runs in the page's own world of the element's or the frame's document,
// as it runs in the tab's. observe finds that document and its URL as the
// browser has it (DOM, frame tree; never the frame's own script), and the
// gate judges it: inside the scope (scriptDocument), not where a typed
// secret is held (the no-oracle rule). It is found and judged again as the
// script is about to run (mayScript): a frame may have moved in between.

// scriptTarget is what execute_js with ref or frame runs on: the
// element, or the frame's document, in the page's own world, the context
// of its process, the function to call and its arguments, and the URL of
// its document ("" for the tab's own).
type scriptTarget struct {
	exec  context.Context
	obj   runtime.RemoteObjectID
	fn    string
	args  []*runtime.CallArgument
	url   string
	label string
}

// scriptOn finds the element (ref) or the frame's document (frame) a
// script runs on. With ref, the expression is a function called with the
// element; with frame, an expression, evaluated in that document.
func (s *session) scriptOn(ctx context.Context, args map[string]any, expr string) (scriptTarget, error) {
	if ref, _ := args["ref"].(string); ref != "" {
		st := scriptTarget{fn: expr, label: "ref " + ref}
		el, err := s.resolveRef(ctx, ref)
		if err != nil {
			return st, err
		}
		st.exec = el.in(ctx)
		obj, err := chromedp.Call(st.exec, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: el.backend, ObjectGroup: s.objectGroup(el.oopif)})
		if err != nil || obj.Object == nil {
			return st, fmt.Errorf("%w %q: the element is gone (the page changed): take a new snapshot", ErrNoSuchRef, ref)
		}
		st.obj = obj.Object.ObjectID
		st.args = []*runtime.CallArgument{{ObjectID: st.obj}}
		if el.frame != "" || el.oopif != "" {
			st.url, err = frameURL(st.exec, el.frame)
		}
		return st, err
	}
	sel, _ := args["frame"].(string)
	st := scriptTarget{fn: "function() { return (\n" + expr + "\n); }", label: "frame " + strconv.Quote(sel)}
	var err error
	st.exec, st.obj, st.url, err = s.frameDocument(ctx, sel)
	return st, err
}

// observeScript reads, for the gate, the document execute_js with ref or
// frame would run in (nil without either: the tab's own page).
func (s *session) observeScript(ctx context.Context, args map[string]any) *gate.Element {
	if args["ref"] == nil && args["frame"] == nil {
		return nil
	}
	st, err := s.scriptOn(ctx, args, "")
	return &gate.Element{Named: true, Label: st.label, Err: err, Document: st.url}
}

// runScriptOn runs execute_js with ref or frame. The gate judged the
// document the call named as observe found it; it is found again here,
// and judged again, since a frame may have moved since.
func (s *session) runScriptOn(ctx context.Context, args map[string]any, expr string) (output, error) {
	st, err := s.scriptOn(ctx, args, expr)
	if err != nil {
		return output{}, err
	}
	if st.url != "" {
		if err := s.mayScript(st.url); err != nil {
			return output{}, err
		}
	}
	byValue, await := true, true
	res, err := chromedp.Call(st.exec, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: st.fn, ObjectID: st.obj, Arguments: st.args, ReturnByValue: &byValue, AwaitPromise: &await,
	})
	if err != nil {
		return output{}, fmt.Errorf("execute_js: %w", err)
	}
	if ex := res.ExceptionDetails; ex != nil {
		msg := ex.Text
		if ex.Exception != nil && ex.Exception.Description != "" {
			msg = ex.Exception.Description
		}
		return output{}, fmt.Errorf("execute_js: %s", pagetext.Value(msg))
	}
	value := "undefined"
	if res.Result != nil && len(res.Result.Value) > 0 {
		value = string(res.Result.Value)
	}
	if st.url != "" {
		// A frame's text is masked for the secrets of its own host, as a
		// snapshot's frames are; the record masks it again in full.
		value = s.maskPage(value, hostOf(st.url))
	}
	return output{Text: pagetext.Value(value)}, nil
}

// frameDocument finds the iframe (or frame) element sel names in the
// tab's document and returns the context its document runs in, that
// document in the page's own world, and its URL as the browser has it.
func (s *session) frameDocument(ctx context.Context, sel string) (exec context.Context, doc runtime.RemoteObjectID, url string, err error) {
	host, err := s.querySelector(ctx, sel)
	if err != nil {
		return nil, "", "", fmt.Errorf("frame: %w", err)
	}
	depth, pierce := int64(1), true
	desc, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: host.backend, Depth: &depth, Pierce: &pierce})
	if err != nil || desc.Node == nil {
		return nil, "", "", fmt.Errorf("frame %s cannot be read: %v", host.label, err)
	}
	n := desc.Node
	if n.LocalName != "iframe" && n.LocalName != "frame" {
		return nil, "", "", fmt.Errorf("frame: %s is a <%s>, not an iframe: name the iframe element whose document the script runs in", host.label, pagetext.Value(n.LocalName))
	}
	if cd := n.ContentDocument; cd != nil {
		// A frame of the tab's own process: its document is a node here.
		obj, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: cd.BackendNodeID, ObjectGroup: s.objectGroup("")})
		if err != nil || obj.Object == nil {
			return nil, "", "", fmt.Errorf("frame %s: its document is gone (the frame moved): %v", host.label, err)
		}
		return ctx, obj.Object.ObjectID, cd.DocumentURL, nil
	}
	if n.FrameID == "" {
		return nil, "", "", fmt.Errorf("frame %s shows no document yet", host.label)
	}
	// Another site's frame, in a process of its own: its frame id is its
	// target's. The document is taken before its URL is read, so that a
	// frame that moves in between is judged at its new URL and the script,
	// called on the old document, finds it gone.
	fctx, _, err := s.inFrame(ctx, target.ID(n.FrameID)) // released with ctx
	if err != nil {
		return nil, "", "", fmt.Errorf("frame %s cannot be reached: %w", host.label, err)
	}
	obj, err := chromedp.Run(fctx, chromedp.Evaluate[*runtime.RemoteObject]("document", chromedp.EvalObjectGroup(s.objectGroup(target.ID(n.FrameID)))))
	if err != nil || obj == nil || obj.ObjectID == "" {
		return nil, "", "", fmt.Errorf("frame %s: its document cannot be read: %v", host.label, err)
	}
	if url, err = frameURL(fctx, ""); err != nil {
		return nil, "", "", err
	}
	return fctx, obj.ObjectID, url, nil
}

// frameURL is the URL of a frame as the browser has it: id in exec's frame
// tree, or the tree's root for "".
func frameURL(exec context.Context, id cdp.FrameID) (string, error) {
	tree, err := chromedp.Call(exec, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil {
		return "", fmt.Errorf("the frame's URL cannot be read: %v", err)
	}
	walk := []*page.FrameTree{tree.FrameTree}
	for len(walk) > 0 {
		ft := walk[0]
		walk = append(walk[1:], ft.ChildFrames...)
		if ft.Frame != nil && (id == "" || ft.Frame.ID == id) {
			return ft.Frame.URL, nil
		}
	}
	return "", errors.New("the frame is gone (the page changed): take a new snapshot")
}

// mayScript refuses, as the script is about to run, a frame whose
// document has moved out of the scope or onto a typed secret's site since
// the gate judged it (scriptDocument, selectorOracle).
func (s *session) mayScript(url string) error {
	if url != "about:blank" && url != "about:srcdoc" {
		if v := s.check(url); !v.Allowed {
			return fmt.Errorf("execute_js refused: the frame's document %s is outside the scope (%s): a frame out of the scope is not the agent's to script", pagetext.Value(url), v.Reason)
		}
	}
	if len(s.typedOn(url)) > 0 {
		return errors.New("execute_js refused: a secret was typed on the frame's site: a script there could read the value and pass it on in a form the masker does not know")
	}
	return nil
}

// typedOn are the secrets typed in the session that a page at url is
// considered to hold (its host is on their domains, or they were carried
// there).
func (s *session) typedOn(url string) []*toolclad.Secret {
	typed := s.egress.bound.Typed()
	return slices.DeleteFunc(s.considered(hostOf(url)), func(sec *toolclad.Secret) bool { return !slices.Contains(typed, sec) })
}
