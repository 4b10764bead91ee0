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
	switched := false
	if v.Reset && s.tab.targetID() != s.tabs.home && s.tabOwner(s.tab.targetID()) == ownerUser {
		// The user's own tab is not reset: the session lets it go (or
		// keeps it under the guard when pages of the session's share its
		// group), and goes back to its first tab. A tab the call itself
		// led out of scope (t.after is read: the call acted) is first
		// taken back to the page it showed (returnUserTab); one the user
		// took out of scope by hand is theirs, and let go as it is.
		cur := s.tab.targetID()
		left := "let go as it is"
		switch acted := t.after != nil; {
		case len(s.egress.bound.HeldHere()) > 0:
			left = `emptied to "about:blank" (a secret typed in the session was held on it), and let go` // emptyUserTab
		case acted:
			left = s.returnUserTab(ctx, beforeURL(t)) + ", and let go"
		}
		s.emptyUserTab(ctx)
		err := s.switchTo(ctx, s.tabs.home)
		held := err == nil && s.holdsGroup(ctx, cur)
		if held {
			s.holdUserTab(cur)
		} else if err == nil {
			s.letGo(cur)
		}
		v.Reset = err != nil
		switched = err == nil
		name := s.tabIDs.id(cur)
		switch {
		case d != nil && held:
			d.Reason += fmt.Sprintf("; the user's tab %s stays under the session's guard until the session ends, as pages of the session's share its browsing-context group, and the session is back on its first tab %s", name, s.tabIDs.id(s.tabs.home))
		case d != nil && err == nil:
			d.Reason += fmt.Sprintf("; the user's tab %s was %s, and the session is back on its first tab %s", name, left, s.tabIDs.id(s.tabs.home))
		}
	}
	if v.Reset {
		err := s.tab.reset(ctx)
		if d != nil {
			d.Reason += "; " + resetNote(err)
		}
	}
	if (v.Reset || switched || len(v.Close) > 0 || len(v.Release) > 0) && s.tab.open() {
		// The state the agent is told, and the record's final URL, are
		// the ones enforce left: after a switch back, the first tab's
		// (ctx is the tab the call ran on, whose context ended as the
		// session let it go; readState bounds its own wait).
		base := ctx
		if switched {
			base = context.WithoutCancel(ctx)
		}
		cctx, cancel := s.onCurrent(base)
		st := s.readState(cctx)
		cancel()
		if t.after != nil {
			t.left = pageURL{t.after.Tab, t.after.Doc, t.after.URL}
		}
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

// beforeURL is the URL the call found its tab on ("" when not observed).
func beforeURL(t *turn) string {
	if t.facts == nil {
		return ""
	}
	return t.facts.State.URL
}
