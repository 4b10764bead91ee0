package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWarmSessionBeginsAtItsFirstCall: when the client lists the tools,
// serve gets the session's browser context and tab ready before any call
// (its debug log says so); a session made ready that way counts its life
// from its first call, so a first call that comes later than the idle
// timeout is not refused as expired (with on_expiry = "refuse", it would
// be), and the tab closed meanwhile is opened again.
func TestWarmSessionBeginsAtItsFirstCall(t *testing.T) {
	t.Parallel()
	manifest := strings.Replace(fmt.Sprintf(e2eManifest, "launch", ""), "max_interactions = 100000",
		"max_interactions = 100000\nidle_timeout_seconds = 1\non_expiry = \"refuse\"", 1)
	f := startWith(t, manifest, "--log-level", "debug")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(f.stderr.String(), "session context ready") {
		select {
		case <-ctx.Done():
			t.Fatalf("no session context was made ready after the tool list:\n%s", f.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(1500 * time.Millisecond) // past idle_timeout_seconds, before any call
	out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})
	if strings.Contains(out, "expired") || !strings.Contains(out, `title="Sign in"`) {
		t.Errorf("the first call after a wait:\n%s", out)
	}
}
