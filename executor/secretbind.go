package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
)

// The binding that holds a session's pages to the domains of the secrets
// typed in it is package gate's (gate.SecretBinding): the request guard
// (interception and the egress proxy) asks it about every request. What
// follows is what the session does in the browser when the tab leaves
// those domains.

// emptyDrain is how long the tab stays on about:blank after the page a
// secret was typed on gave way: what the old page's last handlers started
// arrives, under the binding, before the agent's navigation lets its
// destination host through.
const emptyDrain = 150 * time.Millisecond

// emptyBeforeLeaving is done before the agent's own navigation (navigate,
// go_back) takes the tab from a page a secret was typed on to dest, a URL
// outside the secret's domains: the session's popups are closed, and the
// page is emptied. Without it the old page's pagehide and
// unload handlers run after the new page commits (a cross-site navigation
// unloads the old page in its own process, later), when the binding no
// longer holds: a WebSocket opened there reached the other host. So the
// page is first replaced by about:blank — a navigation of the browser's,
// which the page cannot cancel or turn elsewhere, checked to have
// committed — and its handlers run while the binding still holds. An error leaves the tab
// where it was and refuses the navigation.
func (s *session) emptyBeforeLeaving(ctx context.Context, dest string) error {
	u, err := scope.ParseURL(dest)
	if err != nil || !s.egress.bound.HoldsAgainst(u.Host) {
		return nil
	}
	ic := s.egress.ic.Load()
	if ic == nil {
		return nil
	}
	// The session's popups may hold the value too (a page can write into
	// a popup it opened): they are closed while still held, before and
	// again after the page is emptied (its handlers may open one as it
	// goes).
	if err := s.closePopups(ctx); err != nil {
		return err
	}
	// A browser-initiated navigation, which the page cannot cancel or
	// redirect (its navigate event is not cancelable).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Errorf("empty the page a secret was typed on before leaving it: %w", err)
	}
	hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	if err != nil || hist.CurrentIndex < 0 || int(hist.CurrentIndex) >= len(hist.Entries) ||
		hist.Entries[hist.CurrentIndex].URL != "about:blank" {
		return fmt.Errorf("the page a secret was typed on did not give way to about:blank (%v); the tab was not navigated", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(emptyDrain):
	}
	return s.closePopups(ctx)
}

// closePopups closes the session's pages other than its tab, but for the
// user's tabs it adopted: those are the user's, and stay (the guard holds
// everything they send once the tab has left the site: doomed).
func (s *session) closePopups(ctx context.Context) error {
	pages, err := s.pages(ctx)
	if err != nil {
		return fmt.Errorf("list the session's pages before leaving the page a secret was typed on: %w", err)
	}
	var popups []target.ID
	for _, p := range pages {
		if p.TargetID != s.tab.targetID() && s.tabOwner(p.TargetID) != ownerUser {
			popups = append(popups, p.TargetID)
		}
	}
	if err := s.tab.closePages(ctx, popups); err != nil {
		return fmt.Errorf("close the session's popups before leaving the page a secret was typed on: %w", err)
	}
	return nil
}

// emptyUserTab empties the current tab before the session lets it go when
// it is a user's tab and a secret the agent typed may be in it (the tab is
// on a page of the secret's domains): once let go, no binding holds what
// its pages send. The navigation to about:blank runs while the tab is
// still guarded; the user finds it blank instead of holding the value.
func (s *session) emptyUserTab(ctx context.Context) {
	cur := s.tab.targetID()
	if cur == "" || !s.tab.open() || s.tabOwner(cur) != ownerUser || len(s.egress.bound.HeldHere()) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		s.backend.logger.Warn("a user's tab a secret was typed into could not be emptied before the session let it go", "tab", string(cur), "error", err)
	}
}
