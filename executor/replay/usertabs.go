package replay

import (
	"fmt"

	"github.com/browsergate/browsergate/evidence"
)

// A session recorded in live mode may have acted in the user's own tabs
// (adopted, or switched to): a replay runs in a launched browser of its
// own, which has no such tab. Those steps are reported as not replayable,
// with why, not as differences, which would read as a log or a site that
// changed.

// userTabs are the ids of the user's own tabs the session's records name.
func userTabs(recs []*evidence.Envelope) map[string]bool {
	tabs := map[string]bool{}
	for _, r := range recs {
		if r.Tab != nil && r.Tab.Owner == "user" {
			tabs[r.Tab.ID] = true
		}
	}
	return tabs
}

// userTabsLine says, before the steps, that the session acted in the
// user's own tabs and how the replay reports those steps; "" when it did
// not.
func userTabsLine(tabs map[string]bool) string {
	if len(tabs) == 0 {
		return ""
	}
	return "the session was recorded in live mode and acted in the user's own tabs: a launched browser has none, so those steps are reported as not replayable, not as differences"
}

// onUserTab says why r cannot be replayed when it acted in one of the
// user's own tabs, or names one as its tab argument (switch_tab {tab:
// "t2"}, close_tab); "" otherwise.
func onUserTab(r *evidence.Envelope, tabs map[string]bool) string {
	if r.Tab != nil && r.Tab.Owner == "user" {
		return fmt.Sprintf("it acted in %s, a tab of the user's own in the live browser the session was recorded in, which a launched browser does not have", r.Tab.ID)
	}
	if id, ok := r.Args["tab"].(string); ok && tabs[id] {
		return fmt.Sprintf("its tab %s is a tab of the user's own in the live browser the session was recorded in, which a launched browser does not have", id)
	}
	return ""
}
