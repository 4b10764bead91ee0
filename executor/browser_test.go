package executor

import (
	"context"
	"maps"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/overlay"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/examples/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestLaunchedBrowserOutlivesItsSessions: a launched browser opens no
// window of its own (--no-startup-window: the sessions' tabs are its only
// ones), so once the last session has ended it has no tab at all. It must
// keep running, with nothing open, and the next session must get its tab
// on that same browser, not on a new one; and a browser that dies must
// still be noticed, with no tab of its own to lose.
func TestLaunchedBrowserOutlivesItsSessions(t *testing.T) {
	t.Parallel()
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<title>here</title>"))
	}) + "/"

	m := testkit.Manifest(t, "[tool]\nname = \"alone\"\n[browser]\n[browser.scope]\nallowed_domains = [\"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]\n[browser.commands.navigate]\n")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
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

// TestTabsTakeMouseMovesUnbuffered: every tab a session acts in (its
// first, one it opens) and every out-of-process frame it reaches into
// has DevTools' overlay enabled on the session's own connection to it,
// which makes the renderer hand mouse moves to the page at once instead
// of with its next frame (unbufferInput). The overlay refuses to draw on
// a connection that has not enabled it: a highlight drawn and hidden
// again on each connection shows that it is. What it is for, a click
// that no longer waits for a frame, is a matter of speed, measured by
// BenchmarkClickPointer, not asserted here.
func TestTabsTakeMouseMovesUnbuffered(t *testing.T) {
	t.Parallel()
	// 127.0.0.3 is another site than 127.0.0.1: its frame gets a process
	// of its own.
	ln, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<title>there</title><button>Press there</button>"))
	})}
	go other.Serve(ln)
	t.Cleanup(func() { other.Close() })
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>here</title><button>Go</button><iframe src="http://` + ln.Addr().String() + `/"></iframe>`))
	}) + "/"
	m := testkit.Manifest(t, "[tool]\nname = \"tabs\"\n[browser]\n[browser.scope]\nallowed_domains = [\"127.0.0.1\", \"127.0.0.3\"]\nallow_private_cidrs = [\"127.0.0.1/32\", \"127.0.0.3/32\"]\n[browser.commands.navigate]\n[browser.commands.snapshot]\n[browser.commands.new_tab]\n")
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	call := func(command string, args map[string]any) string {
		t.Helper()
		cmd := m.Command(command)
		valid, err := cmd.Validate(args)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: "s", Args: valid, Progress: func(string) {}})
		if r.IsError {
			t.Fatalf("%s: %s", command, r.Text)
		}
		return r.Text
	}
	session := func() *session {
		t.Helper()
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, s := range e.sessions {
			return s
		}
		t.Fatal("no session")
		return nil
	}
	overlayOn := func(what string, conn context.Context) {
		t.Helper()
		ctx, cancel := context.WithTimeout(conn, 10*time.Second)
		defer cancel()
		if _, err := chromedp.Call(ctx, overlay.HighlightRect, overlay.HighlightRectParams{X: 0, Y: 0, Width: 1, Height: 1}); err != nil {
			t.Fatalf("%s: the overlay is not enabled on the session's connection: %v", what, err)
		}
		if _, err := chromedp.Call(ctx, overlay.HideHighlight, cdp.Empty{}); err != nil {
			t.Fatalf("%s: hide the highlight: %v", what, err)
		}
	}
	call("navigate", map[string]any{"url": site})
	if snap := call("snapshot", nil); !strings.Contains(snap, "Press there") {
		t.Fatalf("the other site's frame is not in the snapshot:\n%s", snap)
	}
	// The connections, taken while the session is idle; the checks run
	// without its lock, so that a failed one cannot leave it held.
	conns := func() (context.Context, map[target.ID]frameConn) {
		s := session()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.tab.frames.mu.Lock()
		defer s.tab.frames.mu.Unlock()
		return s.tab.ctx, maps.Clone(s.tab.frames.conns)
	}
	tab, frames := conns()
	overlayOn("the session's first tab", tab)
	if len(frames) != 1 {
		t.Fatalf("the snapshot reached %d out-of-process frames, want 1", len(frames))
	}
	for id, c := range frames {
		overlayOn("the out-of-process frame "+string(id), c.ctx)
	}
	call("new_tab", map[string]any{"url": site})
	tab, _ = conns()
	overlayOn("a tab the session opened", tab)
}
