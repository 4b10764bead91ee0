package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/evidence"
)

// enforce does what a verdict requires of the browser — reset a tab that
// is out of scope, close popups that are — and returns the verdict's
// refusal, its reason completed with how the reset went. It decides
// nothing itself.
func (e *Executor) enforce(ctx context.Context, s *session, t *turn, v verdict) *DenyError {
	d := v.Deny
	if len(v.Close) > 0 {
		if err := s.tab.closePages(ctx, v.Close); err != nil && d != nil {
			d.Reason += fmt.Sprintf(" (closing them failed: %s)", pagetext.Value(err.Error()))
		}
	}
	for _, id := range v.Release {
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

// decideAfter judges where an action left the session's tabs: an
// out-of-scope (or unreadable) tab is reset, out-of-scope popups are
// closed, and the call is refused at stage final_url: the action ran, and
// its outcome is refused. An action during which the page sent a
// navigation or a form submission the gate had not judged (unjudged,
// stopped by the acting guard) is refused at stage destination.
// Like decide it is pure.
func decideAfter(check urlCheck, command string, after PageState, pages []pageFact, pagesErr error, unjudged *Blocked) verdict {
	var v verdict
	switch {
	case after.URL == "":
		v.Reset = true
		v.Deny = deny(evidence.StageFinalURL, "page state",
			"the page could not be read after the %s, so it cannot be shown to be in scope", command)
	case !isBlank(after.URL) && !check(after.URL).Allowed:
		sv := check(after.URL)
		v.Reset = true
		v.Deny = deny(evidence.StageFinalURL, sv.Rule,
			"the %s led the tab to %s, which is out of scope (%s)", command, after.URL, sv.Reason)
	case pagesErr != nil:
		v.Reset = true
		v.Deny = deny(evidence.StageFinalURL, "tabs", "cannot list the session's tabs after the %s: %v", command, pagesErr)
	case unjudged != nil:
		v.Reset = true
		v.Deny = deny(evidence.StageDestination, unjudged.Rule, "during the %s %s; the request was stopped before it left", command, unjudged.Reason)
	default:
		if closed := v.strayPages(check, pages); len(closed) > 0 {
			v.Deny = deny(evidence.StageFinalURL, "popup",
				"the %s opened tab(s) that left the scope or went where the gate had not judged, which were closed: %s", command, strings.Join(closed, "; "))
		}
	}
	return v
}
