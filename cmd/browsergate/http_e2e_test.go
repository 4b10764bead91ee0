package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/browsergate/browsergate/cedar"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit/netlab"
	"github.com/browsergate/browsergate/toolclad"
)

// httpDaemon is `browsergate serve --http` running, with the URL it
// listens on.
type httpDaemon struct {
	url      string
	evidence string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	// dialer reaches url (nil: from this process's own network); a
	// daemon in a lab host is reached from inside that host.
	dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// testAgents is the agents file of the HTTP tests: alice in research,
// bob in readers; their tokens are the agents' names with "-token".
var testAgents = `
[agents.alice]
token_sha256 = "` + toolclad.TokenHash("alice-token") + `"
groups = ["research"]

[agents.bob]
token_sha256 = "` + toolclad.TokenHash("bob-token") + `"
groups = ["readers"]
`

// startHTTP writes the manifest, the agents file and a policy directory
// (the shipped one plus extra, a policy file's text) and starts serve over
// HTTP on a port of 127.0.0.1 the system chooses.
func startHTTP(t testing.TB, manifest, extra string, args ...string) *httpDaemon {
	t.Helper()
	return startHTTPIn(t, nil, manifest, extra, args...)
}

// startHTTPIn is startHTTP with serve run inside a lab host (nil: here):
// it listens on that host's 127.0.0.1, and its clients dial from inside
// the host.
func startHTTPIn(t testing.TB, h *netlab.Host, manifest, extra string, args ...string) *httpDaemon {
	t.Helper()
	return launchHTTP(t, h, nil, manifest, extra, args...)
}

// launchHTTP is startHTTPIn with more environment variables (NAME=VALUE)
// for serve.
func launchHTTP(t testing.TB, h *netlab.Host, env []string, manifest, extra string, args ...string) *httpDaemon {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	policies := shippedPoliciesWith(t, dir, extra)
	d := &httpDaemon{evidence: filepath.Join(dir, "evidence.db"), stderr: &syncBuffer{}}
	serveArgs := append([]string{"serve", "--manifest", write("m.toml", manifest), "--policies", policies,
		"--evidence", d.evidence, "--log-level", "warn", "--http", "127.0.0.1:0", "--agents", write("agents.toml", testAgents)}, args...)
	d.cmd = exec.Command(binary, serveArgs...)
	if h != nil {
		d.cmd = h.Command(context.Background(), binary, serveArgs...)
		d.dialer = h.Dial
	}
	if env != nil {
		d.cmd.Env = append(os.Environ(), env...)
	}
	pr, pw := io.Pipe()
	d.cmd.Stderr = io.MultiWriter(d.stderr, pw)
	startUntilCleanup(t, d.cmd, "browsergate stderr", d.stderr)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "browsergate: listening on "); ok {
				found <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case d.url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve --http did not say where it listens:\n%s", d.stderr.String())
	}
	return d
}

// stop ends the daemon as an operator would (SIGTERM) and waits for it.
func (d *httpDaemon) stop(t testing.TB) {
	t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not end after SIGTERM")
	}
}

