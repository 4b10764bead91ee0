package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// output is what a command produced: text for the agent and the evidence,
// and an optional PNG.
type output struct {
	Text string
	PNG  []byte
}

// maxHTMLLen caps extract_html so one call cannot flood the agent.
const maxHTMLLen = 100000

// act runs one command on the session's tab. The gate has already allowed
// it; act does not check scope or policy again.
func (s *session) act(ctx context.Context, cmd string, args map[string]any) (output, error) {
	switch cmd {
	case "navigate":
		u, _ := args["url"].(string)
		if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
			return output{}, fmt.Errorf("navigate to %s: %w", u, err)
		}
		return output{Text: "navigated to " + u}, nil
	case "snapshot":
		return s.snapshotIn(ctx, s.manifest.Browser.ExtractMode, args)
	case "click":
		el, _, err := s.target(ctx, args)
		if err != nil {
			return output{}, err
		}
		if err := el.click(ctx); err != nil {
			return output{}, err
		}
		return output{Text: "clicked " + el.label}, nil
	case "type_text":
		return s.typeText(ctx, args)
	case "submit_form":
		return s.submitForm(ctx, args)
	case "screenshot":
		full, _ := args["full_page"].(bool)
		png, err := s.screenshot(ctx, full)
		if err != nil {
			return output{}, err
		}
		return output{Text: fmt.Sprintf("screenshot, %d bytes PNG", len(png)), PNG: png}, nil
	case "go_back":
		hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
		if err != nil {
			return output{}, err
		}
		if hist.CurrentIndex <= 0 || int(hist.CurrentIndex) > len(hist.Entries)-1 {
			return output{}, ErrNoHistory
		}
		prev := hist.Entries[hist.CurrentIndex-1]
		// Not chromedp.NavigateBack: it waits for a load event that a page
		// restored from cache never fires. waitStable follows the load.
		if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: prev.ID}); err != nil {
			return output{}, fmt.Errorf("go back: %w", err)
		}
		return output{Text: "went back to " + prev.URL}, nil
	case "wait_for":
		return s.waitFor(ctx, args)
	case "extract_html":
		return s.extractHTML(ctx, args)
	case "list_tabs":
		tabs, err := s.tabs(ctx)
		if err != nil {
			return output{}, err
		}
		var b strings.Builder
		own := chromedp.FromContext(s.tab).Target
		for i, t := range tabs {
			mark := ""
			if own != nil && t.TargetID == own.TargetID {
				mark = " (this session's tab)"
			}
			fmt.Fprintf(&b, "%d. %q %s%s\n", i+1, t.Title, t.URL, mark)
		}
		return output{Text: b.String()}, nil
	case "execute_js":
		expr, _ := args["expression"].(string)
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			return output{}, fmt.Errorf("execute_js: %w", err)
		}
		return output{Text: string(raw)}, nil
	case "scroll":
		dir, _ := args["direction"].(string)
		amount, _ := args["amount"].(int64)
		// One step is 200 CSS pixels.
		dy := amount * 200
		if dir == "up" {
			dy = -dy
		}
		y, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf("window.scrollBy(0, %d), window.scrollY", dy)))
		if err != nil {
			return output{}, err
		}
		return output{Text: fmt.Sprintf("scrolled %s to y=%.0f", dir, y)}, nil
	case "network_timing":
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](networkTimingJS))
		if err != nil {
			return output{}, err
		}
		return output{Text: string(raw)}, nil
	}
	return output{}, fmt.Errorf("command %q has no implementation", cmd)
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
	st := s.readState(ctx)
	text, err := s.snapshot(ctx, sel, origin(st.URL))
	return output{Text: text}, err
}

// typeText focuses the target (or keeps the focused element), replaces its
// value with the text and fires the input events a user's typing would.
func (s *session) typeText(ctx context.Context, args map[string]any) (output, error) {
	text, _ := args["text"].(string)
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	// The gate checked the secrets' domains; the page may have moved
	// since, so they are checked again right before the value goes in.
	filled := ""
	if secs := s.secrets.placeholders(text); len(secs) > 0 {
		if err := s.checkSecrets(ctx, text, &el, named); err != nil {
			return output{}, err
		}
		for _, sec := range secs {
			filled += ", with secret " + sec.Name + " filled in"
		}
	}
	label := "the focused element"
	if named {
		if _, err := chromedp.Call(ctx, dom.Focus, dom.FocusParams{ObjectID: el.object}); err != nil {
			return output{}, fmt.Errorf("%s cannot take focus: %v", el.label, err)
		}
		label = el.label
	}
	// Select the current content so the typed text replaces it.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const a = document.activeElement; if (a && a.select) a.select(); })()`)); err != nil {
		return output{}, err
	}
	secs := s.secrets.placeholders(text)
	if len(secs) > 0 {
		// The value goes only where it was checked: the element itself
		// must hold the focus now.
		var focused bool
		if err := el.call(ctx, focusedJS, &focused); err != nil || !focused {
			return output{}, fmt.Errorf("%s did not take the focus itself, so secret %s is not typed", label, secs[0].Name)
		}
	}
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: s.secrets.fill(text)}); err != nil {
		return output{}, fmt.Errorf("type into %s: %w", label, err)
	}
	if len(secs) > 0 {
		s.noteSecretsTyped(secs)
	}
	return output{Text: fmt.Sprintf("typed %d characters into %s%s", len([]rune(text)), label, filled)}, nil
}

