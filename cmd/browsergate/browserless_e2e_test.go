package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// browserlessService is browserless 2 on the lab's pool host, listening
// on the pool host's address, launching Debian's Chromium inside the
// pool host, and asking every client for its token.
type browserlessService struct {
	url   string       // ws://10.77.1.2:3000
	api   string       // http://10.77.1.2:3000
	token string       // its TOKEN
	from  *netlab.Host // the host it is asked from (the daemon's)
	creds string       // a credentials_file with its token, mode 600
}

// startBrowserless starts browserless on r's pool host, with timeout as
// its TIMEOUT (ms; 0: none), and returns once it answers. It skips t when
// browserless (.ci/browserless) is not installed.
func startBrowserless(t testing.TB, r *remoteLab, timeout string) *browserlessService {
	t.Helper()
	if out, err := exec.Command("bash", repoPath(".ci/browserless"), "check").CombinedOutput(); err != nil {
		t.Skipf("browserless is not installed: %s", strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	s := &browserlessService{url: "ws://10.77.1.2:3000", api: "http://10.77.1.2:3000", token: "browserless-token-e2e",
		from: r.d, creds: filepath.Join(dir, "browserless-token")}
	if err := os.WriteFile(s.creds, []byte(s.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The browsers' profiles: a short path, as their singleton sockets'
	// must be (t.TempDir's is too long for one).
	data, err := os.MkdirTemp("", "browserless-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) }) // after browserless has stopped (registered later, run first)
	// TIMEOUT=0: no bound on a connection's life (browserless's default
	// ends every connection, and so every session, after 30 s).
	// CONCURRENT: each session holds three connections (the daemon's
	// holder, chromedp's and its guard's), and a fourth while it is
	// probed. On SIGTERM browserless closes its browsers, which
	// puppeteer starts in process groups of their own; the lab kills
	// whatever is left in the pool host when it ends.
	cmd := r.p.Command(context.Background(), "bash", repoPath(".ci/browserless"), "run")
	cmd.Env = append(os.Environ(), "HOST=10.77.1.2", "PORT=3000", "TOKEN="+s.token, "TIMEOUT="+timeout, "CONCURRENT=16",
		"DATA_DIR="+data, "DEBUG=browserless*,-**:trace,-**:verbose")
	startPoolService(t, cmd, filepath.Join(dir, "browserless.log"), "browserless", func() error {
		_, err := s.held()
		return err
	})
	return s
}

// held are the ids of the browsers browserless runs, as its own API
// (GET /sessions, which lists each browser and its pages) says.
func (s *browserlessService) held() ([]string, error) {
	var sessions []struct{ ID, Type string }
	if err := labGet(s.from, s.api+"/sessions", "Bearer "+s.token, &sessions); err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range sessions {
		if e.Type == "browser" {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

// browserlessFixture starts browserless on a new lab's pool host, with
// timeout as its TIMEOUT, and browsergate serve on the daemon's host with
// a manifest of browserless's tool egress (more [browser] lines in
// browserExtra), the sites and the canary; more are serve's extra
// manifests' bodies, by tool name.
func browserlessFixture(t *testing.T, timeout, browserExtra string, more map[string]string) (*egressFixture, *browserlessService, *remoteLab) {
	t.Helper()
	r := newLabHosts(t)
	s := startBrowserless(t, r, timeout)
	f := remoteFixtureWith(t, r, ownBrowserManifest("browserless", "egress", s.url, s.creds, browserExtra), extraManifests(t, more)...)
	return f, s, r
}

// TestBrowserlessSessionGoesOutOnlyThroughTheGate: a session gets a
// browser of its own from browserless (launched for it, driven through
// browserless's /devtools/browser/{id} with its token) and works through
// the daemon's gate: navigate, snapshot, click. Its pages' requests of
// every kind that stays on the page leave the canary at zero requests
// and connections, though the pool host reaches it straight, and
// browserless itself is refused to them though the scope grants it. A
// browserless where nothing answers, and one that refuses the token,
// refuse the session saying why and leave no browser running; the token
// is in no log line and no reply; the daemon's close lets the session's
// browser go.
func TestBrowserlessSessionGoesOutOnlyThroughTheGate(t *testing.T) {
	t.Parallel()
	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrong, []byte("not-the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, s, _ := browserlessFixture(t, "0", "", map[string]string{
		"nobrowserless": ownBrowserManifest("browserless", "nobrowserless", "ws://10.77.1.2:3001", wrong, ""),
		"badtoken":      ownBrowserManifest("browserless", "badtoken", "ws://10.77.1.2:3000", wrong, ""),
	})

	// browserless's API and the browser's DevTools through it: a page
	// that reached them with the token would drive every browser there.
	first, snap := ownBrowserGoesOutOnlyThroughTheGate(t, f, s, func(browser string) []string {
		return []string{s.api + "/sessions", s.api + "/devtools/browser/" + browser}
	})

	f.mustRefuse(t, "nobrowserless.navigate", map[string]any{"url": f.siteURL + "/docs"}, "ws://10.77.1.2:3001 did not answer", "connection refused")
	refused := f.mustRefuse(t, "badtoken.navigate", map[string]any{"url": f.siteURL + "/docs"}, "ws://10.77.1.2:3000 answered 401 Unauthorized (Bad or missing authentication.)")
	if got := heldNow(t, s); len(got) != 1 || got[0] != first {
		t.Errorf("after the refused sessions browserless runs %v, want only %v", got, first)
	}
	for _, secret := range []string{s.token, "not-the-token"} {
		if strings.Contains(f.stderr.String(), secret) || strings.Contains(refused+snap, secret) {
			t.Errorf("a token of credentials_file (%q) is in serve's log or a reply", secret)
		}
	}

	f.cs.Close() // serve ends, and with it the session
	awaitHeld(t, s, 0, "the daemon closed")
}

// TestBrowserlessSessionEndLetsItsBrowserGo: a session's browserless
// browser goes as soon as the session ends (here: it expires, idle), and
// the next call's new session gets a new browser, told why; the daemon's
// close lets that one go too, and doctor probes a browser browserless
// launches for it and lets it go.
func TestBrowserlessSessionEndLetsItsBrowserGo(t *testing.T) {
	t.Parallel()
	f, s, r := browserlessFixture(t, "0", "idle_timeout_seconds = 3", nil)
	ownBrowserGoesWithItsSession(t, f, s, r, "a browser of browserless at "+s.url+": passed the conformance probe")
}

// TestBrowserlessTimeoutEndsTheSessionAndItsBrowser: browserless's
// TIMEOUT ends each connection to a browser after its time, and leaves
// the browser running; the daemon kills the browser once the connection
// that holds it has ended, the session ends with it (its guard lost its
// connection), and the next call's new session gets a new browser and
// says why.
func TestBrowserlessTimeoutEndsTheSessionAndItsBrowser(t *testing.T) {
	t.Parallel()
	f, s, _ := browserlessFixture(t, "8000", "", nil)
	f.stillWorks(t)
	first := awaitHeld(t, s, 1, "a session's browser")
	awaitHeld(t, s, 0, "browserless's TIMEOUT ended the connections that hold the browser")
	// The session ends once its guard has seen its connection close (a
	// call before that is refused: its page state cannot be read).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(f.stderr.String(), "request guard lost its DevTools connection"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session did not end within 30 s of its browser's")
		}
	}
	nextCallGetsANewBrowser(t, f, s, first[0], "lost its DevTools connection")
}