// bearerTransport adds an agent's token to every request, sent by base
// (nil: http.DefaultTransport).
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.base != nil {
		return b.base.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over HTTP with the official client, as the
// agent whose token this is.
func (d *httpDaemon) connect(t testing.TB, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := d.dial(token)
	if err != nil {
		t.Fatalf("connect with token %q: %v", token, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (d *httpDaemon) dial(token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "test"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := bearerTransport{token: token}
	if d.dialer != nil {
		tr.base = &http.Transport{DialContext: d.dialer}
	}
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: d.url + "/mcp", HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1,
	}, nil)
}

// raw sends one request to the daemon as a client of its own making
// would, and returns the status, a header and the body.
func (d *httpDaemon) raw(t *testing.T, method, path string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func callText(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resultText(res), res.IsError
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// TestHTTPFront: over HTTP, /healthz answers anyone and says nothing; /mcp
// refuses a request without a token or with a wrong one (401, with
// WWW-Authenticate: Bearer), one a web page of another origin sends (403)
// and one addressed to another name (DNS rebinding; 421), and admits the
// agents of the agents file. No session is made for a refused request.
func TestHTTPFront(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--allowed-origin", "http://app.example:8443")
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range json {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	if code, _, body := d.raw(t, "GET", "/healthz", nil, ""); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", with(nil), http.StatusUnauthorized},
		{"wrong token", with(map[string]string{"Authorization": "Bearer carol-token"}), http.StatusUnauthorized},
		{"the hash as token", with(map[string]string{"Authorization": "Bearer " + toolclad.TokenHash("alice-token")}), http.StatusUnauthorized},
		{"not bearer", with(map[string]string{"Authorization": "Basic YWxpY2U6YWxpY2UtdG9rZW4="}), http.StatusUnauthorized},
		{"foreign origin", with(map[string]string{"Authorization": "Bearer alice-token", "Origin": "http://evil.example"}), http.StatusForbidden},
		{"foreign host", with(map[string]string{"Authorization": "Bearer alice-token", "Host": "evil.example:80"}), http.StatusMisdirectedRequest},
	} {
		code, h, body := d.raw(t, "POST", "/mcp", c.header, initializeBody)
		if code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.want, body)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate = %q", c.name, h.Get("WWW-Authenticate"))
		}
		if h.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: a session was opened", c.name)
		}
	}
	// An allowed origin's page may call: its preflight is answered
	// without a token, and the answer names it.
	code, h, _ := d.raw(t, "OPTIONS", "/mcp", map[string]string{"Origin": "http://app.example:8443",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}, "")
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://app.example:8443" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("the allowed origin's preflight: %d %v", code, h)
	}
	// The daemon's own origin, and a request without one, are admitted.
	code, h, body := d.raw(t, "POST", "/mcp", with(map[string]string{"Authorization": "Bearer alice-token", "Origin": d.url}), initializeBody)
	if code != 200 || h.Get("Mcp-Session-Id") == "" {
		t.Errorf("alice from the daemon's own origin: %d %s", code, body)
	}
	// Without --replica, the SDK's own session ids: no replica's name.
	if id := h.Get("Mcp-Session-Id"); strings.Contains(id, "-") || len(id) != 26 {
		t.Errorf("session id %q, want the SDK's 26 characters", id)
	}
	cs := d.connect(t, "bob-token")
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("list tools over HTTP: %v", err)
	}
}

