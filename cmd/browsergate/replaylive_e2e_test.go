package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestEvidenceReplayOfALiveSessionReportsTheUsersTabs: a session recorded
// in live mode that acted in a tab of the user's own replays in a
// launched browser, which has no such tab: the replay says so before the
// steps, and reports those steps as not replayable, not as differences
// (it exits 0 when nothing else differs).
func TestEvidenceReplayOfALiveSessionReportsTheUsersTabs(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := startWith(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint)))
	site, _ := serveLogged(t, map[string]string{"/mine": `<title>mine</title><p>the user's page</p>`})
	usersTab(t, endpoint, site+"/mine")
	tab := f.tabID(t, "e2e", "user", "/mine")
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": tab})
	f.mustAllow(t, "e2e.snapshot", nil)
	f.cs.Close()
	sessions, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	id := strings.Fields(strings.TrimPrefix(sessions, "session "))[0]

	out, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	for _, want := range []string{
		"the session was recorded in live mode and acted in the user's own tabs",
		"switch_tab     NOT REPLAYED: its tab " + tab + " is a tab of the user's own",
		"snapshot       NOT REPLAYED: it acted in " + tab + ", a tab of the user's own",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay does not say %q:\n%s", want, out)
		}
	}
	if code != 0 || strings.Contains(out, "DIFFERS") {
		t.Errorf("the replay of the user's tabs' steps: exit %d, want 0 and no difference:\n%s", code, out)
	}
}
