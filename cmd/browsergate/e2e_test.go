package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/internal/testkit"
)

// binary is the browsergate binary TestMain builds; every end-to-end test
// talks to it as a real MCP client would.
var binary string

func TestMain(m *testing.M) {
	if b := os.Getenv(netnsBinaryEnv); b != "" {
		// A test run again inside a network namespace (inNetns) uses the
		// binary its first run built: no build, no network.
		binary = b
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "browsergate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "browsergate")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build browsergate:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoPath is a path from the repository root.
func repoPath(p string) string { return filepath.Join("..", "..", p) }

// e2eManifest is the test manifest: the demo site on 127.0.0.1 is in scope,
// everything else is not.
const e2eManifest = `
[tool]
name = "e2e"
mode = "browser"
description = "end-to-end test browser"
timeout_seconds = 30

[browser]
connect = %q
%s
startup_timeout_seconds = 30
max_interactions = 100000

[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.wait_for]
[browser.commands.execute_js]
risk_tier = "critical"
[browser.commands.scroll]
[browser.commands.list_tabs]
[browser.commands.switch_tab]
[browser.commands.new_tab]
[browser.commands.close_tab]
`

type fixture struct {
	net      *demosite.NetCanary // the canary, counting connections too
	xsite    string              // a second allowed site, on 127.0.0.3, with the attack pages
	pid      int                 // browsergate serve
	site     *demosite.Site
	siteURL  string
	canary   *demosite.Canary
	canaryTo string
	evidence string
	manifest string      // the manifest file serve was started with
	stderr   *syncBuffer // serve's log
	cs       *mcp.ClientSession
}

// syncBuffer is a bytes.Buffer safe to write from the child's stderr copy
// while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start serves the demo site and the canary, writes the manifest and
// starts `browsergate serve` over stdio with the MCP SDK client.
func start(t testing.TB, connect, endpoint string) *fixture {
	t.Helper()
	live := ""
	if endpoint != "" {
		live = fmt.Sprintf("live_endpoint = %q", endpoint)
	}
	return startWith(t, fmt.Sprintf(e2eManifest, connect, live))
}

// startWith is start with a manifest body of the test's own and extra
// arguments for serve.
func startWith(t testing.TB, manifestBody string, serveArgs ...string) *fixture {
	t.Helper()
	return startClient(t, manifestBody, nil, serveArgs...)
}

// startClient is startWith with options for the MCP client (an elicitation
// or progress handler).
func startClient(t testing.TB, manifestBody string, opts *mcp.ClientOptions, serveArgs ...string) *fixture {
	t.Helper()
	return startClientEnv(t, manifestBody, opts, nil, serveArgs...)
}

// startClientEnv is startClient with variables added to serve's
// environment (TMPDIR, say, for the session's own file directories).
func startClientEnv(t testing.TB, manifestBody string, opts *mcp.ClientOptions, env []string, serveArgs ...string) *fixture {
	t.Helper()
	nc, canaryURL, stop, err := demosite.ListenCanary("127.0.0.2:0")
	if err != nil {
		t.Fatalf("canary on 127.0.0.2: %v", err)
	}
	t.Cleanup(stop)
	f := &fixture{canary: &nc.Canary, canaryTo: canaryURL, net: nc}
	f.site = demosite.New(demosite.Options{ForbiddenURL: canaryURL + "/"})
	f.xsite, stop, err = serveOn("127.0.0.3:0", demosite.NewAttackSite(f.site, &demosite.Attacks{Canary: canaryURL}))
	if err != nil {
		t.Fatalf("second site on 127.0.0.3: %v", err)
	}
	t.Cleanup(stop)
	f.siteURL, stop, err = serveOn("127.0.0.1:0", demosite.NewAttackSite(f.site, &demosite.Attacks{Canary: canaryURL, CrossSite: f.xsite}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.startServe(t, manifestBody, opts, env, nil, serveArgs...)
	return f
}

// startServe starts browsergate serve on the manifest and connects the
// MCP client to it over stdio; prefix, when given, is the command serve
// runs under (nsenter into a test's network namespace, say).
func (f *fixture) startServe(t testing.TB, manifestBody string, opts *mcp.ClientOptions, env, prefix []string, serveArgs ...string) {
	t.Helper()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "e2e.toml")
	if err := os.WriteFile(manifest, []byte(manifestBody), 0o644); err != nil {
		t.Fatal(err)
	}
	f.manifest = manifest
	f.evidence = filepath.Join(dir, "evidence.db")
	args := append([]string{"serve", "--manifest", manifest, "--policies", repoPath("policies"),
		"--evidence", f.evidence, "--log-level", "warn"}, serveArgs...)
	cmd := exec.Command(binary, args...)
	if len(prefix) > 0 {
		cmd = exec.Command(prefix[0], append(append(prefix[1:], binary), args...)...)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	f.stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "test"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	f.cs, err = client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to browsergate serve: %v\nstderr:\n%s", err, stderr.String())
	}
	f.pid = cmd.Process.Pid
	t.Cleanup(func() {
		f.cs.Close()
		if t.Failed() {
			t.Logf("browsergate stderr:\n%s", stderr.String())
		}
	})
}

// call calls a tool and returns its text and whether it was refused.
func (f *fixture) call(t testing.TB, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res := f.callResult(t, tool, args)
	return resultText(res), res.IsError
}

// callResult calls a tool and returns its whole result.
func (f *fixture) callResult(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func (f *fixture) mustAllow(t testing.TB, tool string, args map[string]any) string {
	t.Helper()
	text, refused := f.call(t, tool, args)
	if refused {
		t.Fatalf("%s %v refused:\n%s", tool, args, text)
	}
	return text
}

func (f *fixture) mustRefuse(t testing.TB, tool string, args map[string]any, wants ...string) string {
	t.Helper()
	text, refused := f.call(t, tool, args)
	if !refused {
		t.Fatalf("%s %v allowed, want a refusal:\n%s", tool, args, text)
	}
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s refusal does not mention %q:\n%s", tool, w, text)
		}
	}
	return text
}

// login drives the demo site's sign-in form through refs from a snapshot.
func (f *fixture) login(t testing.TB) string {
	t.Helper()
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	user, pass, button := findRef(snap, "Username"), findRef(snap, "Password"), findRef(snap, `button "Sign in"`)
	if user == "" || pass == "" || button == "" {
		t.Fatalf("snapshot lacks refs for the login form:\n%s", snap)
	}
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": user, "text": "alice"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": pass, "text": "s3cret"})
	return f.mustAllow(t, "e2e.click", map[string]any{"ref": button})
}

