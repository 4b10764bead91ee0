package egress

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// serveConnect handles CONNECT host:port: the checks, one dial of the
// checked address, then a byte tunnel between the client and it.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	d := &Decision{Time: p.cfg.Now(), Method: r.Method, Target: r.RequestURI}
	hostname, portStr, err := net.SplitHostPort(r.RequestURI)
	if err != nil {
		p.refuse(w, d, badRequest("CONNECT target %q is not host:port", r.RequestURI))
		return
	}
	ap, ok := p.admit(w, r, d, hostname, portStr, 0)
	if !ok {
		return
	}
	d.Dialed = ap
	upstream, err := p.dial(r.Context(), "tcp", ap, d.Host)
	if err != nil {
		p.refuse(w, d, dialRefusal(ap, err))
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		p.refuse(w, d, &refusal{status: http.StatusInternalServerError, rule: RuleUpstream, reason: "the connection cannot be taken over for a tunnel"})
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		d.Rule, d.Reason, d.Status = RuleUpstream, "taking over the client connection failed: "+err.Error(), 0
		p.emit(d)
		return
	}
	if !p.track(client) {
		upstream.Close()
		return
	}
	defer p.untrack(client)
	if !p.track(upstream) {
		client.Close()
		return
	}
	defer p.untrack(upstream)
	d.Allowed, d.Status = true, http.StatusOK
	p.emit(d)

	client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	// Bytes the client sent after the CONNECT head, before the 200, are
	// already in the server's buffer: they belong to the tunnel.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := upstream.Write(b); err != nil {
			client.Close()
			upstream.Close()
			return
		}
	}
	splice(client, upstream, p.cfg.TunnelIdleTimeout)
}

// splice copies both ways until one side ends, or until no byte has moved
// in either direction for idle, then closes both and waits for the other
// copy, so no goroutine outlives the tunnel.
func splice(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64 // unix nanoseconds of the latest byte, either way
	last.Store(time.Now().UnixNano())
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		idleCopy(dst, src, idle, &last)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}

// idleCopy copies src to dst until an error, re-arming src's read deadline
// while the tunnel as a whole (last) has moved a byte within idle: a
// download keeps the quiet upload direction alive, and a tunnel where both
// directions are quiet ends.
func idleCopy(dst, src net.Conn, idle time.Duration, last *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		src.SetReadDeadline(time.Unix(0, last.Load()).Add(idle))
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < idle {
			continue // the other direction moved: not idle yet
		}
		return
	}
}
