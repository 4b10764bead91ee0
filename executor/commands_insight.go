package executor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/a11y"
)

// actAccessibilityAudit audits the page with axe-core (package a11y), run
// in the gate's isolated world (world.go): the page's scripts can neither
// replace axe nor the built-ins it calls. axe is put in a world once, on
// the first audit of its document.
func actAccessibilityAudit(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	var raw string
	err := s.inWorld(ctx, func(id runtime.ExecutionContextID) error {
		inWorld := func(p *runtime.EvaluateParams) { p.ContextID = id }
		loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](a11y.Loaded, inWorld))
		if err != nil {
			return err
		}
		if !loaded {
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](a11y.Source+"\n;true", inWorld)); err != nil {
				return fmt.Errorf("load axe-core: %w", err)
			}
		}
		raw, err = chromedp.Run(ctx, chromedp.Evaluate[string](a11y.Run, inWorld, chromedp.EvalAwaitPromise))
		return err
	})
	if err != nil {
		return output{}, fmt.Errorf("accessibility audit: %w", err)
	}
	r, err := a11y.Parse(raw)
	if err != nil {
		return output{}, err
	}
	return output{Text: r.Text()}, nil
}