func TestGovernedSessionEndToEnd(t *testing.T) {
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""), "--approval-timeout", "1s")
	ctx := context.Background()

	tools, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"e2e.navigate", "e2e.snapshot", "e2e.click", "e2e.type_text", "e2e.wait_for", "e2e.execute_js", "e2e.scroll"} {
		if byName[want] == nil {
			t.Fatalf("tool %s not listed; have %v", want, byName)
		}
	}
	checkSchema(t, byName["e2e.navigate"], "url", "string", true)
	checkSchema(t, byName["e2e.wait_for"], "timeout_ms", "integer", false)
	checkSchema(t, byName["e2e.scroll"], "direction", "string", false)
	if enum := property(t, byName["e2e.scroll"], "direction")["enum"]; fmt.Sprint(enum) != "[up down]" {
		t.Errorf("scroll.direction enum = %v, want [up down]", enum)
	}
	if ap := byName["e2e.navigate"].InputSchema.(map[string]any)["additionalProperties"]; ap != false {
		t.Errorf("navigate schema additionalProperties = %v, want false", ap)
	}

	// navigate -> snapshot -> type by ref -> click by ref -> the page changed.
	after := f.login(t)
	if !strings.Contains(after, `title="Dashboard"`) || !strings.Contains(after, "is_authenticated=true") {
		t.Fatalf("after the sign-in click the page did not change to the dashboard:\n%s", after)
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "Welcome, alice!") {
		t.Fatalf("dashboard snapshot lacks the welcome text:\n%s", snap)
	}

	// Refusals, each naming its rule and reason.
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}, "DENIED at scope", "127.0.0.2")
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": "http://2130706434/"}, "DENIED at scope")
	// execute_js needs a human's approval; nobody answers, so it is refused.
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"expression": "1+1"}, "DENIED at approval", "execute-js-needs-approval", "nobody approved")
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": "ftp://127.0.0.1/"}, `"url"`, "scheme")
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.siteURL, "extra": 1}, `"extra"`)
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": "e999"}, "e999")
	// A link to the canary is refused before the click happens.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/elsewhere"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	f.mustRefuse(t, "e2e.click", map[string]any{"ref": findRef(snap, "Forbidden site")}, "DENIED at scope", "127.0.0.2")
	f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#forbidden"}, "DENIED at scope")

	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("the canary on 127.0.0.2 saw %d request(s): %v", n, f.canary.Seen())
	}
	calls := 16
	f.cs.Close()

	// The evidence log holds every call, allowed or denied, and verifies.
	out, err := exec.Command(binary, "evidence", "verify", "--evidence", f.evidence).CombinedOutput()
	if err != nil {
		t.Fatalf("evidence verify on an untouched log: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d record(s)", calls)) {
		t.Errorf("verify output does not count %d records:\n%s", calls, out)
	}
	show, err := exec.Command(binary, "evidence", "show", "--evidence", f.evidence).CombinedOutput()
	if err != nil {
		t.Fatalf("evidence show: %v\n%s", err, show)
	}
	for _, want := range []string{"navigate", "execute-js-needs-approval", "type_text"} {
		if !strings.Contains(string(show), want) {
			t.Errorf("evidence show lacks %q:\n%s", want, show)
		}
	}

	// Alter one stored record: verify must fail and name it.
	session, seq := tamperOneRecord(t, f.evidence)
	out, err = exec.Command(binary, "evidence", "verify", "--evidence", f.evidence).CombinedOutput()
	if err == nil {
		t.Fatalf("evidence verify passed on an altered log:\n%s", out)
	}
	if !strings.Contains(string(out), session) || !strings.Contains(string(out), fmt.Sprint(seq)) {
		t.Errorf("verify failure does not name session %s record %d:\n%s", session, seq, out)
	}
}

