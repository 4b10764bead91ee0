package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The gate inspects elements (where a click leads, whether a field is a
// password field, what is on top) with scripts that run in an isolated
// world: a JavaScript context of browsergate's own on the page's DOM,
// whose built-ins the page cannot redefine. A page that replaced
// Object.getOwnPropertyDescriptor or HTMLFormElement.prototype in its own
// world therefore cannot lie to the gate. Commands that act as the page
// (execute_js) still run in the page's world.

// worldName names browsergate's isolated world in DevTools.
const worldName = "browsergate-gate"

// world returns the id of the isolated world for the tab's current
// document, creating it after each navigation.
func (s *session) world(ctx context.Context) (runtime.ExecutionContextID, error) {
	navs := s.watch.navigationCount()
	if s.worldID != 0 && s.worldNavs == navs {
		return s.worldID, nil
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, struct{}{})
	if err != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return 0, fmt.Errorf("read the frame tree: %v", err)
	}
	res, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID: tree.FrameTree.Frame.ID, WorldName: worldName,
	})
	if err != nil {
		return 0, fmt.Errorf("create the gate's isolated world: %w", err)
	}
	s.worldID, s.worldNavs = res.ExecutionContextID, navs
	return s.worldID, nil
}

// evalInWorld evaluates an expression in the isolated world and returns
// the object it yields (not by value).
func (s *session) evalInWorld(ctx context.Context, expr string) (*runtime.RemoteObject, error) {
	id, err := s.world(ctx)
	if err != nil {
		return nil, err
	}
	obj, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject](expr, func(p *runtime.EvaluateParams) {
		p.ContextID = id
	}))
	if err != nil {
		s.worldID = 0 // the document may have changed under us; make a new world next time
	}
	return obj, err
}
