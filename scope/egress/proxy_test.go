package egress_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/scope/egress"
)

// rawRequest sends raw bytes to the proxy on a fresh connection and reads
// one response; the connection is returned for tunnels and upgrades.
func rawRequest(t testing.TB, r *rig, raw string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", r.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response to %q: %v", raw, err)
	}
	return res, c, br
}

func TestForward(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		host       string // host in the request-target; the port is the backend's
		wantStatus int
		wantRule   string // X-Browsergate-Denied, "" when allowed
		wantLookup int    // lookups of host
		wantHits   int64  // requests the backend saw
		wantDials  int
	}{
		{name: "allowed name", host: "app.test", wantStatus: 200, wantLookup: 1, wantHits: 1, wantDials: 1},
		{name: "allowed name uppercase", host: "APP.test", wantStatus: 200, wantLookup: 0, wantHits: 1, wantDials: 1},
		{name: "denied name is not resolved", host: "denied.test", wantStatus: 403, wantRule: "not in allowed_domains"},
		{name: "name resolving to a denied address", host: "canary.test", wantStatus: 403, wantRule: "address class loopback", wantLookup: 1},
		{name: "mixed answer set", host: "mixed.test", wantStatus: 403, wantRule: "address class loopback", wantLookup: 1},
		{name: "nxdomain", host: "nx.test", wantStatus: 502, wantRule: "dns", wantLookup: 1},
		{name: "allowed IP literal is not resolved", host: "127.0.0.1", wantStatus: 200, wantHits: 1, wantDials: 1},
		{name: "denied IP literal", host: "127.0.0.2", wantStatus: 403, wantRule: "address class loopback"},
		{name: "denied IPv6 literal", host: "[::1]", wantStatus: 403, wantRule: "address class loopback"},
		{name: "policy panic fails closed", host: "boom.test", wantStatus: 403, wantRule: "policy error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			r.policy.hosts["nx.test"] = true
			r.policy.panicOn = "boom.test"
			res, err := r.client().Get(r.url("http", tc.host, "/page"))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", res.StatusCode, tc.wantStatus, body)
			}
			if got := res.Header.Get("X-Browsergate-Denied"); got != tc.wantRule {
				t.Errorf("X-Browsergate-Denied %q, want %q", got, tc.wantRule)
			}
			if tc.wantRule != "" && res.Header.Get("X-Browsergate-Reason") == "" {
				t.Error("a refusal has no X-Browsergate-Reason")
			}
			if got := r.resolver.count(tc.host); got != tc.wantLookup {
				t.Errorf("%d lookups of %s, want %d", got, tc.host, tc.wantLookup)
			}
			if got := r.backend.hits.Load(); got != tc.wantHits {
				t.Errorf("backend saw %d requests, want %d", got, tc.wantHits)
			}
			if got := r.canary.hits.Load(); got != 0 {
				t.Errorf("canary saw %d requests", got)
			}
			dials := r.dials.dialed()
			if len(dials) != tc.wantDials {
				t.Fatalf("dialled %v, want %d dials", dials, tc.wantDials)
			}
			for _, a := range dials {
				if want := fmt.Sprintf("127.0.0.1:%d", r.backend.port()); a != want {
					t.Errorf("dialled %s, want only the checked %s", a, want)
				}
			}
			d := r.lastDecision(t)
			if len(r.decisions.all()) != 1 {
				t.Errorf("%d decisions, want 1", len(r.decisions.all()))
			}
			if d.Allowed != (tc.wantRule == "") || d.Status != tc.wantStatus || d.Method != "GET" || d.Port != r.backend.port() {
				t.Errorf("decision %+v does not match the outcome", d)
			}
			if tc.wantRule != "" && d.Rule != tc.wantRule {
				t.Errorf("decision rule %q, want %q", d.Rule, tc.wantRule)
			}
			if d.Allowed && d.Dialed.String() != dials[0] {
				t.Errorf("decision dialled %s, transport dialled %s", d.Dialed, dials[0])
			}
		})
	}
}

