package web_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// pathLog is a loopback server that records the path of every request it
// gets, in order.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (p *pathLog) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.paths)
}

func servePathLog(t *testing.T, addr string, h http.HandlerFunc) (string, *pathLog) {
	t.Helper()
	log := &pathLog{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.paths = append(log.paths, r.URL.Path)
		log.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// TestClientCountsRequestsByAddressDialled: requests_per_second_per_host
// counts by the address the pinned dial connected to, not by the name in
// the URL. With one request per 1000 s and a call deadline of a minute,
// the first request to 127.0.0.1 goes; the same server asked for as
// localhost, as [::ffff:127.0.0.1] and as a name resolving to 127.0.0.1,
// and reached by a redirect hop from another address (127.0.0.3, with a
// budget of its own), each fails at once waiting for its turn at
// 127.0.0.1. The server saw the first request and nothing else.
func TestClientCountsRequestsByAddressDialled(t *testing.T) {
	t.Parallel()
	target, seen := servePathLog(t, "127.0.0.1:0", nil)
	port := target[strings.LastIndex(target, ":")+1:]
	redirector, redirects := servePathLog(t, "127.0.0.3:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/hop", http.StatusFound)
	})
	sc, err := scope.New(scope.Config{
		AllowedDomains:    []string{"127.0.0.1", "127.0.0.3", "localhost", "[::ffff:7f00:1]", "app.test"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32", "127.0.0.3/32", "::1/128"}, // localhost: both of Chromium's loopback addresses
		AllowedPorts:      []string{"1024-65535"},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := &egress.StaticResolver{Hosts: map[string][]netip.Addr{
		"localhost": {netip.MustParseAddr("127.0.0.1")},
		"app.test":  {netip.MustParseAddr("127.0.0.1")},
	}}
	gate, err := egress.New(egress.Config{Policy: sc, Resolver: names, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	c := &web.Client{Check: sc.Check, Dial: gate.DialContext, Limiter: web.NewHostLimiter(0.001), UserAgent: "browsergate-test"}
	t.Cleanup(c.CloseIdle)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	resp, err := c.Get(ctx, target+"/first", nil)
	if err != nil {
		t.Fatalf("the first request to 127.0.0.1: %v", err)
	}
	resp.Body.Close()
	for _, u := range []string{
		"http://localhost:" + port + "/localhost",
		"http://[::ffff:127.0.0.1]:" + port + "/mapped",
		"http://app.test:" + port + "/name",
		redirector + "/redirect",
	} {
		resp, err := c.Get(ctx, u, nil)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: allowed at once, though its address 127.0.0.1 had had its turn", u)
			continue
		}
		if !strings.Contains(err.Error(), "waiting for its turn at 127.0.0.1") || !strings.Contains(err.Error(), "requests_per_second_per_host") {
			t.Errorf("%s: %v, want a wait for its turn at 127.0.0.1", u, err)
		}
	}
	if got := seen.seen(); !slices.Equal(got, []string{"/first"}) {
		t.Errorf("127.0.0.1 saw %v, want only /first: a request reached it without its turn", got)
	}
	if got := redirects.seen(); !slices.Equal(got, []string{"/redirect"}) {
		t.Errorf("127.0.0.3 saw %v, want its one /redirect (an address of its own, not held)", got)
	}
}
