package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// click, type_text and submit_form: acting on an element as a user
// would, on the element observe judged (press_key, hover and
// select_option have files of their own).

func actClick(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	el, _, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	var want gate.Destination
	if f != nil && f.Element != nil {
		want = f.Element.Dest
	}
	c := clickOf(args)
	if err := s.clickWith(ctx, el, want, c); err != nil {
		return output{}, err
	}
	return output{Text: c.verb() + " " + pagetext.Value(el.label)}, nil
}

// clickOf reads click's button, click_count and modifiers (toolclad has
// checked them).
func clickOf(args map[string]any) mouseClick {
	var c mouseClick
	if b, _ := args["button"].(string); b != "" {
		c.button = input.MouseButton(b)
	}
	c.count, _ = args["click_count"].(int64)
	c.names, _ = args["modifiers"].(string)
	for name := range strings.SplitSeq(c.names, "+") {
		if m, ok := modifiers[strings.ToLower(name)]; ok {
			c.modifiers |= int64(m.bit)
		}
	}
	return c
}

// opensTab reports whether the call is a click that may open a tab or a
// window: the gate judges it where it leads and as opening a tab (refused
// while a secret typed on the site may be in the page).
func opensTab(call *toolclad.Call) bool {
	if call.Command == nil {
		return false
	}
	switch call.Command.Name {
	case "click":
		return clickOf(call.Args).opensTab()
	case "press_key":
		key, _ := call.Args["key"].(string)
		c, err := parseChord(key)
		return err == nil && c.opensTab()
	}
	return false
}

func actTypeText(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.typeText(ctx, args)
}

// typeText focuses the target (or keeps the focused element), replaces its
// value with the text and fires the input events a user's typing would.
func (s *session) typeText(ctx context.Context, args map[string]any) (output, error) {
	text, _ := args["text"].(string)
	secs := s.secrets.Load().Placeholders(text)
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	// The reply counts the characters the agent wrote and names each
	// secret: a secret's length is not the agent's to learn.
	typed := fmt.Sprintf("typed %d characters", len([]rune(text)))
	if len(secs) > 0 {
		// The gate checked the secrets' domains; the page may have moved
		// since, so they are checked again right before the value goes in.
		if err := s.secrets.Load().MayType(text, s.observeField(ctx, args)); err != nil {
			return output{}, err
		}
		own := text
		var names []string
		for _, sec := range secs {
			own = strings.ReplaceAll(own, sec.Placeholder(), "")
			names = append(names, "secret "+sec.Name)
		}
		typed = "typed " + strings.Join(names, " and ")
		if n := len([]rune(own)); n > 0 {
			typed = fmt.Sprintf("typed %d characters and %s", n, strings.Join(names, " and "))
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
			// guard never looks (TestSecretCannotWakeTheUsersWorker). A
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
		s.egress.bound.Bind(hostOf(field.Field.URL), secs, s.secrets.Load())
		// A connection the page opened before (a WebSocket) was judged
		// before the rule: those to hosts outside the domains are closed.
		if s.egress.proxy != nil {
			s.egress.proxy.CloseUpstreams(func(host string) bool {
				_, refuse := s.egress.bound.Judge(host, false)
				return !refuse
			})
		}
	}
	if len(secs) > 0 {
		// A text field (a manifest may allow one) shows its value: it is
		// drawn as dots before the value is in it, so that no screenshot
		// nor screencast frame taken while it is typed shows the secret.
		if err := el.call(ctx, textSecurityJS, nil); err != nil {
			return output{}, fmt.Errorf("%s cannot be drawn as dots, so secret %s is not typed: %v", pagetext.Value(label), secs[0].Name, err)
		}
	}
	// Into the element's own process (an out-of-process frame's input
	// goes to its widget).
	if _, err := chromedp.Call(el.in(ctx), input.InsertText, input.InsertTextParams{Text: s.secrets.Load().Fill(text)}); err != nil {
		return output{}, fmt.Errorf("type into %s: %w", label, err)
	}
	if len(secs) > 0 {
		s.typed.Note(secs, s.tab.watch.navigationCount())
	}
	return output{Text: typed + " into " + pagetext.Value(label)}, nil
}

// textSecurityJS draws a text field's value as dots (a password field's
// already is).
const textSecurityJS = `function() { if (this.type !== 'password') this.style.setProperty('-webkit-text-security', 'disc', 'important'); }`

func actSubmitForm(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	var want string
	if f != nil && f.Element != nil {
		want = f.Element.Dest.URL
	}
	return s.submitForm(ctx, args, want)
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
