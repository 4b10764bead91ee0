package egress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sync"
	"time"

	"github.com/browsergate/browsergate/scope"
)

// Policy is what the proxy asks before it connects anywhere. *scope.Scope
// implements it; the interface keeps the proxy testable with a small fake
// and keeps the scope rules in one package.
type Policy interface {
	// CheckHost judges the host named by a request-target (name rules, and
	// the address class of an IP literal) and the port. Verdict.Host should
	// be the canonical host: it is the name the proxy resolves.
	CheckHost(host string, port uint16) scope.Verdict
	// CheckAddrPort judges one address the host resolved to, with the port
	// about to be dialled.
	CheckAddrPort(ap netip.AddrPort) scope.Verdict
}

// Resolver looks names up. *net.Resolver implements it; tests inject fakes
// so that hostnames never reach real DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Proxy. Zero fields take the stated defaults; only
// Policy is required.
type Config struct {
	// Policy decides every host and every resolved address. Required.
	Policy Policy
	// Resolver resolves host names, once per request or tunnel. Default
	// net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an upstream. addr is always an IP literal "ip:port"
	// that Policy allowed. Default (&net.Dialer{}).DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnDecision, when set, is called once per proxied request or tunnel,
	// allowed or denied, before any byte is forwarded upstream for an
	// allowed CONNECT and when the upstream answers (or fails) for an
	// absolute-form request. It must be safe for concurrent use.
	OnDecision func(Decision)
	// Logger receives one structured record per decision. Default
	// slog.Default().
	Logger *slog.Logger
	// DeniedLevel is the level of a refusal's record (an allowed request's
	// is Info). Default slog.LevelWarn.
	DeniedLevel slog.Leveler
	// DialTimeout bounds one upstream dial. Default 10s.
	DialTimeout time.Duration
	// ResolveTimeout bounds one lookup. Default 5s.
	ResolveTimeout time.Duration
	// ReadHeaderTimeout bounds the time a client may take to send request
	// headers, so an idle or slow client cannot hold a connection forever.
	// Default 10s.
	ReadHeaderTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an upstream's response
	// headers after a forwarded request was written, so a server that
	// accepts and never answers cannot hold a request forever (504, rule
	// "upstream"). Default 30s.
	ResponseHeaderTimeout time.Duration
	// TunnelIdleTimeout closes a CONNECT tunnel in which no byte has moved
	// in either direction for this long. Default 5m.
	TunnelIdleTimeout time.Duration
	// MaxHeaderBytes bounds the size of request headers. Default 64 KiB.
	MaxHeaderBytes int
	// Now is the clock for Decision.Time and Decision.Duration. Default
	// time.Now.
	Now func() time.Time
}

// Defaults of the Config fields.
const (
	// DefaultDialTimeout bounds an upstream dial: long enough for a slow
	// server, short enough that a black-holed address fails visibly.
	DefaultDialTimeout = 10 * time.Second
	// DefaultResolveTimeout bounds one lookup; a resolver that does not
	// answer is a failure (504, rule "dns"), never a reason to skip checks.
	DefaultResolveTimeout = 5 * time.Second
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// its request headers (slowloris).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout bounds how long an upstream may take to
	// start its answer: generous for a slow page, finite for a tarpit.
	DefaultResponseHeaderTimeout = 30 * time.Second
	// DefaultTunnelIdleTimeout closes tunnels nobody uses; a live
	// WebSocket or a streaming download keeps its tunnel open.
	DefaultTunnelIdleTimeout = 5 * time.Minute
	// DefaultMaxHeaderBytes bounds request headers; Chromium's are far
	// smaller.
	DefaultMaxHeaderBytes = 64 << 10
)

// Proxy is the egress proxy. Create it with New, start it with Listen and
// stop it with Close. It is safe for concurrent use.
type Proxy struct {
	cfg       Config
	ctx       context.Context // cancelled by Close; parent of every request
	cancel    context.CancelFunc
	transport *http.Transport
	forwarder *httputil.ReverseProxy

	mu      sync.Mutex
	closed  bool
	server  *http.Server
	addr    netip.AddrPort
	tunnels map[net.Conn]struct{} // hijacked client and upstream conns
	// upstreams are the open connections to upstream servers, by the host
	// the policy judged for them (see CloseUpstreams).
	upstreams map[*upstreamConn]string // guarded by upmu, not mu: Close closes tunnels under mu
	upmu      sync.Mutex
	// gateways are the Gateways the proxy was ever added to: their
	// listening addresses are refused like its own (isSelf).
	gateways []*Gateway
	handlers sync.WaitGroup // requests in flight
	serving  sync.WaitGroup // the Serve goroutine and its connections (serverBounds.serve)
}

