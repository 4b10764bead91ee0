package egress_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/browsergate/browsergate/scope/egress"
)

// rawServer listens on 127.0.0.1 and hands every accepted connection to
// serve, closing it afterwards.
func rawServer(t *testing.T, serve func(net.Conn)) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// tarpit reads whatever comes and never answers, until the peer leaves.
func tarpit(c net.Conn) { io.Copy(io.Discard, c) }

// TestResponseHeaderTimeout: an upstream that accepts the request and never
// answers is given up on with 504, rule "upstream".
func TestResponseHeaderTimeout(t *testing.T) {
	t.Parallel()
	port := rawServer(t, tarpit)
	r := newRig(t, rigOptions{config: func(c *egress.Config) { c.ResponseHeaderTimeout = 100 * time.Millisecond }})
	res, err := r.client().Get(fmt.Sprintf("http://app.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 504 || res.Header.Get("X-Browsergate-Denied") != egress.RuleUpstream {
		t.Fatalf("got %d %q, want 504 %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), egress.RuleUpstream)
	}
	if d := r.lastDecision(t); d.Allowed || d.Status != 504 || d.Rule != egress.RuleUpstream {
		t.Errorf("decision %+v", d)
	}
}

// openTunnel sends CONNECT app.test:port through the rig's proxy and
// returns the client side of the established tunnel.
func openTunnel(t *testing.T, r *rig, port uint16) (net.Conn, *bufio.Reader) {
	t.Helper()
	res, c, br := rawRequest(t, r, fmt.Sprintf("CONNECT app.test:%d HTTP/1.1\r\nHost: app.test\r\n\r\n", port))
	if res.StatusCode != 200 {
		t.Fatalf("CONNECT status %d", res.StatusCode)
	}
	return c, br
}

// TestTunnelIdleTimeout: a tunnel in which nothing moves either way is
// closed by the proxy.
func TestTunnelIdleTimeout(t *testing.T) {
	t.Parallel()
	port := rawServer(t, tarpit)
	r := newRig(t, rigOptions{config: func(c *egress.Config) { c.TunnelIdleTimeout = 100 * time.Millisecond }})
	c, br := openTunnel(t, r, port)
	// The bound is only there so that a broken proxy fails the test
	// instead of hanging it.
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := br.ReadByte()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the idle tunnel was still open after 10s")
	}
	if !errors.Is(err, io.EOF) {
		t.Fatalf("read on the idle tunnel: %v, want EOF", err)
	}
}

// TestTunnelKeptOpenByTraffic: a tunnel stays open as long as bytes move in
// either direction, even when one direction is silent throughout (a
// download with nothing to upload) and the whole exchange lasts several
// idle periods. The idle timeout is 13 ticks, so a loaded machine that
// stalls for a few ticks does not look like an idle tunnel.
func TestTunnelKeptOpenByTraffic(t *testing.T) {
	t.Parallel()
	const idle, tick, ticks = 400 * time.Millisecond, 30 * time.Millisecond, 50
	for _, tc := range []struct {
		name  string
		serve func(net.Conn)
		talk  func(t *testing.T, c net.Conn, br *bufio.Reader)
	}{
		{
			name:  "echo",
			serve: func(c net.Conn) { io.Copy(c, c) },
			talk: func(t *testing.T, c net.Conn, br *bufio.Reader) {
				for i := range ticks {
					if _, err := c.Write([]byte{byte(i)}); err != nil {
						t.Fatalf("write %d: %v", i, err)
					}
					if b, err := br.ReadByte(); err != nil || b != byte(i) {
						t.Fatalf("echo %d: %v %v", i, b, err)
					}
					time.Sleep(tick)
				}
			},
		},
		{
			name: "download only",
			serve: func(c net.Conn) {
				for i := range ticks {
					if _, err := c.Write([]byte{byte(i)}); err != nil {
						return
					}
					time.Sleep(tick)
				}
			},
			talk: func(t *testing.T, c net.Conn, br *bufio.Reader) {
				for i := range ticks {
					if b, err := br.ReadByte(); err != nil || b != byte(i) {
						t.Fatalf("byte %d of the download: %v %v", i, b, err)
					}
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := rawServer(t, tc.serve)
			r := newRig(t, rigOptions{config: func(c *egress.Config) { c.TunnelIdleTimeout = idle }})
			c, br := openTunnel(t, r, port)
			c.SetDeadline(time.Now().Add(30 * time.Second))
			tc.talk(t, c, br)
		})
	}
}
