package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/examples/demosite"
)

// TestInitWritesASetCheckAcceptsAndServeRuns: `browsergate init` for a
// site on loopback writes a manifest and policies that check accepts with
// no warning, and that serve runs: over stdio, with the MCP client, the
// agent navigates to the site, takes a snapshot and clicks a link by its
// ref, and the link is followed.
func TestInitWritesASetCheckAcceptsAndServeRuns(t *testing.T) {
	t.Parallel()
	siteURL, stop, err := serveOn("127.0.0.1:0", demosite.New(demosite.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	dir := t.TempDir()
	out, code := runBinary(t, "init", siteURL+"/", "--dir", dir)
	manifest, policies := filepath.Join(dir, "site.toml"), filepath.Join(dir, "policies")
	if code != 0 || !strings.Contains(out, "wrote "+manifest) {
		t.Fatalf("init %s: exit %d\n%s", siteURL, code, out)
	}
	for _, f := range []string{manifest, filepath.Join(policies, "site.cedar")} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "docs/") {
			t.Errorf("%s: %v; its comments should point to the documentation:\n%s", f, err, b)
		}
	}
	out, code = runBinary(t, "check", "--manifest", manifest, "--policies", policies)
	if code != 0 || !strings.HasSuffix(out, "ok (0 warning(s))\n") {
		t.Fatalf("check of init's set: exit %d, want 0 with no warning\n%s", code, out)
	}
	// Asked again, init refuses to overwrite what it wrote.
	if out, code := runBinary(t, "init", siteURL+"/", "--dir", dir); code != 1 || !strings.Contains(out, "already exists") {
		t.Errorf("init over its own files: exit %d\n%s", code, out)
	}

	cmd := exec.Command(binary, "serve", "--manifest", manifest, "--policies", policies,
		"--evidence", filepath.Join(dir, "evidence.db"), "--log-level", "warn")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "init-e2e", Version: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to serve: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("serve's log:\n%s", stderr.String())
		}
	})
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			t.Fatalf("%s %v refused:\n%s", tool, args, resultText(res))
		}
		return resultText(res)
	}
	call("site.navigate", map[string]any{"url": siteURL + "/"})
	snap := call("site.snapshot", nil)
	ref := findRef(snap, "[Docs")
	if ref == "" {
		t.Fatalf("the snapshot has no ref for the Docs link:\n%s", snap)
	}
	call("site.click", map[string]any{"ref": ref})
	if after := call("site.snapshot", nil); !strings.Contains(after, `title="Documentation"`) {
		t.Errorf("the click on the Docs link did not lead to the documentation:\n%s", after)
	}

	// The grant names the site's port only: another server on the same
	// address is out of scope, and never sees a request.
	other := newRecordingCanary(t, "127.0.0.1:0", nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "site.navigate", Arguments: map[string]any{"url": other.url + "/admin"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || !strings.Contains(text, "grants it only at the ports it lists") {
		t.Errorf("navigate to another port of the site's address was not refused for its port:\n%s", text)
	}
	if seen := other.all(); len(seen) != 0 {
		t.Errorf("the server on another port of the site's address saw %q", seen)
	}
}
