package main

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// TestSIGKILLLosesAtMostTheCallInFlight: a call's envelope is committed
// (fsync) before its reply. The daemon is killed with SIGKILL in the
// middle of a burst of calls; the evidence file then opens, verifies, and
// holds every call that got a reply, plus at most the one in flight.
func TestSIGKILLLosesAtMostTheCallInFlight(t *testing.T) {
	t.Parallel()
	f := startWith(t, launchManifest())
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})
	var replied atomic.Int64
	replied.Add(1) // the navigate above
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmds := []struct {
			tool string
			args map[string]any
		}{
			{"e2e.snapshot", nil},
			{"e2e.scroll", map[string]any{"direction": "down"}},
			{"e2e.navigate", map[string]any{"url": "http://127.0.0.2/"}}, // refused, recorded all the same
			{"e2e.wait_for", map[string]any{"text": "Documentation", "timeout_ms": 1000}},
		}
		for i := 0; ; i++ {
			c := cmds[i%len(cmds)]
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			cancel()
			if err != nil {
				return // the daemon is gone
			}
			replied.Add(1)
		}
	}()
	for replied.Load() < 20 {
		select {
		case <-done:
			t.Fatal("the burst stopped before the kill")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := syscall.Kill(f.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	got := replied.Load()

	store, err := evidence.Open(f.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("the evidence file does not open after SIGKILL: %v", err)
	}
	defer store.Close()
	rep, err := store.Verify()
	if err != nil || !rep.OK() {
		t.Fatalf("the evidence file does not verify after SIGKILL: %v %+v", err, rep)
	}
	if n := int64(rep.Records); n != got && n != got+1 {
		t.Fatalf("%d calls got a reply and the log holds %d records: want %d, or %d with the call in flight", got, n, got, got+1)
	}
	t.Logf("killed after %d replies; %d records, verified", got, rep.Records)
	out, _ := runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if !strings.HasPrefix(out, "ok:") {
		t.Errorf("evidence verify after SIGKILL:\n%s", out)
	}
}
