package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// wait_for: waiting, within the call's time, for a selector, a text, or
// an element of a role to appear, or a text to go, read where the page
// cannot answer for it (the isolated world, the browser's accessibility
// tree); or for a fixed time.

func actWaitFor(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.waitFor(ctx, args)
}

func (s *session) waitFor(ctx context.Context, args map[string]any) (output, error) {
	if role, _ := args["role"].(string); role != "" {
		return s.waitForRole(ctx, role, args)
	}
	if _, ok := args["name"]; ok {
		return output{}, errors.New("argument name: it goes with role (the element of that role with that accessible name)")
	}
	if ms, ok := args["time_ms"].(int64); ok {
		return waitTime(ctx, time.Duration(ms)*time.Millisecond)
	}
	sel, _ := args["selector"].(string)
	text, _ := args["text"].(string)
	gone, isGone := args["text_gone"].(string)
	if isGone {
		text = gone
	}
	ms := waitTimeout(ctx, args).Milliseconds()
	a, _ := json.Marshal(sel)
	b, _ := json.Marshal(text)
	wctx, cancel := context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond+2*time.Second)
	defer cancel()
	// In the isolated world: the page cannot redefine what the
	// wait reads, nor make it fail with a message of its own.
	var found bool
	err := s.inWorld(wctx, func(id runtime.ExecutionContextID) error {
		var err error
		found, err = chromedp.Run(wctx, chromedp.Evaluate[bool](fmt.Sprintf("(%s)(%s, %s, %d, %t)", waitForJS, a, b, ms, isGone),
			chromedp.EvalAwaitPromise, func(p *runtime.EvaluateParams) { p.ContextID = id }))
		return err
	})
	// The reply does not repeat the agent's text or selector: a reply
	// that did would show, by what the masker hides of it, whether a
	// guess was a piece of a secret.
	what := "the text"
	if sel != "" {
		what = "the selector"
	}
	if err != nil {
		var ex *chromedp.ExceptionError
		if errors.As(err, &ex) && sel != "" {
			return output{}, fmt.Errorf("%s is not valid CSS", what)
		}
		return output{}, fmt.Errorf("wait for %s: the page changed or could not be read", what)
	}
	switch {
	case !found && isGone:
		return output{}, fmt.Errorf("%s was still on the page after %d ms", what, ms)
	case !found:
		return output{}, fmt.Errorf("%s did not appear within %d ms", what, ms)
	case isGone:
		return output{Text: what + " is gone"}, nil
	}
	return output{Text: what + " is present"}, nil
}

// waitTime waits d, within the command's own deadline as timeout_ms
// is (waitTimeout).
func waitTime(ctx context.Context, d time.Duration) (output, error) {
	wait := waitTimeout(ctx, map[string]any{"timeout_ms": d.Milliseconds()})
	select {
	case <-ctx.Done():
		return output{}, fmt.Errorf("wait %d ms: %w", d.Milliseconds(), ctx.Err())
	case <-time.After(wait):
	}
	if wait < d {
		return output{Text: fmt.Sprintf("waited %d ms of the %d asked: the call's time ran out", wait.Milliseconds(), d.Milliseconds())}, nil
	}
	return output{Text: fmt.Sprintf("waited %d ms", wait.Milliseconds())}, nil
}

// waitTimeout is wait_for's timeout_ms, within the command's own
// deadline: the answer must be "did not appear", not a timeout of the
// whole call.
func waitTimeout(ctx context.Context, args map[string]any) time.Duration {
	ms, _ := args["timeout_ms"].(int64)
	if ms <= 0 {
		ms = 5000
	}
	wait := time.Duration(ms) * time.Millisecond
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 2*time.Second; left < wait {
			wait = max(left, 0)
		}
	}
	return wait
}

// waitForRole waits until the accessibility tree holds an element of the
// role (with the accessible name, when given), asking the browser's own
// tree every 100 ms: the page cannot answer for it.
func (s *session) waitForRole(ctx context.Context, role string, args map[string]any) (output, error) {
	name, _ := args["name"].(string)
	wait := waitTimeout(ctx, args)
	what := "an element of role " + role
	if name != "" {
		what += " with that name" // the agent's text is not repeated (see waitFor)
	}
	deadline := time.Now().Add(wait)
	for {
		doc, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{})
		if err == nil && doc.Root != nil {
			res, qerr := chromedp.Call(ctx, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{
				BackendNodeID: doc.Root.BackendNodeID, Role: role, AccessibleName: name})
			if qerr == nil {
				for _, n := range res.Nodes {
					if !n.Ignored {
						return output{Text: what + " is present"}, nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return output{}, fmt.Errorf("%s did not appear within %d ms", what, wait.Milliseconds())
		}
		select {
		case <-ctx.Done():
			return output{}, fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
