package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
)

// maxHTMLLen caps extract_html so one call cannot flood the agent.
const maxHTMLLen = 100000

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
		text, err := s.nextPage("snapshot", int(n))
		return output{Text: text}, err
	}
	budget := defaultSnapshotBudget
	if n, ok := args["max_chars"].(int64); ok {
		budget = int(n)
	}
	text, err := s.snapshot(ctx, sel, budget)
	return output{Text: text}, err
}

// typeText focuses the target (or keeps the focused element), replaces its
// value with the text and fires the input events a user's typing would.
func (s *session) typeText(ctx context.Context, args map[string]any) (output, error) {
	text, _ := args["text"].(string)
	secs := s.secrets.Placeholders(text)
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	filled := ""
	if len(secs) > 0 {
		// The gate checked the secrets' domains; the page may have moved
		// since, so they are checked again right before the value goes in.
		if err := s.secrets.MayType(text, s.observeField(ctx, args)); err != nil {
			return output{}, err
		}
		for _, sec := range secs {
			filled += ", with secret " + sec.Name + " filled in"
		}
	}
	label := "the focused element"
	if named {
		if _, err := chromedp.Call(el.in(ctx), dom.Focus, dom.FocusParams{ObjectID: el.object}); err != nil {
			return output{}, fmt.Errorf("%s cannot take focus: %v", el.label, err)
		}
		label = el.label
	}
	// Select the current content so the typed text replaces it.
	if named {
		if err := el.call(ctx, `function() { if (this.select) this.select(); }`, nil); err != nil {
			return output{}, err
		}
	} else if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const a = document.activeElement; if (a && a.select) a.select(); })()`)); err != nil {
		return output{}, err
	}
	if len(secs) > 0 {
		// The value goes only where it was checked: the element itself
		// must hold the focus now.
		var focused bool
		if err := el.call(ctx, focusedJS, &focused); err != nil || !focused {
			return output{}, fmt.Errorf("%s did not take the focus itself, so secret %s is not typed", pagetext.Value(label), secs[0].Name)
		}
		// From before the value is in the page (its input handlers run as
		// it is typed), the document may send only to the secret's
		// domains.
		field := s.observeField(ctx, args)
		if field.FieldErr != nil {
			return output{}, fmt.Errorf("the field's page cannot be read, so secret %s is not typed: %s", secs[0].Name, pagetext.Value(field.FieldErr.Error()))
		}
		if s.backend.userContext() {
			// The user's service workers of the field's origin go first:
			// one that is stopped now is woken later by what the page
			// does with the value (a cookie it sets wakes a worker
			// subscribed to the site's cookies), and sends it where the
			// guard never looks (TestH7SecretWakesTheUsersWorker). A
			// running one is refused below (unguardedBeside).
			if origin := originOf(field.Field.URL); origin != "" {
				if _, err := chromedp.Call(ctx, storage.ClearDataForOrigin, storage.ClearDataForOriginParams{Origin: origin, StorageTypes: "service_workers"}); err != nil {
					return output{}, fmt.Errorf("the user's service workers of %s could not be removed, so secret %s is not typed: %w", origin, secs[0].Name, err)
				}
			}
			all, err := chromedp.Targets(ctx)
			if err != nil {
				return output{}, fmt.Errorf("cannot list the tabs, so secret %s is not typed: %w", secs[0].Name, err)
			}
			if beside := s.unguardedBeside(all, field.Field.URL); len(beside) > 0 {
				return output{}, gate.BesideError(secs[0].Name, beside)
			}
		}
		s.egress.bound.Bind(hostOf(field.Field.URL), secs, s.secrets)
		// A connection the page opened before (a WebSocket) was judged
		// before the rule: those to hosts outside the domains are closed.
		if s.egress.proxy != nil {
			s.egress.proxy.CloseUpstreams(func(host string) bool {
				_, refuse := s.egress.bound.Judge(host, false)
				return !refuse
			})
		}
	}
	// Into the element's own process (an out-of-process frame's input
	// goes to its widget).
	if _, err := chromedp.Call(el.in(ctx), input.InsertText, input.InsertTextParams{Text: s.secrets.Fill(text)}); err != nil {
		return output{}, fmt.Errorf("type into %s: %w", label, err)
	}
	if len(secs) > 0 {
		s.typed.Note(secs, s.tab.watch.navigationCount())
		// A text field (a manifest may allow one) shows its value: draw it
		// as dots, so that no screenshot shows the secret.
		_ = el.call(ctx, `function() { if (this.type !== 'password') this.style.setProperty('-webkit-text-security', 'disc', 'important'); }`, nil)
	}
	return output{Text: fmt.Sprintf("typed %d characters into %s%s", len([]rune(text)), pagetext.Value(label), filled)}, nil
}

func (s *session) submitForm(ctx context.Context, args map[string]any, want string) (output, error) {
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
	if err := el.call(ctx, submitFormJS, &action, want); err != nil {
		return output{}, err
	}
	return output{Text: "submitted the form of " + pagetext.Value(el.label) + " to " + pagetext.Value(inert(action))}, nil
}

// defaultForm is the form of the focused element, or the page's only form.
func (s *session) defaultForm(ctx context.Context) (element, error) {
	el, err := s.querySelector(ctx, "form:focus-within")
	if err == nil {
		el.label = "the focused form"
		return el, nil
	}
	var n int
	if err := s.evalValueInWorld(ctx, "document.forms.length", &n); err != nil {
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

func (s *session) waitFor(ctx context.Context, args map[string]any) (output, error) {
	if role, _ := args["role"].(string); role != "" {
		return s.waitForRole(ctx, role, args)
	}
	if _, ok := args["name"]; ok {
		return output{}, errors.New("argument name: it goes with role (the element of that role with that accessible name)")
	}
	sel, _ := args["selector"].(string)
	text, _ := args["text"].(string)
	ms := waitTimeout(ctx, args).Milliseconds()
	a, _ := json.Marshal(sel)
	b, _ := json.Marshal(text)
	wctx, cancel := context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond+2*time.Second)
	defer cancel()
	// In the gate's isolated world: the page cannot redefine what the
	// wait reads, nor make it fail with a message of its own.
	var found bool
	err := s.inWorld(wctx, func(id runtime.ExecutionContextID) error {
		var err error
		found, err = chromedp.Run(wctx, chromedp.Evaluate[bool](fmt.Sprintf("(%s)(%s, %s, %d)", waitForJS, a, b, ms),
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
	if !found {
		return output{}, fmt.Errorf("%s did not appear within %d ms", what, ms)
	}
	return output{Text: what + " is present"}, nil
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
