package egress_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/scope/egress"
)

// session is one proxy behind the gateway, with its own fakes and its
// credentials.
type session struct {
	proxy     *egress.Proxy
	policy    *fakePolicy
	resolver  *fakeResolver
	dials     *dialRecorder
	decisions *decisions
	creds     egress.Credentials
	remove    func()
}

// headerLog is an upstream test site that keeps the headers of every
// request it serves (and echoes WebSockets on /ws).
type headerLog struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func (h *headerLog) seen() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.headers...)
}

func (h *headerLog) port() uint16 {
	return netip.MustParseAddrPort(h.Listener.Addr().String()).Port()
}

// gwRig is a gateway on 127.0.0.1 with two sessions behind it: "a" whose
// policy allows app.test (127.0.0.1), and "b" whose policy allows only
// other.test, so the site on 127.0.0.1 is refused to it. A canary listens
// on the site's port on 127.0.0.2, which neither policy allows.
type gwRig struct {
	gateway  *egress.Gateway
	addr     string
	a, b     *session
	site     *headerLog
	canary   *backend
	refusals *refusalLog
}

type refusalLog struct {
	mu   sync.Mutex
	list []string // "remote reason"
}

func (l *refusalLog) add(remote netip.AddrPort, reason string) {
	l.mu.Lock()
	l.list = append(l.list, remote.String()+" "+reason)
	l.mu.Unlock()
}

func (l *refusalLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.list...)
}

func newGwRig(t testing.TB, config func(*egress.GatewayConfig)) *gwRig {
	t.Helper()
	g := &gwRig{refusals: &refusalLog{}}
	g.site = &headerLog{}
	g.site.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.site.mu.Lock()
		g.site.headers = append(g.site.headers, r.Header.Clone())
		g.site.mu.Unlock()
		if r.URL.Path == "/ws" {
			serveEcho(w, r)
			return
		}
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	t.Cleanup(g.site.Close)
	g.canary = newBackendOn(t, fmt.Sprintf("127.0.0.2:%d", g.site.port()), false)

	cfg := egress.GatewayConfig{Logger: slog.New(slog.DiscardHandler), OnRefused: g.refusals.add}
	if config != nil {
		config(&cfg)
	}
	gw, err := egress.NewGateway(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	g.gateway = gw
	g.a = newSession(t, gw, newFakePolicy([]string{"app.test", "self.test"}, "127.0.0.1"))
	g.b = newSession(t, gw, newFakePolicy([]string{"other.test"}))
	if g.addr, err = gw.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return g
}

func newSession(t testing.TB, gw *egress.Gateway, policy *fakePolicy) *session {
	t.Helper()
	s := &session{
		policy:    policy,
		resolver:  newFakeResolver("app.test", "127.0.0.1", "other.test", "127.0.0.1", "canary.test", "127.0.0.2", "self.test", "127.0.0.1"),
		dials:     &dialRecorder{},
		decisions: &decisions{},
	}
	p, err := egress.New(egress.Config{
		Policy:     s.policy,
		Resolver:   s.resolver,
		Dial:       s.dials.Dial,
		OnDecision: s.decisions.add,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s.proxy = p
	s.creds, s.remove = gw.Add(p)
	return s
}

// client returns an HTTP client whose proxy is the gateway, with creds in
// the proxy URL: net/http sends them in Proxy-Authorization on every
// absolute-form request and every CONNECT.
func (g *gwRig) client(creds egress.Credentials) *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(g.proxyURL(creds))}}
}

func (g *gwRig) proxyURL(creds egress.Credentials) *url.URL {
	return &url.URL{Scheme: "http", Host: g.addr, User: url.UserPassword(creds.Username, creds.Password)}
}

func (g *gwRig) url(host, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, g.site.port(), path)
}

// lastFlipped is s with its last character changed.
func lastFlipped(s string) string {
	last := byte('A')
	if s[len(s)-1] == last {
		last = 'B'
	}
	return s[:len(s)-1] + string(last)
}

// basic is a Proxy-Authorization field value for user and password.
func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// rawConn is a client connection to the gateway that sends raw requests
// and reads responses, keeping the connection alive between them.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

