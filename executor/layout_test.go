package executor

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestDefaultLaunchKeepsSiteIsolation: the browser a manifest without
// executable_path launches, with the daemon's switches, runs a frame of
// another site in a process of its own, a target of its own: site
// isolation is the boundary between a page and the frames in it, and no
// process layout is chosen that gives it up.
func TestDefaultLaunchKeepsSiteIsolation(t *testing.T) {
	t.Parallel()
	other := serveOn(t, "127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>framed</title><p>another site")
	}))
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>holder</title><iframe src="%s/framed"></iframe>`, other)
	})
	dir := t.TempDir()
	m, err := toolclad.Load(testkit.WriteFile(t, dir, "m.toml", `[tool]
name = "isolation"
[browser]
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`))
	if err != nil {
		t.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rig := &benchRig{url: site + "/", m: m, store: store, b: t}
	e := rig.newExecutor()
	defer e.Close()
	rig.call(t, e, "s", "navigate", map[string]any{"url": rig.url})
	if snap := e.Run(context.Background(), snapshotCall(t, m, "s")); snap.IsError || !strings.Contains(snap.Text, "another site") {
		t.Fatalf("the snapshot does not show the other site's frame:\n%s", snap.Text)
	}
	s, err := e.session(&toolclad.Call{SessionID: "s", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	targets, err := chromedp.Targets(s.tab.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range targets {
		if ti.Type == "iframe" && strings.HasPrefix(ti.URL, other+"/") {
			return
		}
	}
	var seen []string
	for _, ti := range targets {
		seen = append(seen, ti.Type+" "+ti.URL)
	}
	t.Fatalf("no out-of-process frame for %s/framed among the browser's targets: %v", other, seen)
}

// snapshotCall is a call of the manifest's snapshot command in session.
func snapshotCall(t *testing.T, m *toolclad.Manifest, session string) *toolclad.Call {
	t.Helper()
	cmd := m.Command("snapshot")
	args, err := cmd.Validate(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	return &toolclad.Call{SessionID: session, Manifest: m, Command: cmd, Tool: m.Tool.Name + ".snapshot", Args: args, RawArgs: map[string]any{}}
}
