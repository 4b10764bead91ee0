package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/scope/egress"
)

// rawUpstream serves one connection on 127.0.0.1 (app.test's address in
// the rig): it reads the request's head, writes resp, then runs after
// with the connection. It returns the port.
func rawUpstream(t *testing.T, resp string, after func(c net.Conn)) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, resp)
		after(c)
	}()
	return netip.MustParseAddrPort(ln.Addr().String()).Port()
}

// upgradeRequest is an absolute-form WebSocket upgrade to app.test:%d.
const upgradeRequest = "GET http://app.test:%d/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

// TestCloseEndsAnUpgradeTheClientHoldsOpen: an absolute-form upgrade
// whose upstream stops sending while the client keeps its side open (the
// forwarder then waits on the client) is ended by Close, which returns.
func TestCloseEndsAnUpgradeTheClientHoldsOpen(t *testing.T) {
	r := newRig(t, rigOptions{})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	port := rawUpstream(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", func(c net.Conn) {
		c.(*net.TCPConn).CloseWrite()
		<-hold
	})
	res, _, br := rawRequest(t, r, fmt.Sprintf(upgradeRequest, port))
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade status %d", res.StatusCode)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the client read %v after the upstream's half-close, want EOF", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- r.proxy.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return while the client held an upgraded connection open")
	}
}

// TestUpgradeToAnotherProtocolIsRefused: an upstream that answers a
// WebSocket upgrade by switching to another protocol (after early hints,
// or at once) gets the forwarder's refusal: the client is answered 502
// (not an empty 200), and the upstream's connection is closed, none left
// to the proxy.
func TestUpgradeToAnotherProtocolIsRefused(t *testing.T) {
	t.Parallel()
	for name, answer := range map[string]string{
		"at once":           "",
		"after early hints": "HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			upstreamEnd := make(chan error, 1)
			port := rawUpstream(t, answer+"HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\n", func(c net.Conn) {
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, err := c.Read(make([]byte, 1))
				upstreamEnd <- err
			})
			res, _, br := rawRequest(t, r, fmt.Sprintf(upgradeRequest, port))
			for res.StatusCode >= 100 && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols {
				var err error
				if res, err = http.ReadResponse(br, nil); err != nil {
					t.Fatalf("read the response after %s: %v", name, err)
				}
			}
			if res.StatusCode != http.StatusBadGateway {
				t.Errorf("the client got %d for an upgrade to another protocol, want 502", res.StatusCode)
			}
			if err := <-upstreamEnd; err != io.EOF {
				t.Errorf("the upstream's connection after the refused upgrade: %v, want it closed (EOF)", err)
			}
			if n := r.proxy.CloseUpstreams(func(string) bool { return false }); n != 0 {
				t.Errorf("%d upstream connection(s) left open after the refused upgrade", n)
			}
		})
	}
}

// TestGatewayCloseWaitsForARefusal: Close returns only once a refusal in
// progress (its OnRefused running) has ended.
func TestGatewayCloseWaitsForARefusal(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	var returned atomic.Bool
	g, err := egress.NewGateway(egress.GatewayConfig{OnRefused: func(netip.AddrPort, string) {
		close(entered)
		time.Sleep(300 * time.Millisecond)
		returned.Store(true)
	}})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := g.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n")
	<-entered
	g.Close()
	if !returned.Load() {
		t.Error("Close returned while a refusal was still running")
	}
}
