package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Out-of-process frames. An iframe of another site runs in a process of
// its own, as a target of its own: the tab's DOM, layout and accessibility
// tree stop at its iframe element. The snapshot reads such a frame over a
// chromedp context attached to its target (capture), and a ref into it
// names the target (refTarget.oopif): commands resolve and call the
// element over that context, and a pointer's coordinates are the frame's
// plus the place of its iframe element in the tab (element.go). The target
// guard intercepts these targets like any of the session's.

// frameConns are the tab's attachments to its out-of-process frames, made
// on first use and kept while the frame lives.
type frameConns struct {
	mu    sync.Mutex
	conns map[target.ID]frameConn
}

type frameConn struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// inFrame is a context for the out-of-process frame id of the current tab,
// with ctx's deadline and cancellation; cancel releases it (not the
// attachment, which the tab keeps).
func (s *session) inFrame(ctx context.Context, id target.ID) (context.Context, context.CancelFunc, error) {
	fcs := s.tab.frames
	if fcs == nil {
		return nil, nil, fmt.Errorf("the tab has no frame %s", id)
	}
	fcs.mu.Lock()
	c, ok := fcs.conns[id]
	if ok && !attached(c.ctx) {
		c.cancel()
		delete(fcs.conns, id)
		ok = false
	}
	fcs.mu.Unlock()
	if !ok {
		fctx, cancel := chromedp.NewContext(s.tab.ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
		if err := runBounded(tabAttachWait, func() error { return attach(fctx, false, 0) }); err != nil {
			cancel()
			return nil, nil, fmt.Errorf("attach to the frame: %w", err)
		}
		c = frameConn{ctx: fctx, cancel: cancel}
		fcs.mu.Lock()
		if old, ok := fcs.conns[id]; ok {
			old.cancel() // attached twice at once: keep one
		}
		fcs.conns[id] = c
		fcs.mu.Unlock()
	}
	out, cancel := boundBy(c.ctx, ctx)
	return out, cancel, nil
}

// frameLoader is the loader of the document an out-of-process frame
// (exec) shows now ("" if it cannot be read).
func frameLoader(exec context.Context) cdp.LoaderID {
	tree, err := chromedp.Call(exec, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return ""
	}
	return tree.FrameTree.Frame.LoaderID
}

// attached reports whether a chromedp context's target is still attached.
func attached(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	ch, err := chromedp.Detached(ctx)
	if err != nil {
		return false
	}
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

func newFrameConns() *frameConns { return &frameConns{conns: map[target.ID]frameConn{}} }
