package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const reloadManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`

// TestReload: SIGHUP (and --watch) reload manifests and policies as one
// set. A broken policy is refused and logged, and the old set keeps
// serving; a valid new policy decides the next call; a manifest that gains
// a command changes the tool list, and the client is told.
func TestReload(t *testing.T) {
	t.Parallel()
	policies := testkit.CopyPolicies(t)
	var listChanged atomic.Int64
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) }}
	f := startClient(t, reloadManifest, opts, "--policies", policies, "--watch")
	docs := map[string]any{"url": f.siteURL + "/docs"}
	f.mustAllow(t, "e2e.navigate", docs)

	// A policy that does not type-check against the schema. Loaded, it
	// would fail on every call and so deny navigate (fail closed).
	broken := filepath.Join(policies, "typo.cedar")
	if err := os.WriteFile(broken, []byte(`@id("typo")
forbid (principal, action == Web::Action::"browse", resource) when { resource.comand == "navigate" };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(f.pid, syscall.SIGHUP)
	testkit.Eventually(t, func() string {
		if log := f.stderr.String(); !strings.Contains(log, "reload refused") || !strings.Contains(log, "typo.cedar:2") {
			return "serve did not log the refused reload naming typo.cedar:2"
		}
		return ""
	})
	f.mustAllow(t, "e2e.navigate", docs) // the old set still serves

	// A valid replacement takes effect (through --watch, no signal).
	if err := os.WriteFile(broken, []byte(`@id("no-docs")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "navigate" && resource.url like "*/docs" };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() string {
		if text, refused := f.call(t, "e2e.navigate", docs); !refused || !strings.Contains(text, "no-docs") {
			return "the new policy no-docs never decided navigate:\n" + text
		}
		return ""
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})

	// The manifest gains a command: the tool list changes and the client
	// hears of it.
	if err := os.WriteFile(f.manifest, []byte(reloadManifest+"[browser.commands.go_back]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(f.pid, syscall.SIGHUP)
	testkit.Eventually(t, func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tools, err := f.cs.ListTools(ctx, nil)
		if err != nil {
			return err.Error()
		}
		for _, tool := range tools.Tools {
			if tool.Name == "e2e.go_back" {
				return ""
			}
		}
		return "e2e.go_back never appeared in the tool list"
	})
	testkit.Eventually(t, func() string {
		if listChanged.Load() == 0 {
			return "the client was never told that the tool list changed"
		}
		return ""
	})
	// The new tool runs. The manifest changed, so the session it ran in
	// is a fresh one: its tab has no history yet.
	text, _ := f.call(t, "e2e.go_back", nil)
	if !strings.Contains(text, "no previous page in this tab") || !strings.Contains(text, `url="about:blank"`) {
		t.Errorf("go_back after the reload:\n%s", text)
	}
}
