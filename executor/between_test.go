package executor_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestRefusalsAfterTheLastCallAreRecordedAtExpiry: a request a page makes
// after the session's last call, refused by the request guard, is recorded
// in a record of its own (kind session_end) when the idle timeout closes
// the session's browser context — not only if the agent calls again.
func TestRefusalsAfterTheLastCallAreRecordedAtExpiry(t *testing.T) {
	t.Parallel()
	m := testkit.Manifest(t, strings.Replace(fmt.Sprintf(loopManifest, false, 50),
		"idle_timeout_seconds = 60", "idle_timeout_seconds = 2", 1))
	store := testkit.Store(t)
	clock := testkit.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	logs := &testkit.SyncBuffer{}
	ex, err := executor.New(executor.Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: store,
		Now: clock.Now, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	page := executor.ServeOn(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>late</title><script>setTimeout(() => fetch('http://127.0.0.2:9/after-last-call').catch(() => {}), 1500)</script>late`)
	}))

	cmd := m.Command("navigate")
	raw := map[string]any{"url": page + "/"}
	args, argErr := cmd.Validate(raw)
	r := ex.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, Tool: "loop.navigate", SessionID: "s",
		RawArgs: raw, Args: args, ArgErr: argErr, Progress: func(string) {}})
	if r.IsError || strings.Contains(r.Text, "after-last-call") {
		t.Fatalf("navigate (the page's request must come after it): %+v", r)
	}
	testkit.Eventually(t, func() string {
		if !strings.Contains(logs.String(), "after-last-call") {
			return "the page's request after the last call was not refused (or not logged)"
		}
		return ""
	})
	// The idle timer fires 2 s after the call; by the (fake) clock the
	// session has then been idle for longer.
	clock.Advance(3 * time.Second)
	var recs []*evidence.Envelope
	testkit.Eventually(t, func() string {
		sessions, err := store.Sessions()
		if err != nil || len(sessions) != 1 {
			return fmt.Sprintf("sessions: %v %v", sessions, err)
		}
		if recs, err = store.Records(sessions[0].ID); err != nil || len(recs) != 2 {
			return fmt.Sprintf("the session has %d record(s) (%v), want the call and a session_end record", len(recs), err)
		}
		return ""
	})
	end := recs[1]
	if end.Kind != evidence.KindSessionEnd || end.Decision.Allowed || end.Decision.Stage != evidence.StageEgress ||
		len(end.Blocked) != 1 || !strings.Contains(end.Blocked[0].URL, "after-last-call") || !end.Blocked[0].Between {
		t.Fatalf("the record of the refusal after the last call: %+v", end)
	}
	if !strings.Contains(strings.Join(end.Decision.Reasons, " "), "idle_timeout_seconds") {
		t.Errorf("the record does not say the session expired: %q", end.Decision.Reasons)
	}
	if rep, err := store.Verify(); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	// The agent comes back: a new session, and nothing is recorded twice.
	cmd = m.Command("snapshot")
	if r := ex.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, Tool: "loop.snapshot", SessionID: "s",
		Progress: func(string) {}}); r.IsError || strings.Contains(r.Text, "after-last-call") {
		t.Fatalf("the next call: %+v", r)
	}
	ex.Close()
	if again, _ := store.Records(recs[0].Session); len(again) != 2 {
		t.Errorf("the expired session has %d records after it ended, want 2", len(again))
	}
}
