package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestClientRefusedTurnOpensNoConnection: a request refused its turn at
// a host never reaches it, not even as a TCP connection. The server
// closes every connection after its answer, so that the second request
// needs a dial of its own; with one request per 1000 s, its turn comes
// long after its deadline, and the wait before the dial refuses it: the
// listener accepted the first request's connection and no other.
func TestClientRefusedTurnOpensNoConnection(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Listener = counting
	srv.Start()
	t.Cleanup(srv.Close)

	sc, err := scope.New(scope.Config{AllowedDomains: []string{"127.0.0.1"}, AllowPrivateCIDRs: []string{"127.0.0.1/32"}, AllowedPorts: []string{"1024-65535"}})
	if err != nil {
		t.Fatal(err)
	}
	var turns atomic.Int64
	gate, err := egress.New(egress.Config{Policy: sc, Logger: slog.New(slog.DiscardHandler), OnDecision: func(d egress.Decision) {
		if d.Rule == egress.RuleTurn {
			turns.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	c := &web.Client{Check: sc.Check, Dial: gate.DialContext, Limiter: web.NewHostLimiter(0.001), UserAgent: "browsergate-test"}
	t.Cleanup(c.CloseIdle)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	resp, err := c.Get(ctx, srv.URL+"/first", nil)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	_, _ = web.ReadCapped(resp.Body, 1024)
	resp.Body.Close()
	if n := counting.accepted.Load(); n != 1 {
		t.Fatalf("the first request opened %d connections, want 1", n)
	}

	resp, err = c.Get(ctx, srv.URL+"/second", nil)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the second request went at once, though 127.0.0.1 had had its turn")
	}
	if !strings.Contains(err.Error(), "waiting for its turn at 127.0.0.1") {
		t.Errorf("the second request: %v, want a wait for its turn at 127.0.0.1", err)
	}
	if n := counting.accepted.Load(); n != 1 {
		t.Errorf("the host accepted %d connections, want 1: the request refused its turn opened one", n)
	}
	if n := turns.Load(); n != 1 {
		t.Errorf("the egress gate reported %d dials refused their turn, want 1", n)
	}
}

// TestHostLimiterWaitHost: the browser's pacing counts by the host a URL
// names, an IP literal in any spelling as its one address, a name as
// itself (case aside). With one request per 1000 s, a second turn at the
// same host cannot come before a deadline a minute away and fails at
// once; another host has a budget of its own; rate 0 and a nil limiter
// pace nothing.
func TestHostLimiterWaitHost(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name        string
		first, then string
		shared      bool
	}{
		{name: "same name", first: "example.com", then: "example.com", shared: true},
		{name: "name in capitals", first: "example.com", then: "EXAMPLE.com", shared: true},
		{name: "mapped IPv4", first: "127.0.0.1", then: "[::ffff:127.0.0.1]", shared: true},
		{name: "IPv6 spellings", first: "[::1]", then: "[0:0::1]", shared: true},
		{name: "two names", first: "a.example", then: "b.example", shared: false},
		{name: "two addresses", first: "127.0.0.1", then: "127.0.0.3", shared: false},
		{name: "a name and an address", first: "localhost", then: "127.0.0.1", shared: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := web.NewHostLimiter(0.001)
			if err := l.WaitHost(ctx, tc.first); err != nil {
				t.Fatalf("the first turn at %s: %v", tc.first, err)
			}
			err := l.WaitHost(ctx, tc.then)
			switch {
			case tc.shared && err == nil:
				t.Errorf("%s had a turn at once after %s had one: they should share a budget", tc.then, tc.first)
			case tc.shared && !strings.Contains(err.Error(), "after the call's deadline"):
				t.Errorf("%s: %v, want a turn after the deadline", tc.then, err)
			case !tc.shared && err != nil:
				t.Errorf("%s waited on %s's budget: %v", tc.then, tc.first, err)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		for _, l := range []*web.HostLimiter{nil, web.NewHostLimiter(0)} {
			for range 3 {
				if err := l.WaitHost(ctx, "example.com"); err != nil {
					t.Errorf("a limiter of rate 0 or nil paced a request: %v", err)
				}
			}
			if l.Enabled() {
				t.Error("a limiter of rate 0 or nil says it is enabled")
			}
		}
	})
	t.Run("no host", func(t *testing.T) {
		t.Parallel()
		if err := web.NewHostLimiter(1).WaitHost(ctx, ""); !errors.Is(err, web.ErrNoHost) {
			t.Errorf("WaitHost(\"\") = %v, want ErrNoHost", err)
		}
	})
}