// New validates cfg, applies its defaults and returns a proxy that does not
// listen yet.
func New(cfg Config) (*Proxy, error) {
	if cfg.Policy == nil {
		return nil, ErrNoPolicy
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	if cfg.DeniedLevel == nil {
		cfg.DeniedLevel = slog.LevelWarn
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.ResolveTimeout <= 0 {
		cfg.ResolveTimeout = DefaultResolveTimeout
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.ResponseHeaderTimeout <= 0 {
		cfg.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if cfg.TunnelIdleTimeout <= 0 {
		cfg.TunnelIdleTimeout = DefaultTunnelIdleTimeout
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Proxy{cfg: cfg, tunnels: make(map[net.Conn]struct{}), upstreams: make(map[*upstreamConn]string)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.transport = p.newTransport()
	p.forwarder = p.newForwarder()
	return p, nil
}

// Listen starts serving on addr, which must be a loopback address
// ("127.0.0.1:0", "[::1]:0", "localhost:0"), and returns the address it
// listens on. The proxy serves in the background until Close.
func (p *Proxy) Listen(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("egress: listen %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() || ip.Zone() != "" {
		return "", fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return "", ErrClosed
	case p.server != nil:
		return "", ErrListening
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.Unmap().String(), port))
	if err != nil {
		return "", fmt.Errorf("egress: listen: %w", err)
	}
	p.addr = ln.Addr().(*net.TCPAddr).AddrPort()
	l := serverBounds{ReadHeaderTimeout: p.cfg.ReadHeaderTimeout, MaxHeaderBytes: p.cfg.MaxHeaderBytes, Logger: p.cfg.Logger}
	p.server = l.serve(ln, p, p.ctx, &p.serving, "egress proxy")
	return p.addr.String(), nil
}

// Addr returns the address the proxy listens on, or "" before Listen.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.addr.IsValid() {
		return ""
	}
	return p.addr.String()
}

// Close stops the proxy: it closes the listener and every client
// connection, cancels every request in flight (so nothing that has not yet
// dialled will dial), closes every tunnel and pooled upstream connection,
// and waits for the proxy's goroutines. Close is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	srv := p.server
	p.cancel()
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()

	var err error
	if srv != nil {
		err = srv.Close()
	}
	p.serving.Wait()
	p.handlers.Wait()
	p.transport.CloseIdleConnections()
	return err
}

// isClosed reports whether Close has begun.
func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// track registers a hijacked connection so that Close can close it. It
// returns false, having closed c, if the proxy is already closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.tunnels[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// ServeHTTP dispatches one proxy request: CONNECT opens a tunnel,
// absolute-form requests are forwarded, anything else is refused with 400.
// It is exported for tests and embedding; mounted on another server it
// loses what Listen (or a Gateway) guarantees: the listening address, the
// header bounds, the refusal of the listener's own address, and the end of
// requests in flight at Close.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "egress proxy closed", http.StatusServiceUnavailable)
		return
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()

	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	p.serveForward(w, r)
}

// upstreamConn is a connection to an upstream server, known to the proxy
// until it is closed.
type upstreamConn struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (c *upstreamConn) Close() error {
	c.once.Do(func() {
		c.p.upmu.Lock()
		delete(c.p.upstreams, c)
		c.p.upmu.Unlock()
	})
	return c.Conn.Close()
}

// upstream registers a connection dialed for host.
func (p *Proxy) upstream(c net.Conn, host string) net.Conn {
	uc := &upstreamConn{Conn: c, p: p}
	p.upmu.Lock()
	p.upstreams[uc] = host
	p.upmu.Unlock()
	return uc
}

// CloseUpstreams closes every open connection to an upstream host for
// which keep is false — a tunnel (a WebSocket, say) or a kept-alive
// connection — and returns how many it closed. A rule that tightens after
// a connection was admitted (a secret was typed into the page) uses it:
// the policy judges new connections, and this ends the old ones.
func (p *Proxy) CloseUpstreams(keep func(host string) bool) int {
	p.upmu.Lock()
	var closing []*upstreamConn
	for c, host := range p.upstreams {
		if !keep(host) {
			closing = append(closing, c)
		}
	}
	p.upmu.Unlock()
	for _, c := range closing {
		c.Close()
	}
	return len(closing)
}