// tamperOneRecord flips the text of the third record of the first session
// and returns which record it altered.
func tamperOneRecord(t *testing.T, path string) (string, uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var session string
	var seq uint64
	err = db.Update(func(tx *bolt.Tx) error {
		sessions := tx.Bucket([]byte("sessions"))
		if sessions == nil {
			return fmt.Errorf("no sessions bucket")
		}
		k, _ := sessions.Cursor().First()
		if k == nil {
			return fmt.Errorf("no session")
		}
		session = string(k)
		b := sessions.Bucket(k)
		c := b.Cursor()
		key, val := c.First()
		key, val = c.Next()
		key, val = c.Next()
		if key == nil {
			return fmt.Errorf("fewer than 3 records")
		}
		for _, x := range key {
			seq = seq<<8 | uint64(x)
		}
		altered := bytes.Replace(val, []byte(`"navigate"`), []byte(`"navigatE"`), 1)
		if bytes.Equal(altered, val) {
			altered = bytes.Replace(val, []byte(`"e2e"`), []byte(`"e2E"`), 1)
		}
		return b.Put(key, altered)
	})
	if err != nil {
		t.Fatal(err)
	}
	return session, seq
}

func property(t *testing.T, tool *mcp.Tool, name string) map[string]any {
	t.Helper()
	schema, _ := tool.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	if p == nil {
		t.Fatalf("%s: no property %q in schema %v", tool.Name, name, schema)
	}
	return p
}

