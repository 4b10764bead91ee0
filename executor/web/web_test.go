package web_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// gatedClient is a Client as the executor makes one: the scope (127.0.0.1
// granted, nothing else) judges each URL, and the egress gate dials.
func gatedClient(t *testing.T, limiter *web.HostLimiter) *web.Client {
	t.Helper()
	sc, err := scope.New(scope.Config{AllowedDomains: []string{"127.0.0.1", "app.test"}, AllowPrivateCIDRs: []string{"127.0.0.1/32"},
		AllowedPorts: []string{"1024-65535"}})
	if err != nil {
		t.Fatal(err)
	}
	names := &egress.StaticResolver{Hosts: map[string][]netip.Addr{"app.test": {netip.MustParseAddr("127.0.0.1")}}}
	gate, err := egress.New(egress.Config{Policy: sc, Resolver: names, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	return &web.Client{Check: sc.Check, Dial: gate.DialContext, Limiter: limiter, UserAgent: "browsergate-test"}
}

// canary counts every request it gets, on 127.0.0.2 (outside the scope).
func canary(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// TestClientJudgesEveryHop: redirects are followed by hand, each judged
// before it is requested; a redirect out of the scope is refused naming
// its hop, and the canary it pointed at gets nothing; a sixth redirect is
// not followed.
func TestClientJudgesEveryHop(t *testing.T) {
	t.Parallel()
	canaryURL, hits := canary(t)
	var ua string
	mux := http.NewServeMux()
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			ua = r.UserAgent()
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, canaryURL+"/stolen", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := gatedClient(t, nil)
	ctx := context.Background()

	resp, err := c.Get(ctx, srv.URL+"/hop/5", nil)
	if err != nil {
		t.Fatalf("five redirects: %v", err)
	}
	body, _ := web.ReadCapped(resp.Body, 100)
	resp.Body.Close()
	if string(body) != "arrived" || len(resp.Hops) != 6 || resp.URL != srv.URL+"/hop/0" || ua != "browsergate-test" {
		t.Errorf("got %q at %s after %d hops (user agent %q)", body, resp.URL, len(resp.Hops), ua)
	}
	if _, err := c.Get(ctx, srv.URL+"/hop/6", nil); err == nil || !strings.Contains(err.Error(), "more than 5 redirects") {
		t.Errorf("six redirects: %v, want more than 5 redirects", err)
	}
	_, err = c.Get(ctx, srv.URL+"/away", nil)
	var ref *web.Refused
	if !errors.As(err, &ref) || ref.Hop != 1 || !strings.HasPrefix(ref.URL, canaryURL) {
		t.Errorf("redirect to the canary: %v, want refused at hop 1", err)
	}
	if _, err := c.Get(ctx, canaryURL+"/direct", nil); !errors.As(err, &ref) || ref.Hop != 0 {
		t.Errorf("the canary asked for: %v, want refused at hop 0", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary got %d requests", n)
	}
}

// TestReadCapped: a body over the cap is an error and nothing is returned.
func TestReadCapped(t *testing.T) {
	t.Parallel()
	if b, err := web.ReadCapped(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Errorf("at the cap: %q, %v", b, err)
	}
	if b, err := web.ReadCapped(strings.NewReader("123456"), 5); err == nil || b != nil {
		t.Errorf("over the cap: %q, %v; want an error and nothing", b, err)
	}
}

// TestHostLimiter: an address's second request within the rate's
// interval waits for its turn, and fails at once when the turn would come
// after the caller's deadline; an IPv4-mapped IPv6 address is its IPv4
// address (one budget); other addresses are not held; rate 0 holds
// nothing; an invalid address is refused.
func TestHostLimiter(t *testing.T) {
	t.Parallel()
	a, mapped, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:127.0.0.1"), netip.MustParseAddr("127.0.0.3")
	l := web.NewHostLimiter(0.5) // one request every 2 s
	if err := l.Wait(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx, a); err == nil {
		t.Error("a second request to the address within 2 s did not wait past a 500 ms deadline")
	}
	if err := l.Wait(ctx, mapped); err == nil {
		t.Error("the address spelled IPv4-mapped had a budget of its own")
	}
	if err := l.Wait(ctx, b); err != nil {
		t.Errorf("another address was held: %v", err)
	}
	if err := l.Wait(ctx, netip.Addr{}); !errors.Is(err, web.ErrNoDestination) {
		t.Errorf("no address: %v, want ErrNoDestination", err)
	}
	off := web.NewHostLimiter(0)
	for range 3 {
		if err := off.Wait(ctx, a); err != nil {
			t.Errorf("rate 0 held a request: %v", err)
		}
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClientIgnoresEnvironmentProxy: HTTP_PROXY and HTTPS_PROXY in the
// daemon's environment do not route the engine's requests (the proxy
// would be a way around the gate, and it would see every URL): the page
// is fetched directly, and the "proxy" (the canary) gets nothing.
func TestClientIgnoresEnvironmentProxy(t *testing.T) {
	canaryURL, hits := canary(t)
	t.Setenv("HTTP_PROXY", canaryURL)
	t.Setenv("HTTPS_PROXY", canaryURL)
	t.Setenv("NO_PROXY", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "direct") }))
	defer srv.Close()
	// By name: Go's environment proxy leaves loopback literals alone.
	byName := strings.Replace(srv.URL, "127.0.0.1", "app.test", 1)
	resp, err := gatedClient(t, nil).Get(context.Background(), byName+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := web.ReadCapped(resp.Body, 100)
	resp.Body.Close()
	if string(body) != "direct" || hits.Load() != 0 {
		t.Errorf("got %q; the environment's proxy saw %d request(s)", body, hits.Load())
	}
}
