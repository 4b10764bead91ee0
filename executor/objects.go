package executor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A call's remote objects — the elements it resolves in the isolated world,
// in the tab or in an out-of-process frame — go in an object group of the
// call's own, released when the call ends. In the default group they
// lived as long as their document: a page that replaces its elements as
// it is used (a single-page app) kept every element a call had ever
// resolved, and the detached tree hanging from each, until it navigated.

// callObjects are the objects of one call: their group, and the chromedp
// contexts of the targets they are in (a tab's, an out-of-process
// frame's attachment), to release them there.
type callObjects struct {
	group   string
	mu      sync.Mutex // a call's reads may run side by side (buildTree)
	targets []context.Context
}

var callObjectsSeq atomic.Uint64

// beginObjects gives the session's call an object group of its own; the
// session's lock is held from it to releaseObjects.
func (s *session) beginObjects() {
	s.objs = &callObjects{group: fmt.Sprintf("browsergate-call-%d", callObjectsSeq.Add(1))}
}

// objectGroup is the object group of an object the call makes in the
// current tab (oopif "") or in its out-of-process frame oopif, and notes
// where it is, to be released there. Outside a call it is "" (the default
// group).
func (s *session) objectGroup(oopif target.ID) string {
	o := s.objs
	if o == nil {
		return ""
	}
	where := s.tab.ctx
	if oopif != "" {
		where = nil
		if fcs := s.tab.frames; fcs != nil {
			fcs.mu.Lock()
			if c, ok := fcs.conns[oopif]; ok {
				where = c.ctx // the attachment, which outlives the call
			}
			fcs.mu.Unlock()
		}
	}
	if where != nil {
		o.mu.Lock()
		if !slices.Contains(o.targets, where) {
			o.targets = append(o.targets, where)
		}
		o.mu.Unlock()
	}
	return o.group
}

// objectReleaseWait bounds each release: a target that does not answer
// is gone or hung, and its objects with it. heldReleaseWait bounds one
// made while a JavaScript dialog holds the page, which answers it only
// once the dialog is answered.
const (
	objectReleaseWait = 2 * time.Second
	heldReleaseWait   = 10 * time.Minute
)

// releaseObjects releases the call's object group wherever the call made
// objects, and ends it. While a dialog the agent is to answer holds the
// tab, the release is not waited for: it is sent, and runs in the page
// when the dialog is answered.
func (s *session) releaseObjects() {
	o := s.objs
	s.objs = nil
	if o == nil {
		return
	}
	release := func(ctx context.Context, wait time.Duration) {
		rctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		_, _ = chromedp.Call(rctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: o.group})
	}
	held := s.tab.watch != nil && s.tab.watch.pendingDialog() != nil
	for _, ctx := range o.targets {
		switch {
		case ctx.Err() != nil:
			// The tab or frame is gone, its objects with it.
		case held:
			go release(ctx, heldReleaseWait)
		default:
			release(ctx, objectReleaseWait)
		}
	}
}
