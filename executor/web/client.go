package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// MaxRedirects is how many redirects a request follows before it fails.
const MaxRedirects = 5

// Client fetches URLs for one session. Every URL, the first and each
// redirect's, is judged by Check before it is requested, and requested in
// the canonical form Check judged; every connection is made by Dial (the
// egress gate, which judges the host again, resolves it once, checks every
// address and dials the checked one). Redirects are followed by hand.
type Client struct {
	// Check judges one URL (the scope, and the daemon's own endpoints).
	// Required.
	Check func(rawURL string) scope.Verdict
	// Dial makes every connection. Required.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Limiter spaces the requests to each host, counted by the address
	// each request's connection was dialled to (nil: no limit).
	Limiter *HostLimiter
	// Jar keeps the session's cookies (nil: none are sent or kept).
	Jar http.CookieJar
	// UserAgent names the client in every request.
	UserAgent string
	// Hop, when set, judges each redirect's URL (canonical, already inside
	// the scope) before it is requested: an error refuses it.
	Hop func(hop int, url string) error

	transport *http.Transport
}

// Refused is a URL the scope refused: the request was never sent.
type Refused struct {
	URL          string // as given (the redirect's Location, resolved)
	Rule, Reason string
	Hop          int // 0: the URL asked for; n: the n-th redirect
}

func (e *Refused) Error() string {
	if e.Hop == 0 {
		return e.Reason
	}
	return fmt.Sprintf("redirect %d: %s", e.Hop, e.Reason)
}

// Response is the answer to Get: the last hop's, with its body unread.
type Response struct {
	*http.Response
	// URL is the final URL (after redirects), canonical.
	URL string
	// Hops are the URLs requested, in order (the first is the URL asked
	// for, in canonical form).
	Hops []string
}

// Get requests rawURL with GET (header adds to the client's own) and
// follows at most MaxRedirects redirects, judging each. The caller closes
// the body. A refusal is a *Refused; the response of a redirect that is
// not followed (no Location) is returned as it is.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	if c.transport == nil {
		c.transport = &http.Transport{
			Proxy:                  nil, // never the environment's proxy: the gate is the dialer
			DialContext:            c.Dial,
			ForceAttemptHTTP2:      true,
			MaxResponseHeaderBytes: 1 << 20,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  30 * time.Second,
		}
	}
	out := &Response{}
	next := rawURL
	for hop := 0; ; hop++ {
		v := c.Check(next)
		if !v.Allowed {
			return nil, &Refused{URL: next, Rule: v.Rule, Reason: v.Reason, Hop: hop}
		}
		u, err := url.Parse(v.URL)
		if err != nil || u.Host == "" {
			// The scope's canonical form is what is requested; one Go
			// cannot read is not sent.
			return nil, &Refused{URL: next, Rule: scope.RuleParse, Reason: fmt.Sprintf("%s cannot be requested as it was judged", v.URL), Hop: hop}
		}
		if hop > 0 && c.Hop != nil {
			if err := c.Hop(hop, v.URL); err != nil {
				return nil, err
			}
		}
		out.Hops = append(out.Hops, v.URL)
		turn := c.turn(ctx)
		req, err := http.NewRequestWithContext(turn.ctx, http.MethodGet, v.URL, nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		req.Header.Set("User-Agent", c.UserAgent)
		if c.Jar != nil {
			for _, ck := range c.Jar.Cookies(u) {
				req.AddCookie(ck)
			}
		}
		resp, err := c.transport.RoundTrip(req)
		if dest, terr := turn.failed(); terr != nil {
			if err == nil {
				resp.Body.Close()
			}
			return nil, fmt.Errorf("waiting for its turn at %s (%s; requests_per_second_per_host counts by the address dialled): %w", dest, u.Host, terr)
		}
		if err != nil {
			return nil, err // a refused dial is an *egress.RefusedError in the chain
		}
		if c.Jar != nil {
			if cs := resp.Cookies(); len(cs) > 0 {
				c.Jar.SetCookies(u, cs)
			}
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			out.Response, out.URL = resp, v.URL
			return out, nil
		}
		// A redirect's body is read (a little of it) so that its
		// connection can carry the next hop.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
		if hop == MaxRedirects {
			return nil, fmt.Errorf("more than %d redirects (the last to %s)", MaxRedirects, loc)
		}
		to, err := u.Parse(loc)
		if err != nil {
			return nil, &Refused{URL: loc, Rule: scope.RuleParse, Reason: fmt.Sprintf("the redirect's Location %q does not parse", loc), Hop: hop + 1}
		}
		next = to.String()
	}
}

