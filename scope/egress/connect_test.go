package egress_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
)

func TestConnect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		host       string
		wantStatus int
		wantRule   string
	}{
		{name: "allowed name", host: "app.test", wantStatus: 200},
		{name: "allowed literal", host: "127.0.0.1", wantStatus: 200},
		{name: "denied name", host: "denied.test", wantStatus: 403, wantRule: "not in allowed_domains"},
		{name: "name resolving to a denied address", host: "canary.test", wantStatus: 403, wantRule: "address class loopback"},
		{name: "mixed answer set", host: "mixed.test", wantStatus: 403, wantRule: "address class loopback"},
		{name: "denied literal", host: "127.0.0.2", wantStatus: 403, wantRule: "address class loopback"},
		{name: "nxdomain", host: "nx.test", wantStatus: 502, wantRule: "dns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{tls: true})
			r.policy.hosts["nx.test"] = true

			// Through a real HTTPS client first.
			res, err := r.client().Get(r.url("https", tc.host, "/secure"))
			if tc.wantStatus == 200 {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || string(body) != "hello from /secure" {
					t.Fatalf("status %d body %q", res.StatusCode, body)
				}
			} else if err == nil {
				res.Body.Close()
				t.Fatalf("CONNECT to %s succeeded", tc.host)
			}

			// Then raw, to read the proxy's own answer.
			res, _, _ = rawRequest(t, r, fmt.Sprintf("CONNECT %s:%d HTTP/1.1\r\nHost: %[1]s:%[2]d\r\n\r\n", tc.host, r.backend.port()))
			if res.StatusCode != tc.wantStatus || res.Header.Get("X-Browsergate-Denied") != tc.wantRule {
				t.Errorf("raw CONNECT: %d %q, want %d %q", res.StatusCode, res.Header.Get("X-Browsergate-Denied"), tc.wantStatus, tc.wantRule)
			}
			if r.canary.hits.Load() != 0 {
				t.Error("canary saw a request")
			}
			want := fmt.Sprintf("127.0.0.1:%d", r.backend.port())
			for _, a := range r.dials.dialed() {
				if a != want {
					t.Errorf("dialled %s, want only %s", a, want)
				}
			}
			ds := r.decisions.all()
			if len(ds) != 2 {
				t.Fatalf("%d decisions for two CONNECTs", len(ds))
			}
			for _, d := range ds {
				if d.Method != "CONNECT" || d.Allowed != (tc.wantStatus == 200) || d.Status != tc.wantStatus || d.Rule == "" {
					t.Errorf("decision %+v", d)
				}
			}
		})
	}
}

// TestConnectEarlyData sends the first tunnel bytes in the same write as the
// CONNECT head: they must reach the upstream, not be lost in a buffer.
func TestConnectEarlyData(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	port := r.backend.port()
	raw := fmt.Sprintf("CONNECT app.test:%d HTTP/1.1\r\nHost: app.test\r\n\r\nGET /early HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n", port)
	res, _, br := rawRequest(t, r, raw)
	if res.StatusCode != 200 {
		t.Fatalf("CONNECT status %d", res.StatusCode)
	}
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	if string(body) != "hello from /early" {
		t.Errorf("tunnelled response %q", body)
	}
}

