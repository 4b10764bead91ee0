package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Observe reads the page for the decision (its state, where a click
// leads, whether a field is a password field, what is on top) with
// scripts that run in an isolated world — the world, for short: a
// JavaScript context of browsergate's own on the page's DOM, with
// built-ins of its own that the page cannot redefine. A page that replaced
// Document.prototype.forms, the title getter or
// Object.getOwnPropertyDescriptor in its own world therefore cannot lie to
// the decision. A new world is made for each document. Commands that act as
// the page (execute_js, wait_for) still run in the page's world.

// world returns the id of the isolated world for the tab's current
// document, creating it after each navigation.
func (s *session) world(ctx context.Context) (runtime.ExecutionContextID, error) {
	// The wait for the other reader, which may be making the world, is
	// bounded by this reader's own context (readPage's 3 s, say), not by
	// the other's.
	if err := s.worldLock.lock(ctx); err != nil {
		return 0, fmt.Errorf("create the gate's isolated world: %w", err)
	}
	defer s.worldLock.unlock()
	t := &s.tab
	navs := t.watch.navigationCount()
	if t.worldID != 0 && t.worldNavs == navs {
		return t.worldID, nil
	}
	// A page target's main frame has the target's id.
	res, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID: cdp.FrameID(t.targetID()), WorldName: worldName,
	})
	if err != nil {
		return 0, fmt.Errorf("create the gate's isolated world: %w", err)
	}
	t.worldID, t.worldNavs = res.ExecutionContextID, navs
	return t.worldID, nil
}

// worldOf is the isolated world of the document of frame: the
// tab's own document's ("" ), or a new one in an embedded frame (made for
// each use: a frame's document may change without the tab's).
func (s *session) worldOf(ctx context.Context, frame cdp.FrameID) (runtime.ExecutionContextID, error) {
	if frame == "" {
		return s.world(ctx)
	}
	res, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: worldName})
	if err != nil {
		return 0, fmt.Errorf("create the gate's isolated world in the frame: %w", err)
	}
	return res.ExecutionContextID, nil
}

// evalInWorld evaluates an expression in the isolated world and returns
// the object it yields (not by value). A world whose document went away
// under it (a navigation the watch has not seen yet) is made anew once.
func (s *session) evalInWorld(ctx context.Context, expr string) (*runtime.RemoteObject, error) {
	var obj *runtime.RemoteObject
	err := s.inWorld(ctx, func(id runtime.ExecutionContextID) error {
		var err error
		obj, err = chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject](expr, func(p *runtime.EvaluateParams) {
			p.ContextID, p.ObjectGroup = id, s.objectGroup("")
		}))
		return err
	})
	return obj, err
}

// evalValueInWorld evaluates an expression in the isolated world and
// decodes its JSON value into out.
func (s *session) evalValueInWorld(ctx context.Context, expr string, out any) error {
	return s.inWorld(ctx, func(id runtime.ExecutionContextID) error {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr, func(p *runtime.EvaluateParams) {
			p.ContextID = id
		}))
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, out)
	})
}

func (s *session) inWorld(ctx context.Context, fn func(runtime.ExecutionContextID) error) error {
	var err error
	for try := 0; try < 2; try++ {
		var id runtime.ExecutionContextID
		if id, err = s.world(ctx); err != nil {
			return err
		}
		if err = fn(id); err == nil {
			return nil
		}
		var ex *chromedp.ExceptionError
		if errors.As(err, &ex) || ctx.Err() != nil {
			// The script itself failed, or the reader's time is up: a new
			// world would not help.
			return err
		}
		s.forgetWorld(ctx, id) // the document may have changed under us
	}
	return err
}

// forgetWorld drops the cached world id if it is still id: the next use
// makes a new one (another reader may have made it already). A reader
// whose time runs out first leaves it: a stale id only makes the next
// evaluation fail, and that one forgets it.
func (s *session) forgetWorld(ctx context.Context, id runtime.ExecutionContextID) {
	if s.worldLock.lock(ctx) != nil {
		return
	}
	defer s.worldLock.unlock()
	if s.tab.worldID == id {
		s.tab.worldID = 0
	}
}

// ctxLock is a mutex whose lock gives up when the caller's context ends.
// Make it with newCtxLock.
type ctxLock chan struct{}

func newCtxLock() ctxLock { return make(ctxLock, 1) }

func (l ctxLock) lock(ctx context.Context) error {
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l ctxLock) unlock() { <-l }

// waitDOMQuiet is the session's domQuietFunc: the wait runs in the
// isolated world of the tab's current document, through inWorld, so a
// world id left over from a document that went away is forgotten and the
// wait is run once more in a new world. A wait that still cannot run or
// does not answer ends unread, with the document's readyState read in
// the isolated world if it can be ("" if not): the page's own world is
// never asked, so nothing the page defines decides whether it has loaded.
func (s *session) waitDOMQuiet(tab context.Context, cap time.Duration) domQuietEnd {
	// Past the cap, the wait's own bound is for a page whose thread is too
	// busy to run the wait's timers.
	ctx, cancel := context.WithTimeout(tab, cap+500*time.Millisecond)
	defer cancel()
	var end domQuietEnd
	err := s.inWorld(ctx, func(id runtime.ExecutionContextID) error {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf("(%s)(%d)", domQuietJS, cap.Milliseconds()),
			func(p *runtime.EvaluateParams) { p.ContextID = id }, chromedp.EvalAwaitPromise))
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &end)
	})
	if err != nil || end.End == "" {
		return domQuietEnd{End: domQuietUnread, Ready: s.worldReadyState(tab)}
	}
	return end
}

// worldReadyState is the tab's document.readyState read in the isolated
// world, or "" when no world answers within a second (the tab is between
// documents, or its thread is busy).
func (s *session) worldReadyState(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, time.Second)
	defer cancel()
	var state string
	if err := s.evalValueInWorld(ctx, "document.readyState", &state); err != nil {
		return ""
	}
	return state
}