func TestForwardFailures(t *testing.T) {
	t.Parallel()
	closedPort := func(t *testing.T) uint16 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return netip.MustParseAddrPort(ln.Addr().String()).Port()
	}
	blockUntilDone := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	tests := []struct {
		name       string
		config     func(*egress.Config)
		port       func(*testing.T) uint16
		wantStatus int
		wantRule   string
	}{
		{
			name: "resolver timeout",
			config: func(c *egress.Config) {
				c.ResolveTimeout = 10 * time.Millisecond
				c.Resolver = resolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
					return nil, blockUntilDone(ctx)
				})
			},
			wantStatus: 504, wantRule: "dns",
		},
		{
			name: "empty answer",
			config: func(c *egress.Config) {
				c.Resolver = resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return nil, nil })
			},
			wantStatus: 502, wantRule: "dns",
		},
		{name: "dial refused", port: closedPort, wantStatus: 502, wantRule: "dial"},
		{
			name: "dial timeout",
			config: func(c *egress.Config) {
				c.DialTimeout = 10 * time.Millisecond
				c.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) { return nil, blockUntilDone(ctx) }
			},
			wantStatus: 504, wantRule: "dial",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{config: tc.config})
			port := r.backend.port()
			if tc.port != nil {
				port = tc.port(t)
			}
			res, err := r.client().Get(fmt.Sprintf("http://app.test:%d/", port))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.wantStatus || res.Header.Get("X-Browsergate-Denied") != tc.wantRule {
				t.Fatalf("got %d %q, want %d %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), tc.wantStatus, tc.wantRule)
			}
			if r.backend.hits.Load() != 0 || r.canary.hits.Load() != 0 {
				t.Error("a server saw the request")
			}
			if d := r.lastDecision(t); d.Allowed || d.Rule != tc.wantRule || d.Status != tc.wantStatus {
				t.Errorf("decision %+v", d)
			}
		})
	}
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// TestRebinding uses a resolver that answers the allowed address on odd
// lookups and the denied canary on even ones, and a client that keeps its
// connections alive. Every request or tunnel must cost exactly one lookup,
// every dial must go to the checked allowed address, and the canary must see
// nothing. The ttl0 variant answers the same address every time: the
// proxy caches nothing, so it still looks up once per request.
func TestRebinding(t *testing.T) {
	t.Parallel()
	const n = 20
	for _, tc := range []struct {
		name      string
		tls       bool
		alternate bool
	}{
		{name: "forward alternating", alternate: true},
		{name: "connect alternating", tls: true, alternate: true},
		{name: "forward ttl0"},
		{name: "connect ttl0", tls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{tls: tc.tls})
			r.resolver.answer = func(_ context.Context, _ string, k int) ([]netip.Addr, error) {
				if tc.alternate && k%2 == 0 {
					return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
				}
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			client := r.client()
			if tc.tls {
				// One tunnel per request: each CONNECT is a fresh check.
				client.Transport.(*http.Transport).DisableKeepAlives = true
			}
			scheme := "http"
			if tc.tls {
				scheme = "https"
			}
			ok := 0
			for i := 1; i <= n; i++ {
				res, err := client.Get(r.url(scheme, "rebind.test", fmt.Sprintf("/%d", i)))
				if err != nil {
					if tc.tls && (!tc.alternate || i%2 == 1) {
						t.Fatalf("request %d: %v", i, err)
					}
					continue // a refused CONNECT is an error for the client
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == 200 {
					ok++
				}
			}
			wantOK := n
			if tc.alternate {
				wantOK = n / 2
			}
			if ok != wantOK {
				t.Errorf("%d requests succeeded, want %d", ok, wantOK)
			}
			if got := r.resolver.count("rebind.test"); got != n {
				t.Errorf("%d lookups for %d requests, want exactly one each", got, n)
			}
			want := fmt.Sprintf("127.0.0.1:%d", r.backend.port())
			dials := r.dials.dialed()
			if len(dials) == 0 || len(dials) > wantOK {
				t.Errorf("%d dials for %d allowed requests", len(dials), wantOK)
			}
			for _, a := range dials {
				if a != want {
					t.Errorf("dialled %s, want only the checked %s", a, want)
				}
			}
			if got := r.canary.hits.Load(); got != 0 {
				t.Errorf("canary saw %d requests", got)
			}
			if got := r.backend.hits.Load(); got != int64(wantOK) {
				t.Errorf("backend saw %d requests, want %d", got, wantOK)
			}
			if got := len(r.decisions.all()); got != n {
				t.Errorf("%d decisions for %d requests", got, n)
			}
		})
	}
}