func checkSchema(t *testing.T, tool *mcp.Tool, name, typ string, required bool) {
	t.Helper()
	if got := property(t, tool, name)["type"]; got != typ {
		t.Errorf("%s.%s type = %v, want %s", tool.Name, name, got, typ)
	}
	schema := tool.InputSchema.(map[string]any)
	req := fmt.Sprint(schema["required"])
	if has := strings.Contains(req, name); has != required {
		t.Errorf("%s.%s required = %v, want %v (required: %s)", tool.Name, name, has, required, req)
	}
}

// TestLiveAttach starts Chromium with a DevTools port, as a user's own
// Chrome would run, and lets browsergate attach to it and drive it.
func TestLiveAttach(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(port int, userDir string) string
	}{
		{"http endpoint", func(port int, _ string) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }},
		{"websocket endpoint", func(port int, userDir string) string {
			portFile, err := os.ReadFile(filepath.Join(userDir, "DevToolsActivePort"))
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("ws://127.0.0.1:%d%s", port, strings.TrimSpace(strings.Split(string(portFile), "\n")[1]))
		}},
		{"DevToolsActivePort file", func(_ int, userDir string) string { return filepath.Join(userDir, "DevToolsActivePort") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A browser of its own: live sessions work in the user's
			// context, so a sign-in of one case would carry to the next.
			port, userDir := startChromium(t)
			f := start(t, "live", tc.endpoint(port, userDir))
			after := f.login(t)
			if !strings.Contains(after, `title="Dashboard"`) {
				t.Fatalf("live session did not reach the dashboard:\n%s", after)
			}
			f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}, "DENIED at scope")
			// The session's own target guard intercepts the page's requests
			// (not only the egress proxy).
			if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/attack/img"}); !strings.Contains(out, "interception)") {
				t.Fatalf("live session: the page's request to the canary was not reported as intercepted:\n%s", out)
			}
			if n := f.canary.Hits(); n != 0 {
				t.Fatalf("canary saw %d request(s)", n)
			}
		})
	}
}

