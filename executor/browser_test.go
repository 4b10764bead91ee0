package executor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/testkit"
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

// TestSessionsOpenTheirContextsAtOnce: sessions of one browser open their
// browser contexts, tabs and guards at the same time (as many as
// openingsAtOnce), and each is guarded all the same. That many sessions
// are held at the start of their openings until all have got there (with
// the browser's lock held through an opening, as it once was, only one
// ever gets there, and the test fails at its deadline); then they open
// together, and each navigates to a page whose script asks a canary on a
// loopback address the scope leaves out (127.0.0.2): the canary must see
// no request from any of them.
func TestSessionsOpenTheirContextsAtOnce(t *testing.T) {
	t.Parallel()
	const sessions = openingsAtOnce
	var canaryHits atomic.Int64
	canary := serveOn(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
	}))
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>here</title><img src="%[1]s/img"><script>fetch("%[1]s/fetch").catch(() => {})</script>`, canary)
	}) + "/"
	m := testkit.Manifest(t, "[tool]\nname = \"together\"\n[browser]\n[browser.scope]\nallowed_domains = [\"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]\n[browser.commands.navigate]\n")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	e.mu.Lock()
	b := e.backendLocked(m)
	e.mu.Unlock()
	arrived, release := make(chan struct{}, sessions), make(chan struct{})
	var releaseOnce sync.Once
	let := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(let) // before e.Close (cleanups run last first): no opening stays held
	b.sessionOpening = func() {
		arrived <- struct{}{}
		<-release
	}
	cmd := m.Command("navigate")
	args, err := cmd.Validate(map[string]any{"url": site})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan string, sessions)
	for i := range sessions {
		go func() {
			id := fmt.Sprintf("s%d", i)
			r := e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: id, Args: args, Progress: func(string) {}})
			if r.IsError || !strings.Contains(r.Text, `title="here"`) {
				results <- fmt.Sprintf("navigate in session %s: %s", id, r.Text)
				return
			}
			results <- ""
		}()
	}
	deadline := time.After(time.Minute)
	for n := 0; n < sessions; n++ {
		select {
		case <-arrived:
		case failed := <-results:
			t.Fatalf("a session's navigate ended before all %d had begun to open: %s", sessions, failed)
		case <-deadline:
			t.Fatalf("only %d of %d sessions began to open their browser contexts: the openings wait for each other", n, sessions)
		}
	}
	let()
	for range sessions {
		if failed := <-results; failed != "" {
			t.Error(failed)
		}
	}
	if n := canaryHits.Load(); n != 0 {
		t.Errorf("the canary on 127.0.0.2, outside the scope, got %d requests from sessions that opened together, want 0", n)
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
		return names(des)
	}
	profiles, _ := filepath.Glob(filepath.Join(tmp, "browsergate-chromium-*"))
	if len(profiles) != 1 {
		t.Fatalf("the browser's profiles in the temporary directory: %v, want one", profiles)
	}
	e.Close()
	// Once Close has returned, no process of the browser is left (Chromium
	// rewrites its helpers' command lines: stopLeftovers must know them
	// still), and nothing is left in the temporary directory: a helper
	// left running (the network service) wrote its state into the removed
	// profile as it went, in 2 and 3 of 12 stops measured.
	if pids := processesNaming(profiles[0]); len(pids) > 0 {
		t.Errorf("processes of the stopped browser still run: %v", pids)
	}
	if left := entries(); len(left) > 0 {
		t.Fatalf("left in the temporary directory after the browser stopped: %v", left)
	}
}

// TestNamesDir: a command line names a profile directory as a switch's
// value or its start, with NULs between the arguments or spaces (as
// Chromium rewrites its helpers' command lines); a longer name that starts
// the same is another directory, and a mention that is no switch's value is
// none.
func TestNamesDir(t *testing.T) {
	const dir = "/tmp/my dir/browsergate-chromium-42"
	for _, tc := range []struct {
		cmdline string
		want    bool
	}{
		{"/usr/lib/chromium/chromium\x00--headless\x00--user-data-dir=" + dir + "\x00about:blank\x00", true},
		{"/usr/lib/chromium/chromium --type=utility --user-data-dir=" + dir + " --lang=en-US", true},
		{"/usr/lib/chromium/chromium --type=renderer --user-data-dir=" + dir, true},
		{"chrome_crashpad_handler --database=" + dir + "/Crash Reports --url=", true},
		{"/usr/lib/chromium/chromium --user-data-dir=" + dir + "-2 --type=zygote", false},
		{"/usr/lib/chromium/chromium --a=" + dir + "-2 --user-data-dir=" + dir, true}, // after a longer name
		{"/usr/lib/chromium/chromium\x00--user-data-dir=" + dir + "0\x00", false},
		{"ls\x00" + dir + "\x00", false},
		{"", false},
	} {
		if got := namesDir(tc.cmdline, dir); got != tc.want {
			t.Errorf("namesDir(%q) = %v, want %v", tc.cmdline, got, tc.want)
		}
	}
}

// TestStopLeftoversKillsOnlyItsBrowsersProcesses: the processes whose
// command line names the profile are killed, and a process of another
// profile (a longer path with the same beginning) is left running.
func TestStopLeftoversKillsOnlyItsBrowsersProcesses(t *testing.T) {
	dir := t.TempDir()
	mine, other := filepath.Join(dir, "profile"), filepath.Join(dir, "profile-2")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh here:", err)
	}
	loop := []string{"-c", "while :; do sleep 0.05; done"}
	// As the kernel keeps a command line (NULs between the arguments),
	// and as Chromium rewrites its helpers' (one string, spaces between).
	asGiven := func(profile string) []string {
		return append([]string{"sh"}, append(loop, "sh", "--user-data-dir="+profile)...)
	}
	rewritten := func(profile string) []string {
		return append([]string{"/usr/lib/chromium/chromium --type=utility --user-data-dir=" + profile + " --lang=en-US"}, loop...)
	}
	run := func(args []string) *exec.Cmd {
		cmd := &exec.Cmd{Path: sh, Args: args}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	targets := []*exec.Cmd{run(asGiven(mine)), run(rewritten(mine))}
	others := []*exec.Cmd{run(asGiven(other)), run(rewritten(other))}
	othersExited := make(chan error, len(others))
	for _, o := range others {
		defer o.Process.Kill()
		go func() { othersExited <- o.Wait() }()
	}
	exited := make(chan error, len(targets))
	for _, c := range targets {
		go func() { exited <- c.Wait() }()
	}
	stopLeftovers(mine)
	for range targets {
		select {
		case err := <-exited:
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Errorf("a process of the profile ended with %v, want killed", err)
			}
		case <-time.After(10 * time.Second):
			for _, c := range targets {
				c.Process.Kill()
			}
			t.Fatal("a process of the profile is still running")
		}
	}
	// (Waited for, not merely signalled: a killed child stays a zombie,
	// which a signal 0 still reaches.)
	select {
	case err := <-othersExited:
		t.Errorf("a process of the other profile was stopped too: %v", err)
	default:
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