// do sends raw and returns the response and its body.
func (rc *rawConn) do(raw string) (*http.Response, string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, raw); err != nil {
		rc.t.Fatal(err)
	}
	method, _, _ := strings.Cut(raw, " ")
	res, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("read response to %q: %v", raw, err)
	}
	if method == http.MethodConnect && res.StatusCode == 200 {
		return res, "" // the tunnel is open: the body is the tunnel's
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		rc.t.Fatal(err)
	}
	return res, string(body)
}

// get is a raw absolute-form GET of target with the Proxy-Authorization
// values auth (none for nil).
func get(target string, auth ...string) string {
	return request("GET", target, auth...)
}

func connect(target string, auth ...string) string {
	return request("CONNECT", target, auth...)
}

func request(method, target string, auth ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\n", method, target)
	for _, a := range auth {
		fmt.Fprintf(&b, "Proxy-Authorization: %s\r\n", a)
	}
	b.WriteString("\r\n")
	return b.String()
}

// nothingHappened fails the test if any session resolved, dialled or
// decided anything, or if a site saw a request.
func (g *gwRig) nothingHappened(t testing.TB) {
	t.Helper()
	for name, s := range map[string]*session{"a": g.a, "b": g.b} {
		if d := s.decisions.all(); len(d) != 0 {
			t.Errorf("session %s decided %+v", name, d)
		}
		if d := s.dials.dialed(); len(d) != 0 {
			t.Errorf("session %s dialled %v", name, d)
		}
		if s.policy.hostCalls.Load() != 0 || s.resolver.count("app.test") != 0 {
			t.Errorf("session %s's policy or resolver was asked", name)
		}
	}
	if n := len(g.site.seen()); n != 0 {
		t.Errorf("the site saw %d requests", n)
	}
	if n := g.canary.hits.Load(); n != 0 {
		t.Errorf("the canary saw %d requests", n)
	}
}