// submitFormJS submits the element's form (or the element if it is a form)
// with requestSubmit, so validation and submit handlers run as for a user.
const submitFormJS = `function() {
  const f = this.tagName === 'FORM' ? this : (this.form || (this.closest && this.closest('form')));
  if (!f) throw new Error('the element is not in a form');
  const btn = (this.type === 'submit') ? this : undefined;
  f.requestSubmit(btn);
  return f.action || location.href;
}`

func (s *session) submitForm(ctx context.Context, args map[string]any) (output, error) {
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	if !named {
		if el, err = s.defaultForm(ctx); err != nil {
			return output{}, err
		}
	}
	var action string
	if err := el.call(ctx, submitFormJS, &action); err != nil {
		return output{}, err
	}
	return output{Text: "submitted the form of " + el.label + " to " + action}, nil
}

// defaultForm is the form of the focused element, or the page's only form.
func (s *session) defaultForm(ctx context.Context) (element, error) {
	el, err := s.querySelector(ctx, "form:focus-within")
	if err == nil {
		el.label = "the focused form"
		return el, nil
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.forms.length"))
	if err != nil {
		return element{}, err
	}
	if n != 1 {
		return element{}, fmt.Errorf("the page has %d forms and none is focused: pass ref or selector", n)
	}
	el, err = s.querySelector(ctx, "form")
	el.label = "the page's form"
	return el, err
}

func (s *session) screenshot(ctx context.Context, full bool) ([]byte, error) {
	p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	if full {
		beyond := true
		p.CaptureBeyondViewport = &beyond
		m, err := chromedp.Call(ctx, page.GetLayoutMetrics, struct{}{})
		if err == nil && m.CSSContentSize != nil {
			p.Clip = &page.Viewport{Width: m.CSSContentSize.Width, Height: m.CSSContentSize.Height, Scale: 1}
		}
	}
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return res.Data, nil
}

// waitForJS resolves true when the selector matches or the text appears in
// the page, false when the timeout passes first.
const waitForJS = `(sel, text, ms) => new Promise(resolve => {
  const ok = () => sel ? !!document.querySelector(sel) : (document.body && document.body.innerText.includes(text));
  if (ok()) return resolve(true);
  const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); clearTimeout(t); resolve(true); } });
  obs.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  const t = setTimeout(() => { obs.disconnect(); resolve(ok()); }, ms);
})`

func (s *session) waitFor(ctx context.Context, args map[string]any) (output, error) {
	sel, _ := args["selector"].(string)
	text, _ := args["text"].(string)
	ms, _ := args["timeout_ms"].(int64)
	if ms <= 0 {
		ms = 5000
	}
	// Never outlast the command's own deadline: the answer must be "did
	// not appear", not a timeout of the whole call.
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 2*time.Second; left < time.Duration(ms)*time.Millisecond {
			ms = max(left.Milliseconds(), 0)
		}
	}
	a, _ := json.Marshal(sel)
	b, _ := json.Marshal(text)
	wctx, cancel := context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond+2*time.Second)
	defer cancel()
	found, err := chromedp.Run(wctx, chromedp.Evaluate[bool](fmt.Sprintf("(%s)(%s, %s, %d)", waitForJS, a, b, ms), chromedp.EvalAwaitPromise))
	what := "text " + string(b)
	if sel != "" {
		what = "selector " + string(a)
	}
	if err != nil {
		return output{}, fmt.Errorf("wait for %s: %w", what, err)
	}
	if !found {
		return output{}, fmt.Errorf("%s did not appear within %d ms", what, ms)
	}
	return output{Text: what + " is present"}, nil
}

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

// networkTimingJS summarises the navigation and resource timing entries.
const networkTimingJS = `(() => {
  const r = x => Math.round(x);
  const nav = performance.getEntriesByType('navigation')[0];
  const out = {navigation: nav ? {url: nav.name, ttfb_ms: r(nav.responseStart), dom_content_loaded_ms: r(nav.domContentLoadedEventEnd), load_ms: r(nav.loadEventEnd), transfer_bytes: nav.transferSize} : null, resources: []};
  for (const e of performance.getEntriesByType('resource').slice(0, 200)) {
    out.resources.push({url: e.name, type: e.initiatorType, start_ms: r(e.startTime), duration_ms: r(e.duration), transfer_bytes: e.transferSize});
  }
  return out;
})()`

// origin is scheme://host[:port] of a URL, used to shorten same-origin
// links in snapshots.
func origin(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}
