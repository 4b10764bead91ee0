package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/chromedp"
)

// snapshot and extract_html: the page as a whole, as the agent reads it
// (screenshot: commands_shot.go). The snapshot's rendering is package snapshot's (captured in capture.go); read's
// Markdown is commands_read.go's.

func actSnapshot(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.snapshotIn(ctx, s.manifest.Browser.ExtractMode, args)
}

// snapshotIn renders the page in the manifest's extract_mode: the
// accessibility tree with refs (default), the HTML, or the visible text.
// Only the accessibility tree hands out refs.
func (s *session) snapshotIn(ctx context.Context, mode string, args map[string]any) (output, error) {
	sel, _ := args["selector"].(string)
	switch mode {
	case "html":
		return s.extractHTML(ctx, args)
	case "text":
		var text string
		if sel == "" {
			t, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
			if err != nil {
				return output{}, err
			}
			text = t
		} else {
			el, err := s.querySelector(ctx, sel)
			if err != nil {
				return output{}, err
			}
			if err := el.call(ctx, "function() { return this.innerText || this.textContent || ''; }", &text); err != nil {
				return output{}, err
			}
		}
		return output{Text: clip(s.maskText(text), maxSnapshotLen)}, nil
	}
	if n, _ := args["page"].(int64); n > 1 {
		return s.nextPage("snapshot", int(n))
	}
	budget := defaultSnapshotBudget
	if n, ok := args["max_chars"].(int64); ok {
		budget = int(n)
	}
	return s.snapshot(ctx, sel, budget)
}

func actExtractHTML(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.extractHTML(ctx, args)
}

// maxHTMLLen caps extract_html so one call cannot flood the agent.
const maxHTMLLen = 100000

func (s *session) extractHTML(ctx context.Context, args map[string]any) (output, error) {
	sel, _ := args["selector"].(string)
	var html string
	if sel == "" {
		h, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
		if err != nil {
			return output{}, err
		}
		html = h
	} else {
		el, err := s.querySelector(ctx, sel)
		if err != nil {
			return output{}, err
		}
		if err := el.call(ctx, "function() { return this.outerHTML; }", &html); err != nil {
			return output{}, err
		}
	}
	html = s.maskText(html) // before the cut: a cut secret would show its prefix
	if len(html) > maxHTMLLen {
		html = html[:maxHTMLLen] + fmt.Sprintf("\n<!-- truncated at %d characters: pass a narrower selector -->", maxHTMLLen)
	}
	return output{Text: html}, nil
}