// turn is one request's wait for its turn at its destination, the
// address its connection goes to.
type turn struct {
	ctx context.Context // the request's, with the waits

	mu   sync.Mutex
	dest netip.Addr // the address a wait failed for
	err  error      // a wait failed: the request was not written
	// dialled are the addresses this request's own dials took a turn at
	// and that no connection it got has used yet.
	dialled []netip.Addr
}

// fail records the wait for dest that failed.
func (t *turn) fail(dest netip.Addr, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.dest, t.err = dest, err
	}
}

// failed is the wait that failed, if one did.
func (t *turn) failed() (netip.Addr, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dest, t.err
}

// useDialled reports whether a dial of this request took a turn at dest
// that no connection has used yet, and uses it.
func (t *turn) useDialled(dest netip.Addr) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.dialled, dest); i >= 0 {
		t.dialled = slices.Delete(t.dialled, i, i+1)
		return true
	}
	return false
}

// turn spaces the request made with the returned turn's ctx to
// c.Limiter, counted by the address its connection goes to (the IP
// literal the egress gate's pinned dial connected to, after resolution),
// so that every spelling of one destination, and every redirect hop to
// it, shares one budget.
//
// A request that needs a new connection waits in the dial, once the
// egress gate has chosen the address and before it connects
// (egress.WithDialTurn): a turn that would come after the deadline
// refuses the dial, and the host never sees a connection. A request that
// gets a connection already open (kept alive, or dialled for another
// request) waits in GotConn, which net/http calls on the request's own
// goroutine before it writes the request, for HTTP/1 and HTTP/2 alike; a
// wait that fails there closes the connection, so that the request is
// never written. A dial's turn counts for the request that dialled,
// when the connection it gets goes to that address; otherwise it waits
// again: a turn is never shared, so requests never outnumber turns.
func (c *Client) turn(ctx context.Context) *turn {
	t := &turn{ctx: ctx}
	if c.Limiter == nil {
		return t
	}
	dialCtx := egress.WithDialTurn(ctx, func(dest netip.Addr) error {
		// The dial runs detached from the request's cancellation; the
		// wait is bounded by the request's own deadline.
		if err := c.Limiter.Wait(ctx, dest); err != nil {
			t.fail(dest.Unmap(), err)
			return err
		}
		t.mu.Lock()
		t.dialled = append(t.dialled, dest.Unmap())
		t.mu.Unlock()
		return nil
	})
	t.ctx = httptrace.WithClientTrace(dialCtx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		dest, err := destination(info.Conn)
		if err == nil && t.useDialled(dest.Unmap()) {
			return
		}
		if err == nil {
			err = c.Limiter.Wait(ctx, dest)
		}
		if err != nil {
			t.fail(dest.Unmap(), err)
			info.Conn.Close()
		}
	}})
	return t
}

// destination is the IP address conn was dialled to.
func destination(conn net.Conn) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(conn.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, ErrNoDestination
	}
	return ap.Addr(), nil
}

// CloseIdle closes the client's idle connections (at the session's end).
func (c *Client) CloseIdle() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// ReadCapped reads r to its end, at most max bytes: more is an error, and
// nothing read is returned with it.
func ReadCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("the response is larger than max_response_bytes (%d bytes)", max)
	}
	return b, nil
}
