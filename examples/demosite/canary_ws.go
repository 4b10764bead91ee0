package demosite

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// NetCanary is a canary that sees more than HTTP requests: it counts every
// TCP connection its listener accepts and accepts WebSocket upgrades (each
// one also counted as a request). A bare connection is already a leak: a
// preconnect hint, or a navigation blocked at the request level, opens a
// socket to the forbidden address before any request is sent, and that is
// enough to scan ports. Put it on an address the scope forbids; a test
// passes only if Hits and Conns both stay at zero.
type NetCanary struct {
	// Canary counts and records the HTTP requests (WebSocket upgrades
	// included), so a NetCanary can stand where a *Canary is expected.
	Canary

	conns    atomic.Int64
	upgrades atomic.Int64
	mu       sync.Mutex
	peers    []string
}

// ListenCanary serves a NetCanary on addr ("127.0.0.2:0") and returns it,
// its base URL ("http://127.0.0.2:PORT", no trailing slash) and a function
// that stops it. WebSocket clients reach it at ws://127.0.0.2:PORT/ws/...
// (any path upgrades).
func ListenCanary(addr string) (c *NetCanary, baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("canary listen on %s: %w", addr, err)
	}
	c, baseURL, stop = ServeCanary(ln)
	return c, baseURL, stop, nil
}

// ServeCanary is ListenCanary on a listener already made (one made in a
// test's network namespace, say); stop closes it.
func ServeCanary(ln net.Listener) (c *NetCanary, baseURL string, stop func()) {
	c = &NetCanary{}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(&countingListener{Listener: ln, c: c})
	return c, "http://" + ln.Addr().String(), func() { srv.Close() }
}

// Conns is the number of TCP connections the canary has accepted.
func (c *NetCanary) Conns() int64 { return c.conns.Load() }

// Upgrades is the number of WebSocket handshakes the canary completed.
func (c *NetCanary) Upgrades() int64 { return c.upgrades.Load() }

// Peers lists the remote addresses of the connections the canary accepted.
func (c *NetCanary) Peers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.peers...)
}

// Clean reports whether the canary has seen nothing at all.
func (c *NetCanary) Clean() bool { return c.Conns() == 0 && c.Hits() == 0 }

// String summarises what the canary saw, for test failure messages.
func (c *NetCanary) String() string {
	return fmt.Sprintf("%d connection(s) from %v, %d request(s) [%s], %d WebSocket upgrade(s)",
		c.Conns(), c.Peers(), c.Hits(), strings.Join(c.Seen(), "; "), c.Upgrades())
}

// wsUpgrader accepts any origin: the canary wants every attempt to succeed
// as far as it can, so nothing but the gate stands in the way.
var wsUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// ServeHTTP counts the request and upgrades it when it asks for a
// WebSocket; other requests get the plain canary answer.
func (c *NetCanary) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		c.Canary.ServeHTTP(w, r)
		return
	}
	c.record("WS " + r.Host + r.URL.String())
	conn, err := wsUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c.upgrades.Add(1)
	defer conn.Close()
	_ = conn.WriteMessage(websocket.TextMessage, []byte("canary: this socket should never have opened"))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// record counts a request on the embedded Canary without writing a
// response (a WebSocket handshake writes its own).
func (c *NetCanary) record(line string) {
	c.hits.Add(1)
	c.Canary.mu.Lock()
	c.seen = append(c.seen, line)
	c.Canary.mu.Unlock()
}

// countingListener counts every connection before the HTTP server sees a
// byte of it.
type countingListener struct {
	net.Listener
	c *NetCanary
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.c.conns.Add(1)
		l.c.mu.Lock()
		l.c.peers = append(l.c.peers, conn.RemoteAddr().String())
		l.c.mu.Unlock()
	}
	return conn, err
}
