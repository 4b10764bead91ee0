package replay

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// Steps of a live session in the user's own tabs, or that name one as
// their tab, are not replayable, with why; the session's own steps are.
func TestStepsOnTheUsersTabsAreNotReplayable(t *testing.T) {
	recs := []*evidence.Envelope{
		{Command: "navigate", Tab: &evidence.TabRef{ID: "t1", Owner: "session"}},
		{Command: "switch_tab", Args: map[string]any{"tab": "t2"}, Tab: &evidence.TabRef{ID: "t1", Owner: "session"}},
		{Command: "snapshot", Tab: &evidence.TabRef{ID: "t2", Owner: "user"}},
		{Command: "switch_tab", Args: map[string]any{"tab": "t1"}, Tab: &evidence.TabRef{ID: "t2", Owner: "user"}},
		{Command: "switch_tab", Args: map[string]any{"tab": "t3"}, Tab: &evidence.TabRef{ID: "t1", Owner: "session"}},
	}
	users := userTabs(recs)
	for i, want := range []string{"", "its tab t2 is a tab of the user's own", "it acted in t2, a tab of the user's own", "it acted in t2", ""} {
		got := onUserTab(recs[i], users)
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("step %d: %q, want %q", i+1, got, want)
		}
	}
	if userTabsLine(users) == "" {
		t.Error("a session that acted in the user's tabs gets no line saying so")
	}
	if line := userTabsLine(userTabs(recs[:1])); line != "" {
		t.Errorf("a session that did not act in the user's tabs: %q", line)
	}
}
