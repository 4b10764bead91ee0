package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// forwardState is what one absolute-form request carries through the
// shared transport: the address its own check pinned, and its decision.
type forwardState struct {
	pinned netip.AddrPort
	d      *Decision

	mu      sync.Mutex
	dialErr error
	emitted bool

	w *forwardWriter // the client's side of the exchange

	// upgraded is the upstream side of a 101 response. The forwarder
	// closes it from a goroutine of its own after the request returns;
	// serveForward closes it first, so that Close, which waits for
	// requests, also waits for the close of every upgraded connection.
	upgraded io.Closer
}

type forwardKey struct{}

func (st *forwardState) setDialErr(err error) {
	st.mu.Lock()
	st.dialErr = err
	st.mu.Unlock()
}

// finish reports the decision once; later calls do nothing.
func (st *forwardState) finish(p *Proxy, fill func(d *Decision)) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.emitted {
		return false
	}
	st.emitted = true
	fill(st.d)
	p.emit(st.d)
	return true
}

// newTransport returns the transport for absolute-form requests. Outgoing
// URLs carry the pinned IP literal as their host, so the pool is keyed by
// checked ip:port and a pooled connection is only reused by a request that
// pinned the same address. It never consults proxy environment variables,
// never speaks HTTP/2 or TLS, and leaves bodies as the upstream sent them.
func (p *Proxy) newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            p.transportDial,
		DisableCompression:     true,
		ForceAttemptHTTP2:      false,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		ResponseHeaderTimeout:  p.cfg.ResponseHeaderTimeout,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// transportDial is the transport's only way out: it dials the address
// pinned for the request that asked for the connection, and nothing else.
func (p *Proxy) transportDial(ctx context.Context, network, addr string) (net.Conn, error) {
	st, ok := ctx.Value(forwardKey{}).(*forwardState)
	if !ok || addr != st.pinned.String() {
		return nil, ErrUnpinnedDial
	}
	c, err := p.dial(ctx, network, st.pinned, st.d.Host)
	if err != nil {
		st.setDialErr(err)
	}
	return c, err
}

func (p *Proxy) newForwarder() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			st := pr.In.Context().Value(forwardKey{}).(*forwardState)
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = st.pinned.String()
			pr.Out.URL.User = nil
			// The Host header is the request-target's authority, never a
			// Host header the client sent (RFC 9112 section 3.2.2).
			pr.Out.Host = pr.In.URL.Host
		},
		Transport:     p.transport,
		BufferPool:    &bufferPool{},
		FlushInterval: -1, // stream: flush every write (SSE, long polls)
		ErrorLog:      slog.NewLogLogger(p.cfg.Logger.Handler(), slog.LevelDebug),
		ModifyResponse: func(res *http.Response) error {
			st := res.Request.Context().Value(forwardKey{}).(*forwardState)
			if res.StatusCode == http.StatusSwitchingProtocols {
				st.mu.Lock()
				st.upgraded = res.Body
				st.mu.Unlock()
			}
			st.finish(p, func(d *Decision) {
				d.Allowed, d.Status, d.Dialed = true, res.StatusCode, st.pinned
			})
			return nil
		},
		ErrorHandler: p.forwardError,
	}
}

// forwardError answers a request whose upstream failed.
func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	st := r.Context().Value(forwardKey{}).(*forwardState)
	st.mu.Lock()
	dialErr, emitted := st.dialErr, st.emitted
	st.emitted = true
	st.mu.Unlock()
	if emitted {
		// The upstream answered (the decision is made) and then the
		// exchange failed: a body copy that broke off, or an upgrade the
		// forwarder refused (a 101 to another protocol than asked). If
		// nothing has reached the client yet, it is told; else it sees a
		// broken response.
		if st.w != nil && !st.w.started() {
			http.Error(w, "upstream "+st.pinned.String()+" failed: "+err.Error(), http.StatusBadGateway)
		}
		return
	}
	var ref *refusal
	switch {
	case errors.Is(err, ErrUnpinnedDial):
		ref = &refusal{status: http.StatusForbidden, rule: RuleDial, reason: err.Error()}
	case dialErr != nil:
		ref = dialRefusal(st.pinned, dialErr)
	default:
		ref = &refusal{status: http.StatusBadGateway, rule: RuleUpstream, reason: "upstream " + st.pinned.String() + " failed: " + err.Error()}
		if isTimeout(err) {
			ref.status = http.StatusGatewayTimeout
		}
	}
	st.d.Dialed = st.pinned
	p.refuse(w, st.d, ref)
}