func TestHostHeaderIsIgnored(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	port := r.backend.port()

	res, _, _ := rawRequest(t, r, fmt.Sprintf("GET http://app.test:%d/ HTTP/1.1\r\nHost: canary.test:%d\r\n\r\n", port, port))
	if res.StatusCode != 200 {
		t.Fatalf("allowed target with a foreign Host header: status %d", res.StatusCode)
	}
	if got, want := res.Header.Get("X-Seen-Host"), fmt.Sprintf("app.test:%d", port); got != want {
		t.Errorf("upstream saw Host %q, want the target's %q", got, want)
	}

	res, _, _ = rawRequest(t, r, fmt.Sprintf("GET http://canary.test:%d/ HTTP/1.1\r\nHost: app.test:%d\r\n\r\n", port, port))
	if res.StatusCode != 403 {
		t.Fatalf("denied target with an allowed Host header: status %d", res.StatusCode)
	}
	if r.canary.hits.Load() != 0 || r.resolver.count("app.test") != 1 {
		t.Errorf("canary hits %d, app.test lookups %d", r.canary.hits.Load(), r.resolver.count("app.test"))
	}
}

// TestUserinfo: userinfo in the request-target is not turned into
// credentials for the upstream, and its password is not logged.
func TestUserinfo(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	res, _, _ := rawRequest(t, r, fmt.Sprintf("GET http://user:hunter2@app.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", r.backend.port()))
	if res.StatusCode != 200 || res.Header.Get("X-Seen-Authorization") != "" {
		t.Errorf("status %d, upstream saw Authorization %q", res.StatusCode, res.Header.Get("X-Seen-Authorization"))
	}
	if d := r.lastDecision(t); strings.Contains(d.Target, "hunter2") {
		t.Errorf("decision target %q holds the password", d.Target)
	}
}

// TestHeaderLimit: headers past MaxHeaderBytes are refused by the server
// before the proxy sees the request.
func TestHeaderLimit(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{config: func(c *egress.Config) { c.MaxHeaderBytes = 1 << 10 }})
	raw := fmt.Sprintf("GET http://app.test:%d/ HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", r.backend.port(), strings.Repeat("a", 64<<10))
	res, _, _ := rawRequest(t, r, raw)
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", res.StatusCode)
	}
	if r.policy.hostCalls.Load() != 0 || r.backend.hits.Load() != 0 {
		t.Error("an oversized request was processed")
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, raw string }{
		{"origin-form", "GET /page HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"https absolute-form", "GET https://app.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"ftp absolute-form", "GET ftp://app.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"port zero", "GET http://app.test:0/ HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"connect without port", "CONNECT app.test HTTP/1.1\r\nHost: app.test\r\n\r\n"},
		{"connect port out of range", "CONNECT app.test:70000 HTTP/1.1\r\nHost: app.test\r\n\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			res, _, _ := rawRequest(t, r, tc.raw)
			if res.StatusCode != 400 || res.Header.Get("X-Browsergate-Denied") != egress.RuleBadRequest {
				t.Errorf("status %d rule %q, want 400 %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), egress.RuleBadRequest)
			}
			if len(r.dials.dialed()) != 0 || r.policy.hostCalls.Load() != 0 {
				t.Error("a bad request reached the policy or a dial")
			}
			if d := r.lastDecision(t); d.Allowed || d.Status != 400 {
				t.Errorf("decision %+v", d)
			}
		})
	}
}

func TestOwnAddressRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, format string }{
		{"literal", "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"name", "GET http://self.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"unspecified", "GET http://0.0.0.0:%d/ HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"connect", "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			r.policy.addrs[netip.MustParseAddr("0.0.0.0")] = true
			port := netip.MustParseAddrPort(r.proxy.Addr()).Port()
			res, _, _ := rawRequest(t, r, fmt.Sprintf(tc.format, port))
			if res.StatusCode != 403 || res.Header.Get("X-Browsergate-Denied") != egress.RuleSelf {
				t.Errorf("status %d rule %q, want 403 %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), egress.RuleSelf)
			}
			if len(r.dials.dialed()) != 0 {
				t.Errorf("dialled %v", r.dials.dialed())
			}
		})
	}
}