// TestGatewayRefusesBadCredentials: every request without one live
// session's exact credentials is answered 407 with the Basic challenge,
// before any policy, lookup or dial, and the refusal is reported with the
// client's address and why.
func TestGatewayRefusesBadCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		auth func(g *gwRig) []string
		want string
	}{
		{name: "missing", auth: func(*gwRig) []string { return nil }, want: egress.AuthMissing},
		{name: "empty", auth: func(*gwRig) []string { return []string{""} }, want: egress.AuthScheme},
		{name: "wrong scheme", auth: func(g *gwRig) []string {
			return []string{"Bearer " + base64.StdEncoding.EncodeToString([]byte(g.a.creds.Username+":"+g.a.creds.Password))}
		}, want: egress.AuthScheme},
		{name: "scheme only", auth: func(*gwRig) []string { return []string{"Basic"} }, want: egress.AuthMalformed},
		{name: "malformed base64", auth: func(*gwRig) []string { return []string{"Basic !!not*base64"} }, want: egress.AuthMalformed},
		{name: "unpadded base64", auth: func(g *gwRig) []string {
			// The right credentials, 53 bytes, whose base64 ends in one "=".
			return []string{strings.TrimRight(basic(g.a.creds.Username, g.a.creds.Password), "=")}
		}, want: egress.AuthMalformed},
		{name: "no colon", auth: func(g *gwRig) []string {
			return []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(g.a.creds.Username+g.a.creds.Password))}
		}, want: egress.AuthMalformed},
		{name: "unknown user", auth: func(g *gwRig) []string { return []string{basic("NOBODY", g.a.creds.Password)} }, want: egress.AuthUnknownUser},
		{name: "right user, wrong password", auth: func(g *gwRig) []string {
			return []string{basic(g.a.creds.Username, lastFlipped(g.a.creds.Password))}
		}, want: egress.AuthWrongPassword},
		{name: "right user, empty password", auth: func(g *gwRig) []string { return []string{basic(g.a.creds.Username, "")} }, want: egress.AuthWrongPassword},
		{name: "other session's password with this user", auth: func(g *gwRig) []string {
			return []string{basic(g.a.creds.Username, g.b.creds.Password)}
		}, want: egress.AuthWrongPassword},
		{name: "password as user name", auth: func(g *gwRig) []string { return []string{basic(g.a.creds.Password, g.a.creds.Username)} }, want: egress.AuthUnknownUser},
		{name: "two fields, both right", auth: func(g *gwRig) []string {
			return []string{basic(g.a.creds.Username, g.a.creds.Password), basic(g.a.creds.Username, g.a.creds.Password)}
		}, want: egress.AuthRepeated},
		{name: "removed session's credentials", auth: func(g *gwRig) []string {
			g.b.remove()
			return []string{basic(g.b.creds.Username, g.b.creds.Password)}
		}, want: egress.AuthUnknownUser},
	}
	for _, tc := range tests {
		for _, method := range []string{"GET", "CONNECT"} {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				t.Parallel()
				g := newGwRig(t, nil)
				target := g.url("app.test", "/secret")
				if method == "CONNECT" {
					target = fmt.Sprintf("app.test:%d", g.site.port())
				}
				auth := tc.auth(g)
				rc := dialRaw(t, g.addr)
				res, body := rc.do(request(method, target, auth...))
				if res.StatusCode != http.StatusProxyAuthRequired {
					t.Fatalf("status %d, want 407 (%s)", res.StatusCode, body)
				}
				if got := res.Header.Values("Proxy-Authenticate"); len(got) != 1 || got[0] != `Basic realm="browsergate"` {
					t.Errorf("Proxy-Authenticate %q", got)
				}
				for _, a := range append(auth, g.a.creds.Password, g.b.creds.Password) {
					if a != "" && strings.Contains(body, a) {
						t.Errorf("the 407 body %q repeats a credential", body)
					}
				}
				g.nothingHappened(t)
				refusals := g.refusals.all()
				if len(refusals) != 1 || !strings.HasPrefix(refusals[0], "127.0.0.1:") || !strings.HasSuffix(refusals[0], " "+tc.want) {
					t.Errorf("OnRefused got %q, want one refusal from 127.0.0.1 for %q", refusals, tc.want)
				}
				if n := g.gateway.Refused(); n != 1 {
					t.Errorf("Refused() = %d, want 1", n)
				}
				// The connection is still usable: a right request on it is
				// served (one 407 is how a browser learns to answer).
				if method == "GET" {
					res, body := rc.do(get(g.url("app.test", "/after"), basic(g.a.creds.Username, g.a.creds.Password)))
					if res.StatusCode != 200 || body != "hello from /after" {
						t.Errorf("the next request, with credentials, got %d %q", res.StatusCode, body)
					}
				}
			})
		}
	}
}

