package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/target"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// enforce does what a verdict requires of the browser — reset a tab that
// is out of scope, close popups that are — and returns the verdict's
// refusal, its reason completed with how the reset went. It decides
// nothing itself.
func (e *Executor) enforce(ctx context.Context, s *session, t *turn, v gate.Verdict) *DenyError {
	d := v.Deny
	if len(v.Close) > 0 {
		popups := make([]target.ID, len(v.Close))
		for i, id := range v.Close {
			popups[i] = target.ID(id)
		}
		if err := s.tab.closePages(ctx, popups); err != nil && d != nil {
			d.Reason += fmt.Sprintf(" (closing them failed: %s)", pagetext.Value(err.Error()))
		}
	}
	for _, page := range v.Release {
		id := target.ID(page)
		// A user's tab in one browsing-context group with pages of the
		// session's stays under the guard (groups.go): let go, it could
		// be scripted or navigated by them, unguarded.
		if s.holdsGroup(ctx, id) {
			s.holdUserTab(id)
			if d != nil {
				d.Reason += "; the user's tab stays under the session's guard until the session ends, as pages of the session's share its browsing-context group"
			}
			continue
		}
		s.letGo(id)
	}
	if v.Reset && s.tab.targetID() != s.tabs.home && s.tabOwner(s.tab.targetID()) == ownerUser {
		// The user's own tab is not reset: the session lets it go, as it
		// is (or keeps it under the guard when pages of the session's
		// share its group), and goes back to its first tab.
		cur := s.tab.targetID()
		s.emptyUserTab(ctx)
		err := s.switchTo(ctx, s.tabs.home)
		held := err == nil && s.holdsGroup(ctx, cur)
		if held {
			s.holdUserTab(cur)
		} else if err == nil {
			s.letGo(cur)
		}
		v.Reset = err != nil
		switch {
		case d != nil && held:
			d.Reason += "; the user's tab stays under the session's guard until the session ends, as pages of the session's share its browsing-context group, and the session is back on its first tab"
		case d != nil && err == nil:
			d.Reason += "; the user's tab was let go as it is, and the session is back on its first tab"
		}
	}
	if v.Reset {
		err := s.tab.reset(ctx)
		if d != nil {
			d.Reason += "; " + resetNote(err)
		}
	}
	if (v.Reset || len(v.Close) > 0 || len(v.Release) > 0) && s.tab.open() {
		st := s.readState(ctx) // the state the agent is told is the one enforce left
		t.after = &st
	}
	return d
}

// resetNote says how a reset went, for a refusal's reason.
func resetNote(err error) string {
	if err != nil {
		return fmt.Sprintf("resetting the tab failed (%s), so the session's browser context was closed", pagetext.Value(err.Error()))
	}
	return "the tab was reset to about:blank and its history cleared"
}
