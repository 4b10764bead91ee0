package egress

import (
	"bufio"
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Gateway serves many Proxies on one listener, each request routed to the
// proxy whose credentials it carries (Proxy-Authorization: Basic, RFC 7235
// and RFC 7617).
//
// It is the gate listener of browsers on other machines (a pool host):
// each session's browser context there is created with
// Target.createBrowserContext{proxyServer: "http://" + gateway address},
// and the daemon answers the gateway's 407 challenge through
// Fetch.authRequired with that session's Credentials. One listener for
// every session means the listener alone no longer says whose a request
// is, and what can reach it is more than one session's pages: a page in
// another session's context on the same pool browser, a program on the
// pool host that does not hold a session's credentials, anyone on the
// pool's network guessing. (Whoever controls the pool host's browser or
// reads the pool's network can learn credentials: the pool host and its
// network are trusted, as a browser the daemon launches is.) So every request, each
// CONNECT and each absolute-form request, every one on a kept-alive
// connection and not only the first, must carry one session's credentials,
// or it is refused with 407 before anything is resolved, dialled or
// forwarded; and it is then judged by that session's Proxy alone, never by
// another's. Credentials are random, 130 bits in each half, and the
// password is compared in constant time.
//
// Create a Gateway with NewGateway, start it with Listen, route sessions
// with Add and stop it with Close. It is safe for concurrent use.
type Gateway struct {
	cfg     GatewayConfig
	ctx     context.Context // cancelled by Close; parent of every request
	cancel  context.CancelFunc
	refused atomic.Uint64

	mu     sync.Mutex
	closed bool
	server *http.Server
	addr   netip.AddrPort
	routes map[string]*route // by user name
	// expected are the hosts Expect waits for, with where to report a
	// request for each.
	expected map[string]chan netip.AddrPort

	handlers sync.WaitGroup // requests in flight
	serving  sync.WaitGroup // the Serve goroutine and its connections (serverBounds.serve)
}

// GatewayConfig configures a Gateway. Zero fields take the stated
// defaults, the same as a Proxy's listener.
type GatewayConfig struct {
	// Logger receives a debug record for each refused request (with the
	// client's address, never the credentials) and the server's errors.
	// Default slog.Default().
	Logger *slog.Logger
	// ReadHeaderTimeout bounds the time a client may take to send request
	// headers. Default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// MaxHeaderBytes bounds the size of request headers. Default
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// OnRefused, when set, is called for each request refused for its
	// credentials, with the client's address and why (one of the Auth
	// constants). It runs on the request's goroutine and must be safe for
	// concurrent use; Close waits for it, so it must not call Close.
	OnRefused func(remote netip.AddrPort, reason string)
}

// route is one Add: the proxy that serves the requests carrying its
// credentials, until remove or the proxy's Close.
type route struct {
	proxy    *Proxy
	password []byte
	// ctx ends when the route is removed, the proxy closes (it descends
	// from the proxy's context) or the gateway closes; every request the
	// route serves ends with it.
	ctx    context.Context
	cancel context.CancelFunc
	// stop unregisters the drop that the proxy's Close triggers.
	stop func() bool
	// conns are the client connections of the route's tunnels and
	// upgrades, taken over from the gateway's server; nil once the route
	// is dropped. Guarded by Gateway.mu.
	conns map[net.Conn]struct{}
}

// dummyPassword is what a password is compared with when its user name is
// unknown, so that a refusal takes the same time either way.
var dummyPassword = []byte(newCredentials().Password)

// NewGateway applies cfg's defaults and returns a gateway that does not
// listen yet. No field of today's GatewayConfig can be invalid, so the
// error is always nil; it is there so that a later field can be checked.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	g := &Gateway{cfg: cfg, routes: make(map[string]*route)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g, nil
}

// Listen starts serving on addr and returns the address it listens on.
// Unlike a Proxy, a gateway may listen on any address ("10.77.1.1:0",
// ":8118"): it exists to be reached from other machines, and it is not an
// open proxy because nothing passes it without credentials. It serves in
// the background until Close.
func (g *Gateway) Listen(addr string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
		return "", ErrClosed
	case g.server != nil:
		return "", ErrListening
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("egress: gateway listen: %w", err)
	}
	g.addr = ln.Addr().(*net.TCPAddr).AddrPort()
	l := serverBounds{ReadHeaderTimeout: g.cfg.ReadHeaderTimeout, MaxHeaderBytes: g.cfg.MaxHeaderBytes, Logger: g.cfg.Logger}
	g.server = l.serve(ln, http.HandlerFunc(g.serveHTTP), g.ctx, &g.serving, "egress gateway")
	return g.addr.String(), nil
}