// TestGatewayRoutesByCredentials: two sessions with different policies
// share the gateway; each request is judged by the policy of the session
// whose credentials it carries, and only that session decides it.
func TestGatewayRoutesByCredentials(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	ca, cb := g.client(g.a.creds), g.client(g.b.creds)

	res, err := ca.Get(g.url("app.test", "/a"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "hello from /a" {
		t.Fatalf("session a: %d %q, want the site's page", res.StatusCode, body)
	}

	res, err = cb.Get(g.url("app.test", "/b"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != "not in allowed_domains" {
		t.Fatalf("session b: %d %q, want 403 by b's policy", res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
	}
	// b's policy allows other.test, which resolves (for b) to the site's
	// address, which b's policy does not grant.
	res, err = cb.Get(g.url("other.test", "/b"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != "address class loopback" {
		t.Fatalf("session b, other.test: %d %q, want 403 by b's address check", res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
	}

	if n := len(g.site.seen()); n != 1 {
		t.Errorf("the site saw %d requests, want session a's one", n)
	}
	if da := g.a.decisions.all(); len(da) != 1 || !da[0].Allowed || da[0].Target != g.url("app.test", "/a") {
		t.Errorf("session a decided %+v, want only its own allowed request", da)
	}
	if db := g.b.decisions.all(); len(db) != 2 || db[0].Allowed || db[1].Allowed {
		t.Errorf("session b decided %+v, want its two refusals", db)
	}
	if g.b.resolver.count("app.test") != 0 || g.a.resolver.count("other.test") != 0 || len(g.b.dials.dialed()) != 0 {
		t.Error("a session's resolver or dialer served the other's request")
	}
	if g.gateway.Refused() != 0 {
		t.Errorf("Refused() = %d: the clients' first requests already carried credentials", g.gateway.Refused())
	}
}

// TestGatewayStripsCredentials: the upstream never sees
// Proxy-Authorization or any part of the credentials, for a forwarded
// request (including an upgrade) and inside a CONNECT tunnel.
func TestGatewayStripsCredentials(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	auth := basic(g.a.creds.Username, g.a.creds.Password)
	secrets := []string{g.a.creds.Username, g.a.creds.Password, strings.TrimPrefix(auth, "Basic ")}

	t.Run("forwarded", func(t *testing.T) {
		rc := dialRaw(t, g.addr)
		// Connection names the field too, which would keep it from being
		// dropped as hop-by-hop if only Connection were trusted.
		raw := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: %s\r\nConnection: keep-alive, Proxy-Authorization\r\n\r\n", g.url("app.test", "/f"), auth)
		if res, body := rc.do(raw); res.StatusCode != 200 {
			t.Fatalf("status %d %q", res.StatusCode, body)
		}
		res, err := g.client(g.a.creds).Get(g.url("app.test", "/f2"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ws, _, err := (&websocket.Dialer{Proxy: func(*http.Request) (*url.URL, error) { return g.proxyURL(g.a.creds), nil }}).
			Dial(strings.Replace(g.url("app.test", "/ws"), "http:", "ws:", 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		ws.Close()
		upgrade := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", g.url("app.test", "/ws"), auth)
		if res, _ := dialRaw(t, g.addr).do(upgrade); res.StatusCode != 101 {
			t.Fatalf("upgrade status %d", res.StatusCode)
		}
		seen := g.site.seen()
		if len(seen) != 4 {
			t.Fatalf("the site saw %d requests, want 4", len(seen))
		}
		for _, h := range seen {
			for name, values := range h {
				for _, v := range values {
					for _, s := range secrets {
						if strings.Contains(name+": "+v, s) || strings.EqualFold(name, "Proxy-Authorization") {
							t.Errorf("the site saw %s: %s", name, v)
						}
					}
				}
			}
		}
	})

	t.Run("connect", func(t *testing.T) {
		got := make(chan string, 1)
		port := rawServer(t, func(c net.Conn) {
			b, _ := io.ReadAll(c)
			got <- string(b)
		})
		rc := dialRaw(t, g.addr)
		// The first tunnel bytes ride in the same write as the CONNECT
		// head, so they pass through the server's buffer.
		res, _ := rc.do(connect(fmt.Sprintf("127.0.0.1:%d", port), auth) + "early ")
		if res.StatusCode != 200 {
			t.Fatalf("CONNECT status %d", res.StatusCode)
		}
		io.WriteString(rc.c, "late")
		rc.c.(*net.TCPConn).CloseWrite()
		select {
		case b := <-got:
			if b != "early late" {
				t.Errorf("the upstream received %q, want exactly the tunnel's bytes %q", b, "early late")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream received nothing")
		}
	})
}

// TestGatewayConnectTLS: an https request through the gateway with the
// right credentials opens a CONNECT tunnel judged by that session.
func TestGatewayConnectTLS(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	site := newBackendOn(t, "127.0.0.1:0", true)
	tr := &http.Transport{Proxy: http.ProxyURL(g.proxyURL(g.a.creds))}
	tr.TLSClientConfig = site.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate
	res, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("https://app.test:%d/secure", site.port()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "hello from /secure" {
		t.Fatalf("%d %q", res.StatusCode, body)
	}
	if d := g.a.decisions.all(); len(d) != 1 || d[0].Method != "CONNECT" || !d[0].Allowed {
		t.Errorf("session a decided %+v", d)
	}
	if g.gateway.Refused() != 0 {
		t.Errorf("Refused() = %d", g.gateway.Refused())
	}
}

// TestGatewayEndedRouteOnKeptAliveConnection: a connection that carried a
// session's requests gets 407 for the very next one once the session's
// route is removed or its proxy closed; the connection belongs to no
// session, and another session's request on it is judged by that session.
func TestGatewayEndedRouteOnKeptAliveConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(s *session)
	}{
		{"removed", func(s *session) { s.remove() }},
		{"removed twice", func(s *session) { s.remove(); s.remove() }},
		{"proxy closed", func(s *session) { s.proxy.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGwRig(t, nil)
			a := basic(g.a.creds.Username, g.a.creds.Password)
			rc := dialRaw(t, g.addr)
			if res, body := rc.do(get(g.url("app.test", "/1"), a)); res.StatusCode != 200 {
				t.Fatalf("first request: %d %q", res.StatusCode, body)
			}
			tc.end(g.a)
			res, _ := rc.do(get(g.url("app.test", "/2"), a))
			if res.StatusCode != 407 {
				t.Fatalf("request after the route ended: %d, want 407", res.StatusCode)
			}
			res, _ = rc.do(get(g.url("app.test", "/3"), basic(g.b.creds.Username, g.b.creds.Password)))
			if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != "not in allowed_domains" {
				t.Errorf("session b's request on the same connection: %d %q, want b's refusal", res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
			}
			if n := len(g.site.seen()); n != 1 {
				t.Errorf("the site saw %d requests, want only the first", n)
			}
			if n := len(g.a.decisions.all()); n != 1 {
				t.Errorf("session a decided %d requests, want 1", n)
			}
			if r := g.refusals.all(); len(r) != 1 || !strings.HasSuffix(r[0], " "+egress.AuthUnknownUser) && !strings.HasSuffix(r[0], " "+egress.AuthRemoved) {
				t.Errorf("refusals %q, want one for removed credentials", r)
			}
		})
	}
}

// TestGatewayRemoveClosesTunnels: removing a session's route ends its
// tunnels and upgraded connections through the gateway, and nothing else:
// the other session's tunnel, and the proxy itself on its own listener,
// go on working.
func TestGatewayRemoveClosesTunnels(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	own, err := g.a.proxy.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.b.policy.hosts["app.test"] = true
	g.b.policy.addrs[netip.MustParseAddr("127.0.0.1")] = true
	wsURL := strings.Replace(g.url("app.test", "/ws"), "http:", "ws:", 1)
	open := func(proxy *url.URL) *websocket.Conn {
		t.Helper()
		c, _, err := (&websocket.Dialer{Proxy: http.ProxyURL(proxy)}).Dial(wsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	echo := func(c *websocket.Conn) error {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte("ping")); err != nil {
			return err
		}
		_, msg, err := c.ReadMessage()
		if err == nil && string(msg) != "ping" {
			err = fmt.Errorf("echo %q", msg)
		}
		return err
	}
	tunnelA, tunnelB := open(g.proxyURL(g.a.creds)), open(g.proxyURL(g.b.creds))
	direct := open(&url.URL{Scheme: "http", Host: own})
	rc := dialRaw(t, g.addr)
	up, _ := rc.do(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", g.url("app.test", "/ws"), basic(g.a.creds.Username, g.a.creds.Password)))
	if up.StatusCode != 101 {
		t.Fatalf("upgrade status %d", up.StatusCode)
	}
	for _, c := range []*websocket.Conn{tunnelA, tunnelB, direct} {
		if err := echo(c); err != nil {
			t.Fatalf("before remove: %v", err)
		}
	}

	g.a.remove()
	if err := echo(tunnelA); err == nil {
		t.Error("session a's tunnel through the gateway outlived remove")
	}
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("session a's upgraded connection through the gateway: read %v, want EOF", err)
	}
	if err := echo(tunnelB); err != nil {
		t.Errorf("session b's tunnel broke when a was removed: %v", err)
	}
	if err := echo(direct); err != nil {
		t.Errorf("session a's tunnel on the proxy's own listener broke: %v", err)
	}
	res, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: own})}}).Get(g.url("app.test", "/own"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("the removed proxy on its own listener: %d, want 200", res.StatusCode)
	}
}

// TestGatewayOwnAddressRefused: a session's proxy refuses the gateway's
// address as it refuses its own, through the gateway and through its own
// listener, by literal, by name and as CONNECT, and still after its route
// is removed; nothing is dialled.
func TestGatewayOwnAddressRefused(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	g.a.policy.addrs[netip.MustParseAddr("0.0.0.0")] = true
	own, err := g.a.proxy.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := netip.MustParseAddrPort(g.addr).Port()
	auth := basic(g.a.creds.Username, g.a.creds.Password)
	targets := []struct{ name, method, target string }{
		{"literal", "GET", fmt.Sprintf("http://127.0.0.1:%d/", port)},
		{"name", "GET", fmt.Sprintf("http://self.test:%d/", port)},
		{"unspecified", "GET", fmt.Sprintf("http://0.0.0.0:%d/", port)},
		{"connect", "CONNECT", fmt.Sprintf("127.0.0.1:%d", port)},
	}
	check := func(t *testing.T, via string, auth ...string) {
		for _, tc := range targets {
			res, body := dialRaw(t, via).do(request(tc.method, tc.target, auth...))
			if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != egress.RuleSelf {
				t.Errorf("%s: %d %q (%s), want 403 %q", tc.name, res.StatusCode, res.Header.Get("X-Browsergate-Denied"), body, egress.RuleSelf)
			}
		}
	}
	t.Run("through the gateway", func(t *testing.T) { check(t, g.addr, auth) })
	t.Run("through the proxy's own listener", func(t *testing.T) { check(t, own) })
	g.a.remove()
	t.Run("after remove", func(t *testing.T) { check(t, own) })
	if d := g.a.dials.dialed(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
	if g.gateway.Refused() != 0 {
		t.Errorf("the gateway itself was reached %d times", g.gateway.Refused())
	}
}

// TestGatewayAddBeforeListen: a proxy added before the gateway listens
// learns the gateway's address when it is known, and refuses it.
func TestGatewayAddBeforeListen(t *testing.T) {
	t.Parallel()
	gw, err := egress.NewGateway(egress.GatewayConfig{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if gw.Addr() != "" {
		t.Errorf("Addr() = %q before Listen", gw.Addr())
	}
	s := newSession(t, gw, newFakePolicy(nil, "127.0.0.1"))
	addr, err := gw.Listen("127.0.0.1:0")
	if err != nil || gw.Addr() != addr {
		t.Fatalf("Listen = %q, %v; Addr() = %q", addr, err, gw.Addr())
	}
	res, _ := dialRaw(t, addr).do(get("http://"+addr+"/", basic(s.creds.Username, s.creds.Password)))
	if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != egress.RuleSelf {
		t.Errorf("%d %q, want 403 %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), egress.RuleSelf)
	}
}

// TestReaches: which addresses reach a listener, for the refusal of a
// proxy's and a gateway's own address.
func TestReaches(t *testing.T) {
	t.Parallel()
	local := func(a netip.Addr) bool { return a == netip.MustParseAddr("10.77.1.1") }
	tests := []struct {
		ap, ln string
		want   bool
	}{
		{"127.0.0.1:8118", "127.0.0.1:8118", true},
		{"[::ffff:127.0.0.1]:8118", "127.0.0.1:8118", true},
		{"0.0.0.0:8118", "127.0.0.1:8118", true},
		{"[::]:8118", "127.0.0.1:8118", true},
		{"127.0.0.3:8118", "127.0.0.1:8118", false},
		{"127.0.0.1:8119", "127.0.0.1:8118", false},
		{"10.77.1.1:8118", "10.77.1.1:8118", true},
		{"127.0.0.1:8118", "10.77.1.1:8118", false},
		{"10.77.1.2:8118", "10.77.1.1:8118", false},
		{"127.0.0.1:8118", "[::]:8118", true},
		{"127.9.9.9:8118", "0.0.0.0:8118", true},
		{"[::1]:8118", "[::]:8118", true},
		{"10.77.1.1:8118", "[::]:8118", true},
		{"[::ffff:10.77.1.1]:8118", "0.0.0.0:8118", true},
		{"198.51.100.7:8118", "[::]:8118", false},
		{"10.77.1.1:8119", "[::]:8118", false},
	}
	for _, tc := range tests {
		if got := egress.ReachesForTest(netip.MustParseAddrPort(tc.ap), netip.MustParseAddrPort(tc.ln), local); got != tc.want {
			t.Errorf("%s reaches a listener on %s: %v, want %v", tc.ap, tc.ln, got, tc.want)
		}
	}
	if egress.ReachesForTest(netip.MustParseAddrPort("127.0.0.1:8118"), netip.AddrPort{}, local) {
		t.Error("an address reaches a listener that does not listen")
	}
}

// TestGatewayCredentials: each Add issues fresh random credentials of at
// least 128 bits in each half, distinct from every other pair.
func TestGatewayCredentials(t *testing.T) {
	t.Parallel()
	gw, err := egress.NewGateway(egress.GatewayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	p, err := egress.New(egress.Config{Policy: newFakePolicy(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := map[string]bool{}
	for range 200 {
		c, remove := gw.Add(p)
		for _, s := range []string{c.Username, c.Password} {
			// 26 base32 characters carry 130 bits.
			if len(s) < 26 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
				t.Fatalf("credential %q is not 26+ base32 characters", s)
			}
			if seen[s] {
				t.Fatalf("credential %q issued twice", s)
			}
			seen[s] = true
		}
		remove()
	}
}

// TestGatewayLog: a refusal is one debug record with the client's address
// and the reason, and never the credentials.
func TestGatewayLog(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	g := newGwRig(t, func(c *egress.GatewayConfig) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	wrong := basic(g.a.creds.Username, g.b.creds.Password)
	dialRaw(t, g.addr).do(get(g.url("app.test", "/"), wrong))
	out := buf.String()
	for _, want := range []string{`"level":"DEBUG"`, `"remote":"127.0.0.1:`, `"reason":"` + egress.AuthWrongPassword + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %s", out, want)
		}
	}
	for _, secret := range []string{g.a.creds.Username, g.b.creds.Password, strings.TrimPrefix(wrong, "Basic ")} {
		if strings.Contains(out, secret) {
			t.Errorf("log %q holds a credential", out)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 1 {
		t.Errorf("%d records for one refusal", n)
	}
}

// TestGatewayHeaderLimit: the gateway's server bounds request headers as a
// proxy's does, before any credential is read.
func TestGatewayHeaderLimit(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, func(c *egress.GatewayConfig) { c.MaxHeaderBytes = 1 << 10 })
	raw := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: %s\r\nX-Big: %s\r\n\r\n",
		g.url("app.test", "/"), basic(g.a.creds.Username, g.a.creds.Password), strings.Repeat("a", 64<<10))
	res, _ := dialRaw(t, g.addr).do(raw)
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", res.StatusCode)
	}
	g.nothingHappened(t)
}

// TestGatewayListenAndClose: Listen once, Close idempotent, no Listen
// after Close; Close ends the gateway's connections and tunnels but
// leaves the proxies open.
func TestGatewayListenAndClose(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	if _, err := g.gateway.Listen("127.0.0.1:0"); !errors.Is(err, egress.ErrListening) {
		t.Errorf("second Listen: %v, want ErrListening", err)
	}
	own, err := g.a.proxy.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := (&websocket.Dialer{Proxy: http.ProxyURL(g.proxyURL(g.a.creds))}).Dial(strings.Replace(g.url("app.test", "/ws"), "http:", "ws:", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	idle := dialRaw(t, g.addr)
	if res, _ := idle.do(get(g.url("app.test", "/"), basic(g.a.creds.Username, g.a.creds.Password))); res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}

	if err := g.gateway.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.gateway.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ws.ReadMessage(); err == nil {
		t.Error("a tunnel outlived the gateway's Close")
	}
	idle.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("a kept-alive connection after Close: read %v, want EOF", err)
	}
	if c, err := net.Dial("tcp", g.addr); err == nil {
		c.Close()
		t.Error("the gateway still accepts connections after Close")
	}
	if _, err := g.gateway.Listen("127.0.0.1:0"); !errors.Is(err, egress.ErrClosed) {
		t.Errorf("Listen after Close: %v, want ErrClosed", err)
	}
	res, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: own})}}).Get(g.url("app.test", "/own"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("a proxy on its own listener after the gateway closed: %d, want 200", res.StatusCode)
	}
}

// TestGatewayRemoveCancelsRequests: a request of the session in flight
// when its route is removed (here, stuck in its lookup) ends at once, and
// nothing is dialled for it.
func TestGatewayRemoveCancelsRequests(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	started := make(chan struct{})
	g.a.policy.hosts["stuck.test"] = true
	g.a.resolver.answer = func(ctx context.Context, host string, _ int) ([]netip.Addr, error) {
		close(started)
		<-ctx.Done()
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		res, err := g.client(g.a.creds).Get(g.url("stuck.test", "/"))
		if err != nil {
			done <- result{err: err}
			return
		}
		res.Body.Close()
		done <- result{status: res.StatusCode}
	}()
	<-started
	g.a.remove()
	select {
	case r := <-done:
		if r.err == nil && r.status == 200 {
			t.Error("a request in flight at remove was forwarded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request in flight at remove did not end")
	}
	if d := g.a.dials.dialed(); len(d) != 0 {
		t.Errorf("dialled %v after remove", d)
	}
	if n := len(g.site.seen()); n != 0 {
		t.Errorf("the site saw %d requests", n)
	}
}

// TestGatewayCloseLeavesNoGoroutines: with a tunnel, an upgraded
// connection, a request stuck in its lookup and a kept-alive connection
// open through the gateway, Close returns only when none of them runs any
// more, and the proxies, though still open, run nothing either. It is not
// parallel, so no other test's proxy runs meanwhile.
func TestGatewayCloseLeavesNoGoroutines(t *testing.T) {
	const slowLookup = 500 * time.Millisecond
	g := newGwRig(t, nil)
	stuck := make(chan struct{})
	g.a.policy.hosts["stuck.test"] = true
	g.a.resolver.answer = func(ctx context.Context, host string, _ int) ([]netip.Addr, error) {
		if host == "stuck.test" {
			close(stuck)
			<-ctx.Done()
			// Slow to notice: Close must wait for it, not race it.
			time.Sleep(slowLookup)
			return nil, ctx.Err()
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	auth := basic(g.a.creds.Username, g.a.creds.Password)
	ws, _, err := (&websocket.Dialer{Proxy: http.ProxyURL(g.proxyURL(g.a.creds))}).Dial(strings.Replace(g.url("app.test", "/ws"), "http:", "ws:", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	up, _ := dialRaw(t, g.addr).do(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", g.url("app.test", "/ws"), auth))
	if up.StatusCode != 101 {
		t.Fatalf("upgrade status %d", up.StatusCode)
	}
	dialRaw(t, g.addr).do(get(g.url("app.test", "/"), "Basic bm9ib2R5Om5vdGhpbmc="))
	c, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, get(g.url("stuck.test", "/"), auth)); err != nil {
		t.Fatal(err)
	}
	<-stuck
	if n := len(proxyGoroutines()); n < 3 {
		t.Fatalf("%d goroutines in package egress before Close, want at least the tunnel, the upgrade and the stuck lookup", n)
	}
	if err := g.gateway.Close(); err != nil {
		t.Fatal(err)
	}
	// A handler that has counted itself done may still be returning from
	// its last line: it gets a moment, a tenth of what the slow lookup
	// would take if Close had not waited for it.
	deadline := time.Now().Add(slowLookup / 10)
	left := proxyGoroutines()
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		left = proxyGoroutines()
	}
	for _, s := range left {
		t.Errorf("goroutine still in package egress after the gateway's Close:\n%s", s)
	}
}

// TestGatewayDropsClosedProxy: closing a proxy drops its route from the
// gateway by itself, without remove: its user name becomes unknown.
func TestGatewayDropsClosedProxy(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	if err := g.a.proxy.Close(); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, g.addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, _ := rc.do(get(g.url("app.test", "/"), basic(g.a.creds.Username, g.a.creds.Password)))
		if res.StatusCode != 407 {
			t.Fatalf("status %d for a closed proxy's credentials, want 407", res.StatusCode)
		}
		r := g.refusals.all()
		if strings.HasSuffix(r[len(r)-1], " "+egress.AuthUnknownUser) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d refusals, the last %q: the closed proxy's route is never dropped", len(r), r[len(r)-1])
		}
		time.Sleep(time.Millisecond)
	}
	if n := len(g.site.seen()); n != 0 {
		t.Errorf("the site saw %d requests", n)
	}
}
