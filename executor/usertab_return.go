package executor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// userTabReturnWait bounds taking a user's tab back before the session
// lets it go.
const userTabReturnWait = 5 * time.Second

// returnUserTab takes the user's tab, which the session's call led out of
// scope, back to the history entry it showed when the call began (before),
// and says where it left the tab, for the refusal. A tab let go on the
// refused URL would send the refused request again at the user's first
// reload, unguarded; the entry before is the user's own page (or one the
// session reached in scope), and going back to it is still judged by the
// guard, which holds the tab until it is let go. When the tab cannot be
// taken back to that page — no such entry, a failed or refused load — it is
// left on about:blank: the user loses a page, never gets the refused one.
// The entries after it (the refused one among them) stay in the tab's
// forward history: only the user goes forward, by hand.
func (s *session) returnUserTab(ctx context.Context, before string) string {
	ctx, cancel := boundBy(s.tab.ctx, ctx)
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, userTabReturnWait)
	defer cancelWait()
	if before != "" && !isBlank(before) && s.check(before).Allowed {
		if entry, ok := entryBefore(ctx, before); ok {
			// Not chromedp.NavigateToHistoryEntry: it waits for a load
			// event that a page restored from cache never fires. The
			// entry becoming the current one (committed) is what counts:
			// a reload then loads before.
			_, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: entry})
			for err == nil && !isCurrentEntry(ctx, entry) {
				select {
				case <-ctx.Done():
					err = ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			if err == nil {
				return "taken back to " + pagetext.Value(strconv.Quote(before)) + ", the page it showed before this call"
			}
			s.backend.logger.Warn("a user's tab could not be taken back before the session let it go", "tab", string(s.tab.targetID()), "error", err)
		}
	}
	ectx, cancelEmpty := context.WithTimeout(context.WithoutCancel(ctx), userTabReturnWait)
	defer cancelEmpty()
	if err := chromedp.Do(ectx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Sprintf("not taken back to the page it showed before this call, and emptying it failed (%s)", pagetext.Value(err.Error()))
	}
	return `left on "about:blank", as it could not be taken back to the page it showed before this call`
}

// isCurrentEntry says whether entry is the tab's current history entry.
func isCurrentEntry(ctx context.Context, entry int64) bool {
	h, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	return err == nil && h.CurrentIndex >= 0 && int(h.CurrentIndex) < len(h.Entries) && h.Entries[h.CurrentIndex].ID == entry
}

// entryBefore is the latest entry of the tab's history before its current
// one that shows url.
func entryBefore(ctx context.Context, url string) (int64, bool) {
	h, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	if err != nil {
		return 0, false
	}
	for i := min(h.CurrentIndex, int64(len(h.Entries))) - 1; i >= 0; i-- {
		if h.Entries[i].URL == url {
			return h.Entries[i].ID, true
		}
	}
	return 0, false
}
