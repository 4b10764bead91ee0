package executor

import (
	"context"
	"fmt"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// historyStep is how far through the tab's history a command goes:
// go_back one entry back, go_forward one ahead.
func historyStep(command string) int64 {
	if command == "go_forward" {
		return 1
	}
	return -1
}

// historyEntry is the entry step entries away from the current one (nil:
// there is none).
func historyEntry(ctx context.Context, step int64) (*page.NavigationEntry, error) {
	hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	if err != nil {
		return nil, fmt.Errorf("cannot read the tab's history: %w", err)
	}
	i := hist.CurrentIndex + step
	if hist.CurrentIndex < 0 || i < 0 || i >= int64(len(hist.Entries)) {
		return nil, nil
	}
	return hist.Entries[i], nil
}

func actGoBack(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.stepHistory(ctx, -1, f)
}

func actGoForward(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	return s.stepHistory(ctx, 1, f)
}

// stepHistory goes step entries through the tab's history (go_back,
// go_forward) to the entry the gate judged, and refuses when the history
// has changed since.
func (s *session) stepHistory(ctx context.Context, step int64, f *facts) (output, error) {
	e, err := historyEntry(ctx, step)
	if err != nil {
		return output{}, err
	}
	if e == nil {
		if step > 0 {
			return output{}, ErrNoForward
		}
		return output{}, ErrNoHistory
	}
	if f != nil && f.History != nil && e.URL != f.History.To {
		return output{}, fmt.Errorf("the tab's history changed after the gate decided: the step now leads to %s, not to %s; nothing was done", e.URL, f.History.To)
	}
	// Leaving a page a secret was typed on empties it first (an entry of
	// its own, after it); the entry to go to is the one read above.
	if err := s.emptyBeforeLeaving(ctx, e.URL); err != nil {
		return output{}, err
	}
	// Not chromedp.NavigateBack: it waits for a load event that a page
	// restored from cache never fires. The settle wait follows the load.
	if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: e.ID}); err != nil {
		return output{}, fmt.Errorf("go to %s in the tab's history: %w", e.URL, err)
	}
	verb := "went back to "
	if step > 0 {
		verb = "went forward to "
	}
	return output{Text: verb + pagetext.Value(inert(e.URL))}, nil
}

// actReload loads the page again; a page that came from a form is loaded
// by its URL, not posted again.
func actReload(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if err := reloadFresh(ctx); err != nil {
		return output{}, fmt.Errorf("reload: %w", err)
	}
	return output{Text: "reloaded " + pagetext.Value(inert(f.State.URL))}, nil
}