// TestOwnPortElsewhereIsNotSelf: the proxy listens on 127.0.0.1; a site
// on another loopback address at the same port is someone else's, and a
// request to it goes through like any other.
func TestOwnPortElsewhereIsNotSelf(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	port := netip.MustParseAddrPort(r.proxy.Addr()).Port()
	site := newBackendOn(t, fmt.Sprintf("127.0.0.3:%d", port), false)
	r.policy.addrs[netip.MustParseAddr("127.0.0.3")] = true
	res, _, _ := rawRequest(t, r, fmt.Sprintf("GET http://127.0.0.3:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port))
	if res.StatusCode != 200 {
		t.Fatalf("status %d (rule %q), want 200 from the site on 127.0.0.3", res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
	}
	if site.hits.Load() == 0 {
		t.Error("the site on 127.0.0.3 saw no request")
	}
}

func TestListen(t *testing.T) {
	t.Parallel()
	if _, err := egress.New(egress.Config{}); !errors.Is(err, egress.ErrNoPolicy) {
		t.Errorf("New without a policy: %v, want ErrNoPolicy", err)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0", "127.0.0.1"} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			p, err := egress.New(egress.Config{Policy: newFakePolicy(nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Listen(addr); err == nil {
				t.Fatalf("Listen(%q) succeeded", addr)
			}
			if p.Addr() != "" {
				t.Errorf("Addr() = %q after a refused Listen", p.Addr())
			}
		})
	}
	t.Run("twice, then closed", func(t *testing.T) {
		t.Parallel()
		p, err := egress.New(egress.Config{Policy: newFakePolicy(nil)})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := p.Listen("localhost:0")
		if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") || p.Addr() != addr {
			t.Fatalf("Listen(localhost:0) = %q, %v; Addr() = %q", addr, err, p.Addr())
		}
		if _, err := p.Listen("127.0.0.1:0"); !errors.Is(err, egress.ErrListening) {
			t.Errorf("second Listen: %v, want ErrListening", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := p.Listen("127.0.0.1:0"); !errors.Is(err, egress.ErrClosed) {
			t.Errorf("Listen after Close: %v, want ErrClosed", err)
		}
	})
}

func TestClosed(t *testing.T) {
	t.Parallel()
	t.Run("nothing after close", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, rigOptions{})
		client := r.client()
		if err := r.proxy.Close(); err != nil {
			t.Fatal(err)
		}
		for _, scheme := range []string{"http", "https"} {
			res, err := client.Get(r.url(scheme, "app.test", "/"))
			if err == nil {
				res.Body.Close()
				t.Fatalf("%s request through a closed proxy got status %d", scheme, res.StatusCode)
			}
			if !isConnError(err) {
				t.Errorf("%s: %v", scheme, err)
			}
		}
		if r.backend.hits.Load() != 0 || len(r.dials.dialed()) != 0 || r.resolver.count("app.test") != 0 {
			t.Error("something went out after Close")
		}
	})
	t.Run("close during lookup", func(t *testing.T) {
		t.Parallel()
		started := make(chan struct{})
		r := newRig(t, rigOptions{config: func(c *egress.Config) {
			c.Resolver = resolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
				close(started)
				<-ctx.Done() // the lookup outlives Close's cancellation only until it returns
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			})
		}})
		errc := make(chan error, 1)
		go func() {
			res, err := r.client().Get(r.url("http", "app.test", "/"))
			if err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					err = errors.New("request succeeded")
				}
			}
			errc <- err
		}()
		<-started
		if err := r.proxy.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil && err.Error() == "request succeeded" {
			t.Fatal("a request in flight at Close was forwarded")
		}
		if r.backend.hits.Load() != 0 || len(r.dials.dialed()) != 0 {
			t.Errorf("dialled %v after Close", r.dials.dialed())
		}
	})
}
