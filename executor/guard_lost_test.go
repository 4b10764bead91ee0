package executor_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestSessionEndsWhenItsGuardLosesItsConnection: when the request guard
// of a session loses its DevTools connection (nothing would intercept its
// pages or pause their new targets any more), the session ends at once:
// it is no longer open, and the MCP session's next call runs in a new
// session whose reply says why the previous one ended.
func TestSessionEndsWhenItsGuardLosesItsConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	if r := h.call(t, "s1", "navigate", map[string]any{"url": h.site + "/docs"}); r.IsError {
		t.Fatal(r.Text)
	}
	first := h.records(t)[0].Session
	h.ex.LoseGuard("s1")
	testkit.Eventually(t, func() string {
		if h.ex.IsOpen(first) {
			return "the session whose guard lost its connection is still open"
		}
		return ""
	})
	r := h.call(t, "s1", "snapshot", nil)
	if r.IsError {
		t.Fatalf("the next call: %s", r.Text)
	}
	if !strings.Contains(r.Text, "session "+first+" ended: its request guard lost its DevTools connection") {
		t.Errorf("the next call's reply does not say why the session ended:\n%s", r.Text)
	}
	// The records come session by session, in the order of the sessions'
	// ids (the second they began, then random), so the snapshot's is
	// found by its command.
	snapshots := 0
	for _, rec := range h.records(t) {
		if rec.Command == "snapshot" {
			snapshots++
			if rec.Session == first {
				t.Errorf("the next call ran in the ended session %s", first)
			}
		}
	}
	if snapshots != 1 {
		t.Errorf("%d snapshot records, want the next call's one", snapshots)
	}
}
