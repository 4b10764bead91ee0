package egress_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestGatewayExpectReportsTheProbedHost: a request for the host Expect
// waits for is reported with its client's address, whether it is
// absolute-form or CONNECT and without credentials (it is refused all the
// same: 407, nothing dialled); a request for another host is not; after
// stop, nothing is.
func TestGatewayExpectReportsTheProbedHost(t *testing.T) {
	t.Parallel()
	g := newGwRig(t, nil)
	send := func(t *testing.T, line string) int {
		t.Helper()
		c, err := net.Dial("tcp", g.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, line)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct{ name, request string }{
		{"absolute-form", "GET http://Probe-1.browsergate.invalid/x HTTP/1.1\r\nHost: probe-1.browsergate.invalid\r\n\r\n"},
		{"CONNECT", "CONNECT probe-1.browsergate.invalid:443 HTTP/1.1\r\nHost: probe-1.browsergate.invalid:443\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen, stop := g.gateway.Expect("probe-1.browsergate.invalid")
			defer stop()
			if code := send(t, "GET http://other.invalid/ HTTP/1.1\r\nHost: other.invalid\r\n\r\n"); code != http.StatusProxyAuthRequired {
				t.Errorf("another host: %d, want 407", code)
			}
			select {
			case a := <-seen:
				t.Fatalf("a request for another host was reported (from %s)", a)
			default:
			}
			if code := send(t, tc.request); code != http.StatusProxyAuthRequired {
				t.Errorf("the probed host without credentials: %d, want 407", code)
			}
			select {
			case a := <-seen:
				if !a.Addr().IsLoopback() {
					t.Errorf("reported from %s, want the client's loopback address", a)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the probed host's request was not reported")
			}
		})
	}
	seen, stop := g.gateway.Expect("probe-2.browsergate.invalid")
	stop()
	send(t, "GET http://probe-2.browsergate.invalid/ HTTP/1.1\r\nHost: probe-2.browsergate.invalid\r\n\r\n")
	select {
	case <-seen:
		t.Error("a request was reported after stop")
	default:
	}
	if n := len(g.a.dials.dialed()) + len(g.b.dials.dialed()); n != 0 {
		t.Errorf("%d dial(s) for requests without credentials", n)
	}
}
