package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What the tests of the providers that give each session a browser of
// its own (a Selenium Grid, browserless) share: the service runs on the
// lab's pool host, and its own API says which browsers it holds.

// ownBrowserService is a service on the pool host that gives each
// session a browser of its own.
type ownBrowserService interface {
	// held are the ids of the browsers it holds, as its own API says.
	held() ([]string, error)
}

// awaitHeld waits until s holds n browsers, and returns them. An API
// that fails meanwhile is asked again (browserless answers 500 while a
// browser is closing: it asks each browser for its pages).
func awaitHeld(t *testing.T, s ownBrowserService, n int, why string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids, err := s.held()
		if err == nil && len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the pool's service holds browsers %v (%v), want %d", why, ids, err, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldNow are the browsers s holds now, asked again only while its API
// fails.
func heldNow(t *testing.T, s ownBrowserService) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids, err := s.held()
		if err == nil {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool's service does not say which browsers it holds: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startPoolService starts cmd, a service in the pool host
// (startGroup), and returns once ready says it answers.
func startPoolService(t testing.TB, cmd *exec.Cmd, logPath, what string, ready func() error) {
	t.Helper()
	done := startGroup(t, what, cmd, logPath)
	for deadline := time.Now().Add(90 * time.Second); ready() != nil; {
		select {
		case <-done:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("%s ended: %s", what, data)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within 90 s", what)
		}
	}
}

// startGroup starts cmd (what runs inside a lab host: its Command) in a
// process group of its own with its output in logPath. When t ends the
// group is sent SIGTERM (browserless closes its browsers then), then
// SIGKILL, and the log is shown should t have failed. The channel is
// closed once the program has ended.
func startGroup(t testing.TB, what string, cmd *exec.Cmd, logPath string) <-chan struct{} {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("%s's log:\n%s", what, data)
		}
	})
	return done
}

// ownBrowserGoesOutOnlyThroughTheGate: a session of f's tool egress, on
// a browser of its own from s, navigates, snapshots and clicks through
// the gate; every request path of the egress suite a page makes and stays
// on leaves the canary at zero requests and connections (the redirects
// and the paths that leave the page are the same requests to the gate,
// and each waits out its bound: see TestRemotePoolGoesOutOnlyThroughTheGate
// for them on a pool host); and the service's own URLs, which
// serviceURLs names from the browser s holds, are refused to pages. It
// returns the browser s holds, and the snapshot's text.
func ownBrowserGoesOutOnlyThroughTheGate(t *testing.T, f *egressFixture, s ownBrowserService, serviceURLs func(browser string) []string) (browser, snap string) {
	t.Helper()
	f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/"})
	snap = f.mustAllow(t, "egress.snapshot", nil)
	m := regexp.MustCompile(`\[Docs\]\((e\d+) `).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("the home page's snapshot has no Docs link:\n%s", snap)
	}
	if out := f.mustAllow(t, "egress.click", map[string]any{"ref": m[1]}); !strings.Contains(out, `title="Documentation"`) {
		t.Errorf("the click did not lead to the docs:\n%s", out)
	}
	browser = awaitHeld(t, s, 1, "a session's browser")[0]
	for _, tc := range inPageAttackCases() {
		t.Run(tc.name, func(t *testing.T) { f.runAttack(t, tc) })
	}
	for _, u := range serviceURLs(browser) {
		m := f.mark()
		f.mustRefuse(t, "egress.navigate", map[string]any{"url": u}, "denied network 10.77.1.0/24")
		f.checkCanary(t, m)
	}
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("the canary the pool host reaches saw: %s", f.net)
	}
	return browser, snap
}

// inPageAttackCases are the egress suite's request paths that a page
// makes and stays on: not its redirects, and none that leaves the page.
func inPageAttackCases() []attackCase {
	return slices.DeleteFunc(attackCases(), func(tc attackCase) bool {
		return tc.leaves || strings.HasPrefix(tc.name, "redirect")
	})
}

// ownBrowserGoesWithItsSession: the browser of a session of f's tool
// egress (whose manifest sets idle_timeout_seconds) goes as soon as the
// session expires, the next call's new session gets a new browser from s
// and says why, and the daemon's close lets that one go too; then doctor,
// in r's daemon host, says doctorSays, and leaves no browser on s.
func ownBrowserGoesWithItsSession(t *testing.T, f *egressFixture, s ownBrowserService, r *remoteLab, doctorSays string) {
	t.Helper()
	f.stillWorks(t)
	first := awaitHeld(t, s, 1, "a session's browser")
	awaitHeld(t, s, 0, "the session expired")
	nextCallGetsANewBrowser(t, f, s, first[0], "expired")
	f.cs.Close()
	awaitHeld(t, s, 0, "the daemon closed")

	args := append(r.inside(r.d), binary, "doctor", "--manifest", f.manifest, "--policies", repoPath("policies"), "--gate-listen", "10.77.1.1:8119")
	doctor, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil || !strings.Contains(string(doctor), doctorSays) {
		t.Errorf("doctor: %v\n%s", err, doctor)
	}
	awaitHeld(t, s, 0, "doctor's probe ended")
}

// nextCallGetsANewBrowser: after the session on browser ended, the next
// call starts a new session, whose reply says why (says) and loads the
// docs, on a browser s holds other than browser.
func nextCallGetsANewBrowser(t *testing.T, f *egressFixture, s ownBrowserService, browser, says string) {
	t.Helper()
	out := f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/docs"})
	if !strings.Contains(out, says) || !strings.Contains(out, `title="Documentation"`) {
		t.Errorf("the call after the session ended does not say %q, or did not load the docs:\n%s", says, out)
	}
	if now := awaitHeld(t, s, 1, "the new session's browser"); now[0] == browser {
		t.Errorf("the new session has the ended one's browser %s", browser)
	}
}

// ownBrowserManifest is a manifest of the tool name whose sessions each
// get a browser of their own from provider at url, with the credentials
// in creds; extra adds to [browser].
func ownBrowserManifest(provider, name, url, creds, extra string) string {
	return labManifest(name, "a browser of its own from "+provider, extra,
		fmt.Sprintf("provider = %q\nurl = %q\ncredentials_file = %q", provider, url, creds))
}