// TestLiveWorksInTheUsersSignIn: with connect = "live" a session works
// in the user's own browser context. The user signs in to a site in their
// browser (an HttpOnly session cookie); the agent's session then sees the
// site signed in, with nothing typed. With context = "isolated" the
// session's fresh context is signed out.
func TestLiveWorksInTheUsersSignIn(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(t, "live", endpoint)
	// The user signs in, in their own browser.
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	defer cancelAlloc()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	for _, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(f.siteURL + "/login"),
		chromedp.SendKeys(`input[name="username"]`, "alice"),
		chromedp.SendKeys(`input[name="password"]`, "s3cret"),
		chromedp.Submit(`input[name="password"]`),
		chromedp.WaitVisible(`h1`),
	} {
		if err := chromedp.Do(user, step); err != nil {
			t.Fatalf("the user's sign-in: %v", err)
		}
	}
	out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/dashboard"})
	if !strings.Contains(out, `title="Dashboard"`) {
		t.Fatalf("the live session does not see the user's sign-in:\n%s", out)
	}
	if snap := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(snap, "Welcome, alice!") {
		t.Errorf("the dashboard does not greet the signed-in user:\n%s", snap)
	}
	// The user has another tab open, on a site outside the scope: the
	// listing shows the user's dashboard tab (in scope) and the session's
	// tab, and only counts the others (this one and the blank tab the
	// browser started with).
	elsewhere, _ := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/private": `<title>Private mail</title>secret`})
	other, cancelOther := chromedp.NewContext(user)
	defer cancelOther()
	if err := chromedp.Do(other, chromedp.Navigate(elsewhere+"/private")); err != nil {
		t.Fatalf("the user's other tab: %v", err)
	}
	res := f.callResult(t, "e2e.list_tabs", nil)
	listing := resultText(res)
	if res.IsError || !strings.Contains(listing, "[user]") || !strings.Contains(listing, f.siteURL+"/dashboard") ||
		!strings.Contains(listing, "[session]") || !strings.Contains(listing, "2 other tab(s)") {
		t.Errorf("list_tabs does not show the user's in-scope tab and the session's, and count the other:\n%s", listing)
	}
	if strings.Contains(listing, "Private") || strings.Contains(listing, "127.0.0.4") {
		t.Errorf("list_tabs names the user's tab outside the scope:\n%s", listing)
	}
	var st struct {
		Tabs []struct {
			Tab, URL, Owner string
			Active          bool
		} `json:"tabs"`
		Hidden int `json:"hidden_tabs"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &st); err != nil || len(st.Tabs) != 2 || st.Hidden != 2 {
		t.Errorf("structured tabs = %s (%v)", raw, err)
	}
	for _, tb := range st.Tabs {
		if (tb.Owner == "session") != tb.Active || !strings.HasPrefix(tb.Tab, "t") {
			t.Errorf("structured tab %+v: the session's tab is the active one, ids are t<n>", tb)
		}
	}
	cancelOther()
	// The agent opens a popup; when its session ends, its tab and the
	// popup are closed, and the user's own tab stays.
	site, _ := serveLogged(t, map[string]string{"/opener": `<a id=l href="/popup-page" target=_blank>Open</a>`})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/opener"})
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "#l"})
	pages := func() []string {
		infos, err := chromedp.Targets(user)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, ti := range infos {
			if ti.Type == "page" {
				urls = append(urls, ti.URL)
			}
		}
		return urls
	}
	testkit.Eventually(t, func() string {
		if !slices.ContainsFunc(pages(), func(u string) bool { return strings.HasSuffix(u, "/popup-page") }) {
			return "the popup did not open"
		}
		return ""
	})
	f.cs.Close()
	testkit.Eventually(t, func() string {
		if got := pages(); slices.ContainsFunc(got, func(u string) bool { return strings.HasPrefix(u, site) }) {
			return fmt.Sprintf("after the session the browser still has its pages: %q", got)
		}
		return ""
	})
	if got := pages(); !slices.Contains(got, f.siteURL+"/dashboard") {
		t.Errorf("the user's own tab is gone after the session: %q", got)
	}
	isolated := startWith(t, strings.Replace(fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint)),
		"[browser]\n", "[browser]\ncontext = \"isolated\"\n", 1))
	if out := isolated.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/dashboard"}); strings.Contains(out, `title="Dashboard"`) {
		t.Errorf("an isolated live session sees the user's sign-in:\n%s", out)
	}
}

// startChromium runs a headless Chromium with --remote-debugging-port on a
// free loopback port and returns the port and its user data directory.
func startChromium(t testing.TB) (int, string) {
	t.Helper()
	return testkit.StartChromium(t, testkit.ChromiumFlags()...)
}

// startUsersChromium is startChromium as the README says to start a
// user's browser for live mode in the user's context: "Preload pages" off.
func startUsersChromium(t testing.TB) (int, string) {
	t.Helper()
	return testkit.StartChromiumPreloadingOff(t, testkit.ChromiumFlags()...)
}

// TestLiveUserTabsUntouched: in live mode the session's guard sees every
// new top-level target of the browser, paused at start, and must let the
// user's own ones run untouched. While a session is active the user opens
// a tab (in the default browser context, on a site outside the session's
// scope) and, from it, a popup with a click; both load in full, and the
// session reports none of their requests.
func TestLiveUserTabsUntouched(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	userSite, stop, err := serveOn("127.0.0.4:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = true
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>user</title><img src="/img"><iframe src="/frame"></iframe>`)
		case "/popup":
			fmt.Fprint(w, `<!doctype html><title>popup</title><img src="/popup-img">`)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := start(t, "live", fmt.Sprintf("http://127.0.0.1:%d", port))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"}) // the session and its guard exist

	// The user, on a DevTools connection of their own.
	alloc, cancel := remote.NewAllocator(context.Background(), fmt.Sprintf("http://127.0.0.1:%d", port))
	defer cancel()
	user, cancel := chromedp.NewContext(alloc)
	defer cancel()
	user, cancel = context.WithTimeout(user, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(user, chromedp.Navigate(userSite+"/")); err != nil {
		t.Fatalf("the user's tab: %v", err)
	}
	// A click's worth of user gesture, so the popup blocker lets it open.
	res, err := chromedp.Call(user, runtime.Evaluate, runtime.EvaluateParams{Expression: "window.open('/popup'), true", UserGesture: new(true)})
	if err != nil || res.ExceptionDetails != nil {
		t.Fatalf("the user's popup: %v %+v", err, res.ExceptionDetails)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		all := seen["/"] && seen["/img"] && seen["/frame"] && seen["/popup"] && seen["/popup-img"]
		mu.Unlock()
		if all {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the user's tab and popup did not load in full (saw %v): the session's guard held or blocked them", seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := f.mustAllow(t, "e2e.snapshot", nil); strings.Contains(out, "127.0.0.4") {
		t.Errorf("the session reported a request of the user's tabs:\n%s", out)
	}
}

// liveSessionBesideAUsersTab opens site's /page?before in a tab of the
// user's browser at endpoint, starts a live session there with its tab on
// /page?agent, has it adopt the user's tab when adopt, and returns the
// user's tab and the session.
func liveSessionBesideAUsersTab(t *testing.T, endpoint, site string, adopt bool) (context.Context, *fixture) {
	t.Helper()
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	t.Cleanup(cancelAlloc)
	userTab, cancelUser := chromedp.NewContext(alloc)
	t.Cleanup(cancelUser)
	if err := chromedp.Do(userTab, chromedp.Navigate(site+"/page?before")); err != nil {
		t.Fatal(err)
	}
	f := start(t, "live", endpoint)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page?agent"})
	if adopt {
		f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "user", "/page?before")})
	}
	return userTab, f
}

