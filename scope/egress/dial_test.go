package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/browsergate/browsergate/scope/egress"
)

// TestDialContext proves the in-process dialer is the proxy's gate: an
// allowed name is resolved once and its checked address dialled; a name
// with one forbidden answer, a forbidden literal, and a name the policy
// refuses are refused with a *RefusedError before any connection, and
// every attempt is reported once to OnDecision.
func TestDialContext(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted.Done()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	policy := newFakePolicy([]string{"good.test", "mixed.test"}, "127.0.0.1")
	res := newFakeResolver("good.test", "127.0.0.1", "mixed.test", "127.0.0.1,127.0.0.2")
	var mu sync.Mutex
	var decisions []egress.Decision
	var dialled []string
	p, err := egress.New(egress.Config{Policy: policy, Resolver: res,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		OnDecision: func(d egress.Decision) { mu.Lock(); decisions = append(decisions, d); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	accepted.Add(1)
	c, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("good.test", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("allowed name refused: %v", err)
	}
	c.Close()
	accepted.Wait()
	for _, addr := range []string{
		net.JoinHostPort("mixed.test", strconv.Itoa(port)), // one answer is forbidden
		net.JoinHostPort("127.0.0.2", strconv.Itoa(port)),  // a forbidden literal
		net.JoinHostPort("evil.test", strconv.Itoa(port)),  // a name the policy refuses
		net.JoinHostPort("::1", strconv.Itoa(port)),        // IPv6 loopback, not granted
		"good.test", // no port
	} {
		_, err := p.DialContext(context.Background(), "tcp", addr)
		var ref *egress.RefusedError
		if !errors.As(err, &ref) || ref.Rule == "" || ref.Reason == "" {
			t.Errorf("DialContext(%s) = %v, want a *RefusedError with rule and reason", addr, err)
		}
	}
	if res.count("good.test") != 1 || res.count("evil.test") != 0 {
		t.Errorf("lookups: good.test %d, evil.test %d; want good.test once, evil.test never (refused by name first)", res.count("good.test"), res.count("evil.test"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialled) != 1 || dialled[0] != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)).String() {
		t.Errorf("dialled %v, want only the checked literal of good.test", dialled)
	}
	if len(decisions) != 6 || !decisions[0].Allowed || decisions[1].Allowed || decisions[0].Method != "DIAL" {
		t.Errorf("decisions = %+v, want 6, the first allowed (DIAL) and the rest refused", decisions)
	}
}