// TestHTTPAgentsArePrincipals: each agent is its own Cedar principal, in
// its groups: a policy that forbids the readers group to type refuses
// bob and not alice; the evidence names each call's agent. One agent
// cannot use another's MCP session, and past its session limit an agent
// gets a clear refusal and no session.
func TestHTTPAgentsArePrincipals(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), `
@id("readers-do-not-type")
forbid (principal in Web::AgentGroup::"readers", action, resource)
when { resource.command == "type_text" };
`, "--max-sessions-per-agent", "2")
	site, _ := serveLogged(t, map[string]string{"/form": `<title>form</title><input id=q aria-label=Query>`})
	alice, bob := d.connect(t, "alice-token"), d.connect(t, "bob-token")
	for _, cs := range []*mcp.ClientSession{alice, bob} {
		if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/form"}); refused {
			t.Fatalf("navigate: %s", out)
		}
	}
	if out, refused := callText(t, alice, "e2e.type_text", map[string]any{"selector": "#q", "text": "hello"}); refused {
		t.Errorf("alice may type: %s", out)
	}
	if out, refused := callText(t, bob, "e2e.type_text", map[string]any{"selector": "#q", "text": "hello"}); !refused || !strings.Contains(out, "readers-do-not-type") {
		t.Errorf("bob, a reader, typed: %v %s", refused, out)
	}

	// bob with alice's session id: the SDK keeps the session to alice.
	code, _, body := d.raw(t, "POST", "/mcp", map[string]string{
		"Authorization": "Bearer bob-token", "Mcp-Session-Id": alice.ID(),
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
	}, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"e2e.snapshot","arguments":{}}}`)
	if code == 200 {
		t.Errorf("bob used alice's session: %d %s", code, body)
	}
	// Nor can bob end it: alice's session goes on.
	if code, _, body := d.raw(t, "DELETE", "/mcp", map[string]string{"Authorization": "Bearer bob-token", "Mcp-Session-Id": alice.ID()}, ""); code < 400 {
		t.Errorf("bob ended alice's session: %d %s", code, body)
	}
	if out, refused := callText(t, alice, "e2e.snapshot", nil); refused {
		t.Errorf("alice's session after bob's DELETE: %s", out)
	}

	// alice has two sessions open: a third is refused, nothing opened.
	d.connect(t, "alice-token")
	if cs, err := d.dial("alice-token"); err == nil {
		cs.Close()
		t.Error("alice opened a third session past --max-sessions-per-agent 2")
	} else if !strings.Contains(err.Error(), "new MCP session refused") || !strings.Contains(err.Error(), "--max-sessions-per-agent 2") {
		t.Errorf("the third session's refusal: %v", err)
	}

	// The evidence commands read the running daemon's file (from a copy
	// it makes while its appends go on).
	if out, err := exec.Command(binary, "evidence", "verify", "--evidence", d.evidence).CombinedOutput(); err != nil || !strings.Contains(string(out), "consistent copy") {
		t.Errorf("evidence verify on the live file: %v\n%s", err, out)
	}
	if out, err := exec.Command(binary, "evidence", "show", "--evidence", d.evidence).CombinedOutput(); err != nil || !strings.Contains(string(out), "agent alice") || !strings.Contains(string(out), "agent bob") {
		t.Errorf("evidence show on the live file: %v\n%s", err, out)
	}
	alice.Close()
	bob.Close()
	d.stop(t)
	store, err := evidence.Open(d.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	bobSession := ""
	for _, s := range sessions {
		recs, err := store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Kind != "" {
				continue // the session's end
			}
			if r.Principal == "bob" {
				bobSession = r.Session
			}
			by[r.Principal] = append(by[r.Principal], r.Command+":"+map[bool]string{true: "allowed", false: "refused"}[r.Decision.Allowed])
		}
	}
	if got := strings.Join(by["alice"], " "); got != "navigate:allowed type_text:allowed snapshot:allowed" {
		t.Errorf("alice's evidence: %s", got)
	}
	if got := strings.Join(by["bob"], " "); got != "navigate:allowed type_text:refused" {
		t.Errorf("bob's evidence: %s", got)
	}
	// The auditor's views: refusals only (no hashes), a summary per
	// session, and the configuration each session ran under.
	// The shipped policies and extra.cedar's one.
	shipped := shippedTally(t)
	tally := cedar.Tally{Policies: shipped.Policies + 1, Files: shipped.Files + 1}.String()
	out, err := exec.Command(binary, "evidence", "show", "--evidence", d.evidence, "--summary", "--refusals").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "summary: 2 call(s): 1 allowed, 1 refused (cedar 1)") ||
		!strings.Contains(string(out), "type_text  DENY") || strings.Contains(string(out), "navigate  ALLOW") ||
		strings.Contains(string(out), " head ") || !strings.Contains(string(out), tally+", principal bob") {
		t.Errorf("evidence show --summary --refusals: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "evidence", "config", "--evidence", d.evidence, "--session", bobSession).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "principal bob") || !strings.Contains(string(out), "# policy file extra.cedar") ||
		!strings.Contains(string(out), "readers-do-not-type") || !strings.Contains(string(out), "[browser.commands.type_text]") {
		t.Errorf("evidence config --session: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "evidence", "export", "--format", "html", "--evidence", d.evidence).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "<code>extra.cedar</code>") || !strings.Contains(string(out), `id="refusals"`) ||
		!strings.Contains(string(out), "readers-do-not-type") {
		t.Errorf("evidence export --format html lacks the configuration or the refusals: %v", err)
	}
}

// TestHTTPEventStream: an operator following the event stream with
// `browsergate events --follow` sees the sessions open, every decision of
// a burst of calls by two agents at once (allowed and refused, each with
// its agent and command), in order; a refused request of the egress gate;
// the stream refuses anyone without an operator's token.
func TestHTTPEventStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "operators")
	if err := os.WriteFile(tokens, []byte("# operators\nolga:"+olga+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startHTTP(t, inputManifest(), "", "--operator-token-file", tokens)
	if code, _, _ := d.raw(t, "GET", "/events", map[string]string{"Authorization": "Bearer alice-token"}, ""); code != http.StatusUnauthorized {
		t.Errorf("/events with an agent's token: %d, want 401", code)
	}

	// An operator's token is not an agent's.
	if code, _, _ := d.raw(t, "POST", "/mcp", map[string]string{"Authorization": "Bearer " + olga,
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, initializeBody); code != http.StatusUnauthorized {
		t.Errorf("/mcp with an operator's token: %d, want 401", code)
	}
	follow := exec.Command(binary, "events", "--follow", "--url", d.url, "--token-file", tokens)
	out, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	follow.Stderr = os.Stderr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = follow.Process.Kill(); _ = follow.Wait() })
	lines := make(chan map[string]any, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e map[string]any
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("not a JSON event: %q", sc.Text())
				continue
			}
			lines <- e
		}
		close(lines)
	}()
	// The stream has no history: wait until the follower is connected.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.stderr.String(), "event stream opened") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}

	site, _ := serveLogged(t, map[string]string{"/p": `<title>p</title><p>hello</p>`})
	const perAgent = 12
	var wg sync.WaitGroup
	for _, token := range []string{"alice-token", "bob-token"} {
		cs := d.connect(t, token)
		wg.Add(1)
		go func() {
			defer wg.Done()
			callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/p"})
			for i := range perAgent - 1 {
				if i%3 == 0 {
					callText(t, cs, "e2e.navigate", map[string]any{"url": "http://127.0.0.9/elsewhere"}) // out of scope
				} else {
					callText(t, cs, "e2e.snapshot", nil)
				}
			}
		}()
	}
	wg.Wait()

	decisions := map[string][]string{}
	opened := map[string]bool{}
	var last float64
	timeout := time.After(30 * time.Second)
	for len(decisions["alice"])+len(decisions["bob"]) < 2*perAgent {
		select {
		case e, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended early; decisions so far: %v", decisions)
			}
			seq, _ := e["seq"].(float64)
			if seq <= last {
				t.Errorf("event %v after %v: out of order", seq, last)
			}
			last = seq
			agent, _ := e["agent"].(string)
			switch e["type"] {
			case "session_opened":
				opened[agent] = true
			case "decision":
				if !opened[agent] {
					t.Errorf("a decision of %s before its session_opened", agent)
				}
				cmd, _ := e["command"].(string)
				decisions[agent] = append(decisions[agent], fmt.Sprintf("%s:%v", cmd, e["allowed"]))
			}
		case <-timeout:
			t.Fatalf("not every decision reached the stream: %v", decisions)
		}
	}
	for _, agent := range []string{"alice", "bob"} {
		got := decisions[agent]
		refused := 0
		for _, d := range got {
			if d == "navigate:false" {
				refused++
			}
		}
		if len(got) != perAgent || got[0] != "navigate:true" || refused != 4 {
			t.Errorf("%s's decisions on the stream: %v", agent, got)
		}
	}
}

// TestConsole: in real Chromium, the operator console sends a browser
// without the sign-in to the sign-in form and shows it nothing; signed in
// with the operator token, it lists the call an agent made that waits for
// a human (execute_js, critical), with its arguments; Approve lets the
// agent's call complete, and the session's evidence timeline in the
// console shows the approval as the console's, by the operator, with the
// chain verified.
func TestConsole(t *testing.T) {
	t.Parallel()
	tokens := operatorFile(t)
	d := startHTTP(t, inputManifest(), "", "--operator-token-file", tokens)
	site, _ := serveLogged(t, map[string]string{"/p": `<title>console test</title><p>hello</p>`})
	agent := d.connect(t, "alice-token")
	if out, refused := callText(t, agent, "e2e.navigate", map[string]any{"url": site + "/p"}); refused {
		t.Fatal(out)
	}
	type result struct {
		out     string
		refused bool
	}
	done := make(chan result, 1)
	go func() {
		out, refused := callText(t, agent, "e2e.execute_js", map[string]any{"expression": "document.title + ' seen'"})
		done <- result{out, refused}
	}()

	ctx := operatorTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(d.url+"/console/")); err != nil {
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	body, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loc, "/console/login") || strings.Contains(body, "execute_js") || strings.Contains(body, "alice") {
		t.Fatalf("without signing in the console showed %s:\n%s", loc, body)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(`input[name=token]`, olga),
		chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`header .who`),
	); err != nil {
		t.Fatal(err)
	}
	// The held call shows once the agent's call reached the approval.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if body, err = chromedp.Run(ctx, chromedp.OuterHTML("main")); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, "execute_js") || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
		_ = chromedp.Do(ctx, chromedp.Reload())
	}
	for _, want := range []string{"execute_js", "document.title + ' seen'", "agent <b>alice</b>", site + "/p", "Approve"} {
		if !strings.Contains(body, want) {
			t.Errorf("the held call in the console lacks %q:\n%s", want, body)
		}
	}
	time.Sleep(time.Second) // clicks on Approve are ignored for half a second after the page loaded or changed
	if err := chromedp.Do(ctx, chromedp.Click(`section.held button.approve`)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.refused || !strings.Contains(r.out, "console test seen") {
			t.Errorf("the agent's call after the console's approval (refused %v):\n%s", r.refused, r.out)
		}
	case <-time.After(time.Minute):
		t.Fatal("the agent's call did not complete after the approval")
	}
	// The session's timeline: the approval, the console's, by olga.
	home, _ := chromedp.Run(ctx, chromedp.Location())
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(`table a[href*="/sessions/"]`, "href"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(d.url+href.Value)); err != nil {
		t.Fatal(err)
	}
	if body, err = chromedp.Run(ctx, chromedp.OuterHTML("main")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"approved via console by olga", "evidence chain verifies", "agent alice"} {
		if !strings.Contains(body, want) {
			t.Errorf("the session's timeline lacks %q:\n%s", want, body)
		}
	}
	// The sign-in's cookie without its path key gets nothing: the sign-in
	// form again (a web app on another port of this host gets the cookie,
	// never the key).
	if err := chromedp.Do(ctx, chromedp.Navigate(d.url+"/console/s/"+strings.Repeat("0", 64)+"/")); err != nil {
		t.Fatal(err)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/console/login") || !strings.Contains(home, "/console/s/") {
		t.Errorf("the cookie with another path key reached %s (the console's own: %s)", loc, home)
	}
	// The console's pages forbid what they do not need.
	code, h, _ := d.raw(t, "GET", "/console/login", nil, "")
	if code != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("/console/login: %d, CSP %q", code, h.Get("Content-Security-Policy"))
	}
	// A change from another origin is refused, even with the sign-in's
	// cookie (a cross-site form would carry it only SameSite=None).
	code, _, _ = d.raw(t, "POST", "/console/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Origin": d.url, "Sec-Fetch-Site": "cross-site"}, "token="+olga)
	if code != http.StatusForbidden {
		t.Errorf("a cross-site sign-in post: %d, want 403", code)
	}
}

// olga is the operator token of the HTTP tests' operator file.
const olga = "68c3f38e63867f56c6922ff60a022ba2" // random (openssl rand -hex 16), as the docs advise

// operatorFile writes an operator file naming olga and returns its path.
func operatorFile(t *testing.T) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "operators")
	if err := os.WriteFile(tokens, []byte("olga:"+olga+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return tokens
}

// operatorTab is a tab of a Chromium of its own, for an operator's
// browser.
func operatorTab(t *testing.T) context.Context {
	t.Helper()
	port, _ := startChromium(t)
	actx, cancel := remote.NewAllocator(context.Background(), fmt.Sprintf("http://127.0.0.1:%d", port))
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestHTTPConsoleRightTokenAfterWrongOnes: the real serve --http, where
// agents and the operator all come from 127.0.0.1: after wrong tokens
// from that address (the first refused 401, the next ones 429 with
// Retry-After), the operator's right token signs in at once, with the
// console's cookie, and its console page opens.
func TestHTTPConsoleRightTokenAfterWrongOnes(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--operator-token-file", operatorFile(t))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(token string) *http.Response {
		t.Helper()
		resp, err := client.PostForm(d.url+"/console/login", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	var codes []int
	for range 4 {
		codes = append(codes, login("wrong-operator-token-0000").StatusCode)
	}
	if codes[0] != http.StatusUnauthorized || !slices.Contains(codes[1:], http.StatusTooManyRequests) {
		t.Errorf("wrong tokens from 127.0.0.1: %v, want 401 then 429s", codes)
	}
	resp := login(olga)
	home := resp.Header.Get("Location")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "browsergate_console" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(home, "/console/s/") || cookie == nil {
		t.Fatalf("the operator's right token after %d wrong ones from the same address: %d %q (Retry-After %q), want a sign-in",
			len(codes), resp.StatusCode, home, resp.Header.Get("Retry-After"))
	}
	req, _ := http.NewRequest("GET", d.url+home, nil)
	req.AddCookie(cookie)
	page, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(body), "signed in as <b>olga</b>") {
		t.Errorf("the console after the sign-in: %d\n%s", page.StatusCode, body)
	}
}

// shippedPoliciesWith copies the shipped policy directory into dir/policies
// with extra (a policy file's text, "" for none) as extra.cedar, and
// returns its path.
func shippedPoliciesWith(t testing.TB, dir, extra string) string {
	t.Helper()
	policies := filepath.Join(dir, "policies")
	if err := os.MkdirAll(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	shipped, _ := filepath.Glob(repoPath("policies/*"))
	if extra != "" {
		shipped = append(shipped, "extra.cedar")
	}
	for _, p := range shipped {
		b, err := os.ReadFile(p)
		if filepath.Base(p) == "extra.cedar" {
			b, err = []byte(extra), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(policies, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return policies
}