// TestLiveBrowserSurvivesAKilledDaemon: the user's browser is theirs. A
// daemon killed with SIGKILL in the middle of a live session (its
// DevTools connections drop with it, nothing is cleaned up) leaves no tab
// of the user's paused or intercepted: the tab the user had open loads a
// page afterwards, and so does a tab the user opens afterwards.
func TestLiveBrowserSurvivesAKilledDaemon(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, log := serveLogged(t, map[string]string{"/page": `<title>page</title>`})
	// The session adopts the user's tab, and acts in it.
	userTab, f := liveSessionBesideAUsersTab(t, endpoint, site, true)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page?adopted"})
	if err := syscall.Kill(f.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := log.count("/page")
	load := func(ctx context.Context, what, u string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
			t.Fatalf("%s did not load %s after the daemon was killed: %v", what, u, err)
		}
	}
	load(userTab, "the user's tab the session had adopted", site+"/page?after")
	newTab, cancelNew := chromedp.NewContext(userTab)
	defer cancelNew()
	load(newTab, "a tab the user opened afterwards", site+"/page?new")
	if n := log.count("/page") - before; n != 2 {
		t.Errorf("the site saw %d of the 2 page loads after the daemon was killed", n)
	}
	// Nothing of the session's guard is left on the adopted tab: a site
	// outside the session's scope loads there too.
	elsewhere, elog := serveLoggedOn(t, "127.0.0.4:0", map[string]string{"/else": `<title>else</title>`})
	load(userTab, "the adopted tab, outside the session's scope", elsewhere+"/else")
	if elog.count("/else") != 1 {
		t.Errorf("the site outside the scope saw %d loads from the adopted tab, want 1", elog.count("/else"))
	}
}