// Addr returns the address the gateway listens on, or "" before Listen.
func (g *Gateway) Addr() string {
	if ap := g.addrPort(); ap.IsValid() {
		return ap.String()
	}
	return ""
}

func (g *Gateway) addrPort() netip.AddrPort {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addr
}

// Add routes requests carrying the returned credentials to p, until remove
// is called (or p is closed). Credentials are random (crypto/rand), 130
// bits in the user name and in the password, and never reused: a user
// name the gateway routes is never issued again, and one it no longer
// routes comes back only by a 130-bit coincidence.
//
// From then on, for the rest of p's life, p refuses the gateway's address
// as it refuses its own (rule RuleSelf), whether or not the route was
// removed: a page must not reach the gateway, which every session shares,
// through its own proxy.
//
// remove refuses the credentials at once, on connections already open too
// (their next request gets 407); it cancels the route's requests in flight
// and closes the tunnels (CONNECT and upgraded connections) opened through
// the gateway with these credentials, since a tunnel is the session's and
// ends with its route. It leaves p open: p's own listener, and its routes
// in other gateways, go on serving. remove does not wait for the cancelled
// requests to return (Proxy.Close does); it is idempotent, and safe to
// call from any goroutine, OnDecision included.
//
// Adding to a closed gateway returns credentials that are refused like
// any others.
func (g *Gateway) Add(p *Proxy) (c Credentials, remove func()) {
	p.servedBy(g)
	rt := &route{proxy: p, conns: make(map[net.Conn]struct{})}
	rt.ctx, rt.cancel = context.WithCancel(p.ctx)
	g.mu.Lock()
	for {
		c = newCredentials()
		if _, dup := g.routes[c.Username]; !dup {
			break
		}
	}
	user := c.Username
	rt.password = []byte(c.Password)
	// When the proxy closes, its route goes with it. Its requests and
	// tunnels end by the proxy's own Close; this drops the map entry.
	rt.stop = context.AfterFunc(rt.ctx, func() { g.drop(user, rt) })
	if g.closed {
		rt.conns = nil
		rt.end()
	} else {
		g.routes[user] = rt
	}
	g.mu.Unlock()
	return c, func() {
		rt.end()
		g.drop(user, rt)
	}
}

// end ends the route's context, and with it every request it serves,
// without leaving a goroutine behind to drop it: the caller drops it.
func (rt *route) end() {
	rt.stop()
	rt.cancel()
}

// drop removes the route from the gateway, if it is still there, and
// closes the connections it took over. It is idempotent.
func (g *Gateway) drop(user string, rt *route) {
	g.mu.Lock()
	if g.routes[user] == rt {
		delete(g.routes, user)
	}
	conns := rt.conns
	rt.conns = nil
	g.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// Refused returns how many requests the gateway has refused for their
// credentials since it was created. Sessions' browsers present the right
// ones after their first challenge; a count that climbs faster than
// sessions start is someone without them trying.
func (g *Gateway) Refused() uint64 { return g.refused.Load() }

// Close stops the gateway: it closes the listener, every client
// connection (tunnels and upgraded connections included) and cancels every
// request in flight through it, then waits for them to return. The
// proxies added stay open, for their callers to close; their routes here
// are dropped. Close is idempotent.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	srv := g.server
	routes := g.routes
	g.routes = make(map[string]*route)
	g.mu.Unlock()

	g.cancel()
	for user, rt := range routes {
		rt.end()
		g.drop(user, rt)
	}
	var err error
	if srv != nil {
		err = srv.Close()
	}
	g.serving.Wait()
	g.handlers.Wait()
	return err
}

// serveHTTP checks the credentials of one request and hands it, without
// them, to the proxy they name.
func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	g.sawRequest(r)
	rt, why := g.authorize(r.Header)
	if rt == nil {
		g.refuse(w, r, why)
		return
	}
	defer g.handlers.Done()
	// The credentials are the gateway's business, not the upstream's. The
	// proxy forwards no CONNECT header and httputil drops
	// Proxy-Authorization as a hop-by-hop field; deleting it here does not
	// depend on either.
	r.Header.Del("Proxy-Authorization")
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(rt.ctx, cancel)
	defer stop()
	rt.proxy.ServeHTTP(&gatewayWriter{ResponseWriter: w, g: g, rt: rt}, r.WithContext(ctx))
}

