package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// handle_dialog answers the JavaScript dialog a command left open, when
// [browser] dialogs = "ask" holds dialogs for the agent (dialogs.go).

func actHandleDialog(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	w := s.tab.watch
	w.settleOthers(ctx)
	d, before := w.beginAnswer()
	if d == nil {
		if lost := w.takeLostDialog(); lost != "" {
			return output{}, fmt.Errorf("%w: %s", ErrNoDialog, lost)
		}
		return output{}, ErrNoDialog
	}
	accept, _ := args["accept"].(bool)
	text, _ := args["text"].(string)
	if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept, PromptText: text}); err != nil {
		w.answerFailed()
		if strings.Contains(err.Error(), "No dialog is showing") {
			// The browser closed it and the event saying so is not in yet.
			w.dropDialog("the browser no longer shows it")
			return output{}, fmt.Errorf("%w: %s", ErrNoDialog, w.takeLostDialog())
		}
		return output{}, fmt.Errorf("answer the %s dialog: %w", d.Type, err)
	}
	after := w.answered()
	verb := "dismissed"
	if accept {
		verb = "accepted"
	}
	out := verb + " the " + d.Type + " dialog"
	if text != "" {
		out = fmt.Sprintf("%s the %s dialog with an answer of %d characters", verb, d.Type, len([]rune(text)))
	}
	if after > 0 {
		// Page.handleJavaScriptDialog answers whichever dialog shows: with
		// another one up too, which got the answer cannot be told.
		when := ""
		if after > before {
			when = ", one as the answer was sent"
		}
		out += fmt.Sprintf("\n[%d other dialog(s) a frame of the page opened while this one was waiting%s: the browser may have shown one of them in its place, so the answer may have reached that one instead]", after, when)
	}
	return output{Text: out}, nil
}