// serveForward handles an absolute-form request.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	// Redacted: a password in the request-target's userinfo is never logged.
	d := &Decision{Time: p.cfg.Now(), Method: r.Method, Target: r.URL.Redacted()}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		d.Target = r.RequestURI
		p.refuse(w, d, badRequest("%q is not an absolute-form request-target: this is a forward proxy", r.RequestURI))
		return
	}
	switch strings.ToLower(r.URL.Scheme) {
	case "http", "ws":
	default:
		p.refuse(w, d, badRequest("scheme %q is not forwarded: use CONNECT for https and wss", r.URL.Scheme))
		return
	}
	ap, ok := p.admit(w, r, d, r.URL.Hostname(), r.URL.Port(), 80)
	if !ok {
		return
	}
	if p.isClosed() {
		p.refuse(w, d, &refusal{status: http.StatusServiceUnavailable, rule: RuleClosed, reason: "the egress proxy is closing"})
		return
	}
	st := &forwardState{pinned: ap, d: d}
	r = r.WithContext(context.WithValue(r.Context(), forwardKey{}, st))
	fw := &forwardWriter{ResponseWriter: w, p: p}
	st.w = fw
	p.forwarder.ServeHTTP(fw, r)
	if fw.conn != nil {
		p.untrack(fw.conn)
	}
	st.mu.Lock()
	upgraded := st.upgraded
	st.mu.Unlock()
	if upgraded != nil {
		upgraded.Close()
	}
	// A request that ended without reaching ModifyResponse or the error
	// handler (the client went away) still gets its one decision.
	st.finish(p, func(d *Decision) {
		d.Dialed = ap
		d.Rule, d.Reason = RuleUpstream, "the exchange ended before the upstream answered"
	})
}

// forwardWriter is the client's side of a forwarded exchange: it says
// whether anything of the response has been sent, and registers the
// client's connection when the forwarder takes it over for an upgrade, so
// that Close ends the upgraded exchange as it ends a tunnel (the
// forwarder closes it only when the upstream's side ends).
type forwardWriter struct {
	http.ResponseWriter
	p *Proxy

	wrote bool
	conn  net.Conn // the client's connection, once hijacked
}

func (w *forwardWriter) WriteHeader(code int) {
	// An informational response (103 Early Hints, passed on as it comes)
	// leaves the final one still to be sent.
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *forwardWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Hijack takes over the client's connection and has the proxy track it.
func (w *forwardWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.wrote = true
	if !w.p.track(c) {
		return nil, nil, errors.New("the egress proxy is closing")
	}
	w.conn = c
	return c, brw, nil
}

// Unwrap lets an http.ResponseController reach the server's writer (to
// flush).
func (w *forwardWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// started reports whether any of the response has reached the client's
// connection.
func (w *forwardWriter) started() bool { return w.wrote }

// splitTarget validates the host and port of a request-target. host is
// bracketed again if it is an IPv6 address, as the policy reads hosts the
// way a URL writes them.
func splitTarget(host, portStr string, defPort uint16) (string, uint16, *refusal) {
	if host == "" {
		return "", 0, badRequest("the request-target has no host")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if portStr == "" {
		if defPort == 0 {
			return "", 0, badRequest("the request-target %s has no port", host)
		}
		return host, defPort, nil
	}
	n, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || n == 0 {
		return "", 0, badRequest("the request-target port %q is not in 1-65535", portStr)
	}
	return host, uint16(n), nil
}

// bufferPool recycles the forwarder's copy buffers, so a streamed body does
// not cost a fresh 32 KiB buffer per request.
type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.pool.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.pool.Put(&buf) }