// authorize returns the live route h's credentials name, counted in
// handlers (the caller calls g.handlers.Done), or nil and why not.
func (g *Gateway) authorize(h http.Header) (*route, string) {
	user, password, why := proxyBasic(h)
	if why != "" {
		return nil, why
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	rt := g.routes[user]
	want := dummyPassword
	if rt != nil {
		want = rt.password
	}
	match := subtle.ConstantTimeCompare([]byte(password), want) == 1
	switch {
	case rt == nil:
		return nil, AuthUnknownUser
	case !match:
		return nil, AuthWrongPassword
	case rt.ctx.Err() != nil || g.closed:
		return nil, AuthRemoved
	}
	g.handlers.Add(1)
	return rt, ""
}

// refuse answers 407 with the challenge a browser answers with the
// session's credentials, and records the refusal.
func (g *Gateway) refuse(w http.ResponseWriter, r *http.Request, why string) {
	g.refused.Add(1)
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	target := r.RequestURI
	if r.Method != http.MethodConnect && r.URL != nil {
		target = r.URL.Redacted()
	}
	g.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "egress gateway refused a request",
		slog.String("remote", r.RemoteAddr), slog.String("reason", why),
		slog.String("method", r.Method), slog.String("target", target))
	if g.cfg.OnRefused != nil {
		g.cfg.OnRefused(remote, why)
	}
	h := w.Header()
	h.Set("Proxy-Authenticate", `Basic realm="browsergate"`)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusProxyAuthRequired)
	fmt.Fprintln(w, "browsergate egress gateway: proxy authentication required")
}

// track registers a connection taken over for rt, so that removing the
// route or closing the gateway closes it. It returns false if the route is
// gone.
func (g *Gateway) track(rt *route, c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rt.conns == nil || rt.ctx.Err() != nil {
		return false
	}
	rt.conns[c] = struct{}{}
	return true
}

func (g *Gateway) untrack(rt *route, c net.Conn) {
	g.mu.Lock()
	delete(rt.conns, c)
	g.mu.Unlock()
}

// gatewayWriter is the ResponseWriter a proxy gets for a request through
// the gateway: a connection it takes over (a CONNECT tunnel, an upgrade)
// is registered with the request's route.
type gatewayWriter struct {
	http.ResponseWriter
	g  *Gateway
	rt *route
}

// Hijack takes the connection over and registers it with the route. If
// the route was removed meanwhile, the connection is closed and Hijack
// fails with ErrRemoved: no tunnel outlives its route.
func (w *gatewayWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	gc := &gatewayConn{Conn: c, g: w.g, rt: w.rt}
	if !w.g.track(w.rt, gc) {
		c.Close()
		return nil, nil, ErrRemoved
	}
	return gc, brw, nil
}

// Flush sends what is buffered (a streamed response).
func (w *gatewayWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the server's writer.
func (w *gatewayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// gatewayConn is a client connection taken over through the gateway,
// known to its route until it is closed.
type gatewayConn struct {
	net.Conn
	g    *Gateway
	rt   *route
	once sync.Once
}

func (c *gatewayConn) Close() error {
	c.once.Do(func() { c.g.untrack(c.rt, c) })
	return c.Conn.Close()
}

// servedBy records that g serves p, so that p refuses g's address
// (isSelf) from now on.
func (p *Proxy) servedBy(g *Gateway) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.gateways, g) {
		// A fresh array: isSelf reads the old one without the lock.
		p.gateways = append(slices.Clip(p.gateways), g)
	}
}

// Expect reports, on the returned channel, the client address of the
// first request whose target host is host (a name, compared without case
// and port), with or without credentials; the request itself is served
// as any other (without a session's credentials it is refused). It lets
// the daemon check that a browser context on another host really sends
// its requests here: the conformance probe navigates a context made with
// the gateway as its proxy to a name only it knows, and a browser that
// ignored the context's proxy would never ask the gateway for it. stop
// forgets host.
func (g *Gateway) Expect(host string) (seen <-chan netip.AddrPort, stop func()) {
	host = strings.ToLower(host)
	ch := make(chan netip.AddrPort, 1)
	g.mu.Lock()
	if g.expected == nil {
		g.expected = map[string]chan netip.AddrPort{}
	}
	g.expected[host] = ch
	g.mu.Unlock()
	return ch, func() {
		g.mu.Lock()
		if g.expected[host] == ch {
			delete(g.expected, host)
		}
		g.mu.Unlock()
	}
}

// sawRequest reports r to an Expect waiting for its host.
func (g *Gateway) sawRequest(r *http.Request) {
	host := r.Host
	if r.Method != http.MethodConnect && r.URL != nil && r.URL.Host != "" {
		host = r.URL.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	g.mu.Lock()
	ch := g.expected[host]
	g.mu.Unlock()
	if ch == nil {
		return
	}
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	select {
	case ch <- remote:
	default:
	}
}
