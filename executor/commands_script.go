package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// execute_js, scroll and network_timing: scripts run in the page's own
// world, as the page itself would run them (the agent's script, approved
// as the manifest says; the scroll; the page's timing entries).

func actExecuteJS(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	expr, _ := args["expression"].(string)
	if args["ref"] != nil || args["frame"] != nil {
		return s.runScriptOn(ctx, args, expr)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return output{}, fmt.Errorf("execute_js: %w", err)
	}
	return output{Text: pagetext.Value(string(raw))}, nil
}

func actScroll(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	dir, _ := args["direction"].(string)
	amount, _ := args["amount"].(int64)
	dy := amount * 200 // one step is 200 CSS pixels
	if dir == "up" {
		dy = -dy
	}
	y, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf("window.scrollBy(0, %d), window.scrollY", dy)))
	if err != nil {
		return output{}, err
	}
	return output{Text: fmt.Sprintf("scrolled %s to y=%.0f", dir, y)}, nil
}

func actNetworkTiming(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](networkTimingJS))
	if err != nil {
		return output{}, err
	}
	return output{Text: pagetext.Value(string(raw))}, nil
}
