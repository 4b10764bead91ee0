package main

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
)

// TestUndeclaredToolIsRecorded: an agent that calls a tool the manifest
// does not declare gets a refusal (a tool result, not a protocol error),
// and the evidence log records the attempt at stage manifest.
func TestUndeclaredToolIsRecorded(t *testing.T) {
	t.Parallel()
	f := startWith(t, reloadManifest)
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": "e1"}, "DENIED at manifest", "e2e.click")
	f.mustRefuse(t, "admin.execute_js", map[string]any{"expression": "1"}, "DENIED at manifest")
	f.cs.Close()
	rec := lastRecord(t, f.evidence, "e2e.click")
	if rec.Decision.Allowed || rec.Decision.Stage != evidence.StageManifest || rec.Args["ref"] != "e1" || rec.InteractionCount != 0 {
		t.Fatalf("record of the undeclared call: %+v args %v", rec.Decision, rec.Args)
	}
	lastRecord(t, f.evidence, "admin.execute_js")
}

// TestReloadSaysSoAndNotifiesOnlyOnChange: a reload that changes only the
// policies changes no tool and sends no list_changed; one that changes the
// manifest ends the agent's session, and the first reply after it says so.
func TestReloadSaysSoAndNotifiesOnlyOnChange(t *testing.T) {
	t.Parallel()
	policies := testkit.CopyPolicies(t)
	var listChanged atomic.Int64
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) }}
	f := startClient(t, reloadManifest, opts, "--policies", policies, "--log-level", "info")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})

	// Policies only: the tools stay as they are.
	if err := os.WriteFile(policies+"/extra.cedar", []byte(`@id("extra") forbid (principal, action, resource) when { resource.command == "scroll" };`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(f.pid, syscall.SIGHUP)
	testkit.Eventually(t, func() string {
		if !strings.Contains(f.stderr.String(), `"msg":"reloaded"`) {
			return "serve did not log the reload"
		}
		return ""
	})
	time.Sleep(100 * time.Millisecond) // list_changed would go out 10 ms after a change
	if text := f.mustAllow(t, "e2e.snapshot", nil); strings.Contains(text, "reloaded") {
		t.Errorf("a policy reload keeps the session, and says nothing:\n%s", text)
	}
	if n := listChanged.Load(); n != 0 {
		t.Errorf("a reload that changed no tool sent %d list_changed notification(s)", n)
	}

	// The manifest changes (its scope): its session ends, and the next
	// reply says why the tab is blank.
	if err := os.WriteFile(f.manifest, []byte(strings.Replace(reloadManifest, "[browser]\n", "[browser]\nidle_timeout_seconds = 600\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(f.pid, syscall.SIGHUP)
	testkit.Eventually(t, func() string {
		if strings.Count(f.stderr.String(), `"msg":"reloaded"`) < 2 {
			return "serve did not log the second reload"
		}
		return ""
	})
	text := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(text, "reloaded the manifest") || !strings.Contains(text, `url="about:blank"`) {
		t.Errorf("the first reply after a manifest reload:\n%s", text)
	}
	if text := f.mustAllow(t, "e2e.snapshot", nil); strings.Contains(text, "reloaded the manifest") {
		t.Errorf("the reload is said once:\n%s", text)
	}
	if n := listChanged.Load(); n != 0 {
		t.Errorf("the tools did not change, yet %d list_changed notification(s) were sent", n)
	}
}