func TestWebSocket(t *testing.T) {
	t.Parallel()
	t.Run("through CONNECT", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, rigOptions{})
		dialer := websocket.Dialer{Proxy: http.ProxyURL(r.proxyURL)}
		c, _, err := dialer.Dial(r.url("ws", "app.test", "/ws"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.WriteMessage(websocket.TextMessage, []byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, msg, err := c.ReadMessage(); err != nil || string(msg) != "ping" {
			t.Fatalf("echo %q, %v", msg, err)
		}
		if d := r.lastDecision(t); d.Method != "CONNECT" || !d.Allowed {
			t.Errorf("decision %+v", d)
		}

		// Close ends an open tunnel: the socket sees the connection go.
		if err := r.proxy.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadMessage(); err == nil {
			t.Error("the tunnel outlived Close")
		}
	})
	t.Run("denied through CONNECT", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, rigOptions{})
		dialer := websocket.Dialer{Proxy: http.ProxyURL(r.proxyURL)}
		if c, _, err := dialer.Dial(r.url("ws", "canary.test", "/ws"), nil); err == nil {
			c.Close()
			t.Fatal("WebSocket to the canary succeeded")
		}
		if r.canary.hits.Load() != 0 || len(r.dials.dialed()) != 0 {
			t.Error("the canary was reached")
		}
	})
	for _, tc := range []struct {
		name, host string
		want       int
	}{
		{"absolute-form upgrade", "app.test", 101},
		{"absolute-form upgrade denied", "canary.test", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, rigOptions{})
			raw := fmt.Sprintf("GET http://%s:%d/ws HTTP/1.1\r\nHost: %[1]s:%[2]d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", tc.host, r.backend.port())
			res, c, br := rawRequest(t, r, raw)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			if tc.want != 101 {
				if r.canary.hits.Load() != 0 {
					t.Error("the canary was reached")
				}
				return
			}
			if _, err := c.Write(maskedTextFrame("hello")); err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 2)
			if _, err := io.ReadFull(br, head); err != nil {
				t.Fatal(err)
			}
			msg := make([]byte, head[1]&0x7f)
			if _, err := io.ReadFull(br, msg); err != nil || head[0] != 0x81 || string(msg) != "hello" {
				t.Fatalf("echo frame %x %q, %v", head, msg, err)
			}
			if d := r.lastDecision(t); !d.Allowed || d.Status != 101 {
				t.Errorf("decision %+v", d)
			}

			// Close ends an upgraded connection too.
			if err := r.proxy.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := br.ReadByte(); err == nil {
				t.Error("the upgraded connection outlived Close")
			}
		})
	}
}

// maskedTextFrame is one client-to-server WebSocket text frame (RFC 6455
// section 5.2) with a short payload.
func maskedTextFrame(s string) []byte {
	var b bytes.Buffer
	mask := [4]byte{1, 2, 3, 4}
	b.WriteByte(0x81)
	b.WriteByte(0x80 | byte(len(s)))
	b.Write(mask[:])
	for i := range len(s) {
		b.WriteByte(s[i] ^ mask[i%4])
	}

	return b.Bytes()
}

// TestCloseUpstreams: closing the upstreams of the hosts a tightened rule
// no longer allows ends their open tunnels (a WebSocket the page opened
// before) and leaves the others working.
func TestCloseUpstreams(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	dialer := websocket.Dialer{Proxy: http.ProxyURL(r.proxyURL)}
	open := func(host string) *websocket.Conn {
		c, _, err := dialer.Dial(r.url("ws", host, "/ws"), nil)
		if err != nil {
			t.Fatalf("WebSocket to %s: %v", host, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	echo := func(c *websocket.Conn) error {
		if err := c.WriteMessage(websocket.TextMessage, []byte("ping")); err != nil {
			return err
		}
		_, msg, err := c.ReadMessage()
		if err == nil && string(msg) != "ping" {
			err = fmt.Errorf("echo %q", msg)
		}
		return err
	}
	kept, cut := open("app.test"), open("127.0.0.1")
	for _, c := range []*websocket.Conn{kept, cut} {
		if err := echo(c); err != nil {
			t.Fatalf("before: %v", err)
		}
	}
	var asked []string
	n := r.proxy.CloseUpstreams(func(host string) bool {
		asked = append(asked, host)
		return host == "app.test"
	})
	if n != 1 {
		t.Errorf("CloseUpstreams closed %d connection(s), want 1 (asked about %q)", n, asked)
	}
	if err := echo(cut); err == nil {
		t.Errorf("the WebSocket to 127.0.0.1 still works after its upstream was closed")
	}
	if err := echo(kept); err != nil {
		t.Errorf("the WebSocket to app.test, which was kept, broke: %v", err)
	}
	if n := r.proxy.CloseUpstreams(func(string) bool { return true }); n != 0 {
		t.Errorf("keeping every host closed %d connection(s)", n)
	}
}
