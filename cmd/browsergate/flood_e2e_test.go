package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/internal/testkit"
)

// floodManifest is a browserless manifest (no browser to start) reading
// the test's site on 127.0.0.1, with time for a slow page.
const floodManifest = `
[tool]
name = "web"
timeout_seconds = 120
[browser]
engine = "http"
max_interactions = 100000
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
allowed_ports = ["1024-65535"]
requests_per_second_per_host = 0
[browser.commands.fetch_page]
`

// floodAnswerWait is how long the test waits for the daemon to answer a
// request of the flood (the body timeout is 2 s, the header timeout 10 s):
// a liveness bound, not a measure; without the limits the daemon never
// answers.
const floodAnswerWait = 30 * time.Second

// TestHTTPFrontUnderFlood: slow clients and a connection flood against
// serve --http, on loopback. Held at once: 200 connections that send
// nothing, 50 that send their headers a piece at a time and never end
// them, and requests whose bodies never end, on every kind of route (a
// refusal of the Host or Origin check, no token, a 404, the console's
// redirect and sign-in, /mcp with a token); besides, headers and bodies
// over the limits and WebSocket upgrades of /events without a token.
// While they are held an agent opens an MCP session and its calls are
// answered, an operator's event stream carries them, the console and the
// health check answer, and a call that lasts longer than the body timeout
// completes. Every unfinished request is answered (the refusals at once,
// without waiting for the body; the routes that read it when the body
// timeout ends), every connection of the flood is closed by the daemon,
// and once the flood is gone its open files are back to what they were.
func TestHTTPFrontUnderFlood(t *testing.T) {
	t.Parallel()
	tokens := operatorFile(t)
	release := make(chan struct{})
	var slowSeen sync.Once
	slowArrived := make(chan struct{})
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			slowSeen.Do(func() { close(slowArrived) })
			<-release
		}
		fmt.Fprintf(w, "<title>%s</title><p>served</p>", r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	d := startHTTP(t, floodManifest, "", "--operator-token-file", tokens, "--http-body-timeout", "2s", "--log-level", "info")
	addr := strings.TrimPrefix(d.url, "http://")
	before := openFiles(t, d.cmd.Process.Pid)

	var flood []net.Conn
	t.Cleanup(func() {
		for _, c := range flood {
			c.Close()
		}
	})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d of the flood: %v", len(flood)+1, err)
		}
		flood = append(flood, c)
		return c
	}
	// Connections that send nothing, and connections whose headers never
	// end.
	for range 200 {
		dial()
	}
	for i := range 50 {
		fmt.Fprintf(dial(), "GET /console/login HTTP/1.1\r\nHost: %s\r\nX-Slow-%d: a", addr, i)
	}
	// Requests whose bodies never end: each is answered. A refusal, a
	// redirect or a 404 at once, without waiting for the body: they go
	// to a second daemon whose body timeout is an hour. The routes that
	// read the body answer when its timeout ends.
	patient := startHTTP(t, floodManifest, "", "--operator-token-file", tokens, "--http-body-timeout", "1h")
	paddr := strings.TrimPrefix(patient.url, "http://")
	unfinished := []struct {
		name, addr, head string
	}{
		{"another Host", paddr, "POST /mcp HTTP/1.1\r\nHost: rebound.example\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
		{"a foreign Origin", paddr, "POST /mcp HTTP/1.1\r\nHost: " + paddr + "\r\nOrigin: http://evil.example\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\""},
		{"no token", paddr, "POST /mcp HTTP/1.1\r\nHost: " + paddr + "\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\""},
		{"a path of nothing", paddr, "POST /nowhere HTTP/1.1\r\nHost: " + paddr + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
		{"the console's redirect", paddr, "GET /console/ HTTP/1.1\r\nHost: " + paddr + "\r\nContent-Length: 100000\r\n\r\nabc"},
		{"the health check", paddr, "POST /healthz HTTP/1.1\r\nHost: " + paddr + "\r\nContent-Length: 100000\r\n\r\nabc"},
		{"the console's sign-in", addr, "POST /console/login HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\ntoken="},
		{"/mcp with a token", addr, "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer alice-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\""},
	}
	answered := make(chan string, len(unfinished))
	for _, u := range unfinished {
		c, err := net.Dial("tcp", u.addr)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
		fmt.Fprint(c, u.head)
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(floodAnswerWait))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				answered <- fmt.Sprintf("%s: no answer while its body was unfinished (%v)", u.name, err)
				return
			}
			answered <- ""
			t.Logf("%s, body unfinished: %s", u.name, strings.TrimSpace(line))
		}()
	}
	// Over the limits.
	for _, o := range []struct {
		name, req string
		want      string
	}{
		{"a 100 KB header", "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n", " 431 "},
		{"a 5 MiB body", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer alice-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " +
			fmt.Sprint(5<<20) + "\r\n\r\n" + strings.Repeat(" ", 5<<20), " 413 "},
	} {
		c := dial()
		go fmt.Fprint(c, o.req) // the daemon may answer and close before it is all sent
		_ = c.SetReadDeadline(time.Now().Add(floodAnswerWait))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, o.want) {
			t.Errorf("%s: %q, %v; want%s", o.name, line, err, o.want)
		}
	}
	for range 50 {
		code, _, _ := d.raw(t, "GET", "/events", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket",
			"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, "")
		if code != http.StatusUnauthorized {
			t.Fatalf("an upgrade of /events without a token: %d, want 401", code)
		}
	}
	for range unfinished {
		if msg := <-answered; msg != "" {
			t.Error(msg)
		}
	}
	t.Logf("with the flood held: %d open files (%d before)", openFiles(t, d.cmd.Process.Pid), before)

	// The legitimate clients, while the idle and slow connections are held.
	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+"/events", http.Header{"Authorization": {"Bearer " + olga}})
	if err != nil {
		t.Fatalf("an operator's event stream during the flood: %v (%v)", err, resp)
	}
	defer ws.Close()
	testkit.Eventually(t, func() string {
		if !strings.Contains(d.stderr.String(), "event stream opened") {
			return "the event stream did not open"
		}
		return ""
	})
	agent := d.connect(t, "alice-token")
	if out, refused := callText(t, agent, "web.fetch_page", map[string]any{"url": site + "/page"}); refused || !strings.Contains(out, "served") {
		t.Fatalf("an agent's call during the flood (refused %v):\n%s", refused, out)
	}
	_ = ws.SetReadDeadline(time.Now().Add(floodAnswerWait))
	for {
		var e map[string]any
		if err := ws.ReadJSON(&e); err != nil {
			t.Fatalf("the operator's event stream during the flood: %v", err)
		}
		if e["type"] == "decision" && e["command"] == "fetch_page" {
			break
		}
	}
	if code, _, body := d.raw(t, "GET", "/console/login", nil, ""); code != http.StatusOK || !strings.Contains(body, "token") {
		t.Errorf("the console's sign-in during the flood: %d", code)
	}
	if code, _, body := d.raw(t, "GET", "/healthz", nil, ""); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz during the flood: %d %q", code, body)
	}
	// A call that outlasts the body timeout: its request's body was read
	// long before, and the call is not cancelled.
	long := make(chan string, 1)
	go func() {
		out, refused := callText(t, agent, "web.fetch_page", map[string]any{"url": site + "/slow"})
		if refused {
			out = "REFUSED: " + out
		}
		long <- out
	}()
	<-slowArrived
	time.Sleep(3 * 2 * time.Second) // three body timeouts: not a measure, the time that must pass
	close(release)
	if out := <-long; !strings.Contains(out, "Title: /slow") {
		t.Errorf("a call longer than the body timeout:\n%s", out)
	}

	// Every connection of the flood is closed by the daemon (the idle and
	// the slow ones when the header timeout ends).
	for i, c := range flood {
		_ = c.SetReadDeadline(time.Now().Add(floodAnswerWait))
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("connection %d of the flood is still open after %s", i+1, floodAnswerWait)
				}
				break
			}
		}
	}
	for _, c := range flood {
		c.Close()
	}
	agent.Close()
	ws.Close()
	// The test's own kept connections (the agent's, the raw requests')
	// are not the flood's.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	testkit.Eventually(t, func() string {
		if n := openFiles(t, d.cmd.Process.Pid); n > before+2 {
			return fmt.Sprintf("the daemon has %d files open, %d before the flood", n, before)
		}
		return ""
	})
}

// openFiles is how many files process pid has open.
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
