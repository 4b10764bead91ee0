package executor

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// navigate, go_back, go_forward and reload: the agent's own navigations
// of the tab (navigates in the command table), which may leave a site a
// secret was typed on (secretbind.go).

func actNavigate(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	u, _ := args["url"].(string)
	if err := s.emptyBeforeLeaving(ctx, u); err != nil {
		return output{}, err
	}
	mark, navs := s.egress.unreachable.mark(), s.tab.watch.navigationCount()
	err := chromedp.Do(ctx, chromedp.Navigate(u))
	// Whether a document committed, not whether Navigate returned without
	// an error: one that ran out of time (or was stopped) may still have
	// left the proxy's error response in the tab.
	committed := s.tab.watch.navigationCount() != navs
	if why := s.egress.unreachable.since(mark, u); why != "" {
		return output{}, s.siteDidNotAnswer(u, why, committed)
	}
	if landed, why, redirected := s.landedUnanswered(mark, navs, u); why != "" {
		return output{}, s.redirectDidNotAnswer(u, landed, why, redirected, committed)
	}
	if err != nil {
		return output{}, fmt.Errorf("navigate to %s: %w", u, err)
	}
	// The document's HTTP status is added from the read after the action
	// (checkAfter), once the page has settled.
	return output{Text: "navigated to " + pagetext.Value(u), reportStatus: true, asked: u}, nil
}

// withLanding adds to the first line of a navigate's output where the
// tab landed when it is not the URL asked for (a server's redirect, a
// page that moved itself on at once): "navigated to A, and was
// redirected to B", and the same in its structured content (final_url,
// redirected), so that an agent never takes the page it reads for the
// one it asked for. The URLs are compared as the browser requests them,
// fragments included. shown is landed as the agent is shown it, masked
// for whoever may have chosen it (session.shownURL), and marked done.
func withLanding(out output, landed, shown string) output {
	if out.asked == "" || landed == "" || canonicalNav(landed) == canonicalNav(out.asked) {
		return out
	}
	first, rest, more := strings.Cut(out.Text, "\n")
	first += ", and was redirected to " + pagetext.Done(inert(shown))
	if more {
		first += "\n" + rest
	}
	out.Text = first
	if out.Structured == nil {
		out.Structured = map[string]any{}
	}
	out.Structured["final_url"] = pagetext.Done(shown)
	out.Structured["redirected"] = true
	return out
}

// withStatus adds the document's HTTP status, as the read after the
// action found it, to the first line of a navigate's output, for the
// agent: "navigated to … (HTTP 404 Not Found)". An unknown status (0)
// adds nothing.
func withStatus(text string, status int) string {
	if status == 0 {
		return text
	}
	first, rest, more := strings.Cut(text, "\n")
	first += fmt.Sprintf(" (HTTP %d %s)", status, http.StatusText(status))
	if more {
		return first + "\n" + rest
	}
	return first
}

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
	// The page's URL is the state line's (session.shownURL): it may be
	// one another page chose.
	if step > 0 {
		return output{Text: "went forward one page in the tab's history"}, nil
	}
	return output{Text: "went back one page in the tab's history"}, nil
}

// actReload loads the page again; a page that came from a form is loaded
// by its URL, not posted again.
func actReload(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if err := reloadFresh(ctx); err != nil {
		return output{}, fmt.Errorf("reload: %w", err)
	}
	return output{Text: "reloaded the page"}, nil // its URL is the state line's
}

// reloadFresh loads the tab's current URL again: a reload, or, when the
// current entry came from a form (a reload would post it again), a plain
// navigation to its URL.
func reloadFresh(ctx context.Context) error {
	hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	if err != nil {
		return err
	}
	if i := hist.CurrentIndex; i >= 0 && int(i) < len(hist.Entries) {
		if e := hist.Entries[i]; e.TransitionType == page.TransitionTypeFormSubmit {
			return chromedp.Do(ctx, chromedp.Navigate(e.URL))
		}
	}
	return chromedp.Do(ctx, chromedp.Reload())
}

// siteDidNotAnswer is navigate's error when its own request found no
// site. committed: the tab shows the proxy's error response as a page (a
// plain request's; a tunnel's failure makes the browser show its own
// error page), which is replaced by about:blank, so that no snapshot
// shows browsergate's words as if the page said them.
func (s *session) siteDidNotAnswer(u, why string, committed bool) error {
	err := fmt.Errorf("the site did not answer: %s could not be reached (%s); no page was loaded", pagetext.Value(u), why)
	return s.blankAfterSilence(err, committed)
}

// blankAfterSilence replaces the proxy's error response the tab shows
// (committed) by about:blank, and returns err, the call's error, saying
// so when it could not. It runs on the tab's own context, bounded, as
// checkAfter does: the command's may have run out (the navigate used up
// its time waiting for the dead site), and the error response must not
// stay in the tab for that.
func (s *session) blankAfterSilence(err error, committed bool) error {
	if committed {
		bctx, cancel := context.WithTimeout(s.tab.ctx, 5*time.Second)
		defer cancel()
		if berr := chromedp.Do(bctx, chromedp.Navigate("about:blank")); berr != nil {
			return fmt.Errorf("%w; the tab still shows the egress proxy's error response, as about:blank could not replace it: %v", err, berr)
		}
	}
	return err
}
