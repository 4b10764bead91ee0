package executor

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// newNavigator is an executor of a manifest (tool name) that may navigate
// on 127.0.0.1 only, and the URL of a page there titled "here". The caller
// closes the executor.
func newNavigator(t *testing.T, name string) (*Executor, *toolclad.Manifest, string) {
	t.Helper()
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<title>here</title>"))
	}) + "/"
	m := testkit.Manifest(t, "[tool]\nname = \""+name+"\"\n[browser]\n[browser.scope]\nallowed_domains = [\"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]\n[browser.commands.navigate]\n")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	return e, m, site
}

// TestLaunchedBrowserOutlivesItsSessions: a launched browser opens no
// window of its own (--no-startup-window: the sessions' tabs are its only
// ones), so once the last session has ended it has no tab at all. It must
// keep running, with nothing open, and the next session must get its tab
// on that same browser, not on a new one; and a browser that dies must
// still be noticed, with no tab of its own to lose.
func TestLaunchedBrowserOutlivesItsSessions(t *testing.T) {
	t.Parallel()
	e, m, site := newNavigator(t, "alone")
	t.Cleanup(e.Close)
	cmd := m.Command("navigate")
	navigate := func(session string) {
		t.Helper()
		args, err := cmd.Validate(map[string]any{"url": site})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: session, Args: args, Progress: func(string) {}}); r.IsError || !strings.Contains(r.Text, `title="here"`) {
			t.Fatalf("navigate in session %s: %+v", session, r)
		}
	}
	e.mu.Lock()
	b := e.backendLocked(m)
	e.mu.Unlock()
	pages := func() int {
		b.mu.Lock()
		root := b.root
		b.mu.Unlock()
		// root's first call, which binds the browser to it, is long made:
		// this one may carry a deadline.
		ctx, cancel := context.WithTimeout(root, 10*time.Second)
		defer cancel()
		infos, err := chromedp.CallBrowser(ctx, target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			t.Fatalf("list the browser's targets: %v", err)
		}
		n := 0
		for _, i := range infos.TargetInfos {
			if i.Type == "page" {
				n++
			}
		}
		return n
	}
	browserPID := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		c := chromedp.FromContext(b.root)
		if c == nil || c.Browser == nil || c.Browser.Process() == nil {
			t.Fatal("no launched browser process")
		}
		return c.Browser.Process().Pid
	}

	navigate("first")
	b.mu.Lock()
	rootTab := chromedp.FromContext(b.root).Target
	b.mu.Unlock()
	if rootTab != nil {
		t.Fatalf("the browser's own context is attached to a tab (%s)", rootTab.TargetID)
	}
	if n := pages(); n != 1 {
		t.Fatalf("the browser has %d tabs with one session, want 1 (no window of its own)", n)
	}
	pid := browserPID()
	e.EndSession("first")
	testkit.Eventually(t, func() string {
		if n := pages(); n != 0 {
			return "the ended session's tab is still open"
		}
		return ""
	})
	// Give a browser that would quit with its last window the time to.
	time.Sleep(time.Second)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the browser stopped once its last session ended: %v", err)
	}
	navigate("second")
	if got := browserPID(); got != pid {
		t.Fatalf("the next session's tab is on a new browser (pid %d, was %d)", got, pid)
	}
	// A browser that dies is still noticed (its DevTools connection is
	// lost with no tab attached), and the next new session launches
	// another.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() string {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.root.Err() == nil {
			return "the killed browser's context is still live"
		}
		return ""
	})
	navigate("third")
	if got := browserPID(); got == pid {
		t.Fatal("the session after the browser died reports the dead browser")
	}
}

// TestLaunchedBrowserLeavesNothingInTmp: once a launched browser is
// stopped, nothing of it is left in the daemon's temporary directory: not
// its profile, and not the directory of Chromium's singleton socket
// (org.chromium.Chromium.*), which Chromium removes only when it quits by
// itself. A daemon that launches and stops browsers all day does not fill
// its temporary directory.
func TestLaunchedBrowserLeavesNothingInTmp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e, m, site := newNavigator(t, "tmp")
	cmd := m.Command("navigate")
	args, err := cmd.Validate(map[string]any{"url": site})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: "s", Args: args, Progress: func(string) {}}); r.IsError {
		t.Fatalf("navigate: %+v", r)
	}
	entries := func() []string {
		des, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range des {
			names = append(names, d.Name())
		}
		return names
	}
	e.Close()
	// Once Close has returned: every process of the browser was stopped
	// before its profile was removed (stopLeftovers), so none writes into
	// it again (without that, one stop in six left the network service's
	// state behind).
	if left := entries(); len(left) > 0 {
		t.Fatalf("left in the temporary directory after the browser stopped: %v", left)
	}
}

// TestStopLeftoversKillsOnlyItsBrowsersProcesses: the processes whose
// command line names the profile are killed, and a process of another
// profile (a longer path with the same beginning) is left running.
func TestStopLeftoversKillsOnlyItsBrowsersProcesses(t *testing.T) {
	dir := t.TempDir()
	mine, other := filepath.Join(dir, "profile"), filepath.Join(dir, "profile-2")
	run := func(profile string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "while :; do sleep 0.05; done", "sh", "--user-data-dir="+profile)
		if err := cmd.Start(); err != nil {
			t.Skip("no sh here:", err)
		}
		return cmd
	}
	a, b := run(mine), run(other)
	defer b.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- a.Wait() }()
	stopLeftovers(mine)
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the profile's process ended with %v, want killed", err)
		}
	case <-time.After(10 * time.Second):
		a.Process.Kill()
		t.Fatal("the profile's process is still running")
	}
	if err := b.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other profile's process was stopped too: %v", err)
	}
}

// TestSingletonDirTakesOnlyItsOwn: the directory removed with a profile
// is only ever one of Chromium's singleton directories right in the
// temporary directory, whatever the profile's SingletonSocket link says.
func TestSingletonDirTakesOnlyItsOwn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	profile := filepath.Join(tmp, "profile")
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(profile)
	own := mk(filepath.Join(tmp, "org.chromium.Chromium.abc123"))
	elsewhere := mk(filepath.Join(tmp, "deeper", "org.chromium.Chromium.abc123"))
	other := mk(filepath.Join(tmp, "important"))
	if err := os.WriteFile(filepath.Join(tmp, "com.google.Chrome.file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ link, want string }{
		{filepath.Join(own, "SingletonSocket"), own},
		{filepath.Join(elsewhere, "SingletonSocket"), ""},
		{filepath.Join(other, "SingletonSocket"), ""},
		{filepath.Join(tmp, "com.google.Chrome.file", "SingletonSocket"), ""},
		{"org.chromium.Chromium.abc123/SingletonSocket", ""}, // relative
		{filepath.Join(own, "..", "important", "SingletonSocket"), ""},
	} {
		link := filepath.Join(profile, "SingletonSocket")
		_ = os.Remove(link)
		if err := os.Symlink(tc.link, link); err != nil {
			t.Fatal(err)
		}
		if got := singletonDir(profile); got != tc.want {
			t.Errorf("SingletonSocket -> %s: singletonDir %q, want %q", tc.link, got, tc.want)
		}
	}
}
