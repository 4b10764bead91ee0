package egress_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/scope/egress"
)

// TestCloseLeavesNoGoroutines opens every kind of connection the proxy
// serves (a kept-alive request, a CONNECT tunnel, an absolute-form upgrade,
// a request stuck in its lookup), closes the proxy, and then finds no
// goroutine running the proxy's code: Close waits for the requests in
// flight, and nothing is left behind. It is not parallel, so no other
// test's proxy runs meanwhile.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	stuck := make(chan struct{})
	r := newRig(t, rigOptions{config: func(c *egress.Config) {
		base := c.Resolver
		c.Resolver = resolverFunc(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
			if host == "stuck.test" {
				close(stuck)
				<-ctx.Done()
				// A resolver slow to unwind: Close must still wait.
				time.Sleep(200 * time.Millisecond)
				return nil, ctx.Err()
			}
			return base.LookupNetIP(ctx, network, host)
		})
	}})
	r.policy.hosts["stuck.test"] = true
	client := r.client()
	res, err := client.Get(r.url("http", "app.test", "/"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	ws, _, err := (&websocket.Dialer{Proxy: http.ProxyURL(r.proxyURL)}).Dial(r.url("ws", "app.test", "/ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	up, _, _ := rawRequest(t, r, fmt.Sprintf("GET http://app.test:%d/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", r.backend.port()))
	if up.StatusCode != 101 {
		t.Fatalf("upgrade status %d", up.StatusCode)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := client.Get(r.url("http", "stuck.test", "/")); err == nil {
			res.Body.Close()
		}
	}()
	<-stuck

	// The detector must see the proxy's goroutines while it runs.
	if n := len(proxyGoroutines()); n < 3 {
		t.Fatalf("%d goroutines in the proxy before Close, want at least the tunnel, the upgrade and the stuck lookup", n)
	}
	if err := r.proxy.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited for the request stuck in its lookup: its decision was
	// made before Close returned.
	stuckDecided := false
	for _, d := range r.decisions.all() {
		stuckDecided = stuckDecided || d.Host == "stuck.test"
	}
	if !stuckDecided {
		t.Error("Close returned before the request stuck in its lookup was decided")
	}
	// A goroutine that has signalled it is done may still be returning
	// from the proxy's code for a moment (on a loaded machine, for a few
	// milliseconds); one that is still there seconds later is a leak.
	left := proxyGoroutines()
	for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = proxyGoroutines() {
		time.Sleep(10 * time.Millisecond)
	}
	for _, g := range left {
		t.Errorf("goroutine still in the proxy 5 s after Close:\n%s", g)
	}
	if n := r.proxy.CloseUpstreams(func(string) bool { return false }); n != 0 {
		t.Errorf("%d upstream connection(s) still open after Close", n)
	}
	<-done
	client.CloseIdleConnections()
}

// proxyGoroutines returns the stacks of goroutines running code of package
// egress (not of its tests). A goroutine counts by its frames, not by the
// function that created it, and one that has returned (in goexit) does not.
func proxyGoroutines() []string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		frames, _, _ := strings.Cut(g, "\ncreated by ")
		if strings.Contains(frames, "/scope/egress.") && !strings.Contains(frames, "runtime.goexit1(") {
			out = append(out, g)
		}
	}
	return out
}
