package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/browsergate/browsergate/scope"
)

// refusal is an outcome that ends a request with a response from the proxy
// itself.
type refusal struct {
	status       int
	rule, reason string
}

func badRequest(format string, args ...any) *refusal {
	return &refusal{status: http.StatusBadRequest, rule: RuleBadRequest, reason: fmt.Sprintf(format, args...)}
}

// gate runs the checks for one request or tunnel to host:port and returns the
// one address to dial. host is the host as the request-target names it
// (IPv6 in brackets). It fills d.Host, d.Port, d.Resolved, d.Rule and
// d.Reason as it goes.
func (p *Proxy) gate(ctx context.Context, d *Decision, host string, port uint16) (_ netip.AddrPort, ref *refusal) {
	defer func() {
		// An error inside the gate is a denial, never a crash that a
		// caller might retry past.
		if v := recover(); v != nil {
			ref = &refusal{status: http.StatusForbidden, rule: RulePolicyError, reason: fmt.Sprintf("the policy failed while judging %s: %v", host, v)}
		}
	}()
	d.Host, d.Port = host, port
	v := p.cfg.Policy.CheckHost(host, port)
	if v.Host != "" {
		d.Host = v.Host
	}
	d.Rule, d.Reason = v.Rule, v.Reason
	if !v.Allowed {
		return netip.AddrPort{}, &refusal{status: http.StatusForbidden, rule: v.Rule, reason: v.Reason}
	}

	answers, ref := p.resolve(ctx, d.Host)
	if ref != nil {
		return netip.AddrPort{}, ref
	}
	d.Resolved = answers
	for _, a := range answers {
		ap := netip.AddrPortFrom(a, port)
		if what := p.isSelf(ap); what != "" {
			return netip.AddrPort{}, &refusal{status: http.StatusForbidden, rule: RuleSelf,
				reason: fmt.Sprintf("host %s resolves to %s, the address of %s", d.Host, ap, what)}
		}
		av := p.cfg.Policy.CheckAddrPort(ap)
		if !av.Allowed {
			reason := av.Reason
			if len(answers) > 1 || !isLiteral(d.Host) {
				reason = fmt.Sprintf("host %s resolves to %s: %s", d.Host, a, av.Reason)
			}
			return netip.AddrPort{}, &refusal{status: http.StatusForbidden, rule: av.Rule, reason: reason}
		}
		if v.Ask {
			// Reachable only by a human's approval of a public host: the
			// policy's grants (which may admit a private address for
			// allowed_domains) lift nothing here, and every answer must
			// be globally reachable.
			if c := scope.Classify(a); !c.Global {
				return netip.AddrPort{}, &refusal{status: http.StatusForbidden, rule: RuleApprovedNotGlobal,
					reason: fmt.Sprintf("host %s is reachable only because a human approved it as a public host, and it resolves to %s, a %s address (%s): only globally reachable answers are dialled for it, whatever allow_private_cidrs grants", d.Host, a, c.Name, c.Ref)}
			}
		}
	}
	return netip.AddrPortFrom(answers[0], port), nil
}

// resolve returns the addresses of host: the literal itself for an IP
// literal, else the answers of exactly one lookup, deduplicated, without
// zones.
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, *refusal) {
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		return []netip.Addr{a.WithZone("")}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.ResolveTimeout)
	defer cancel()
	answers, err := p.cfg.Resolver.LookupNetIP(rctx, "ip", host)
	if err == nil && len(answers) == 0 {
		err = ErrNoAnswers
	}
	if err != nil {
		status := http.StatusBadGateway
		if isTimeout(err) || errors.Is(rctx.Err(), context.DeadlineExceeded) {
			status = http.StatusGatewayTimeout
		}
		return nil, &refusal{status: status, rule: RuleDNS, reason: fmt.Sprintf("lookup of %s failed: %v", host, err)}
	}
	out := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		if !a.IsValid() {
			return nil, &refusal{status: http.StatusBadGateway, rule: RuleDNS, reason: fmt.Sprintf("lookup of %s returned an invalid address", host)}
		}
		a = a.WithZone("")
		dup := false
		for _, b := range out {
			dup = dup || a == b
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out, nil
}

// isSelf names the listener that dialling ap could reach, "the egress
// proxy" (its own, from Listen) or "an egress gateway serving it" (every
// Gateway it was added to), or returns "" for neither. A request to either
// would loop back into browsergate: it would be judged as the proxy's own
// traffic, not the page's, and a page could use it to reach the gateway
// that every session of a pool shares.
func (p *Proxy) isSelf(ap netip.AddrPort) string {
	p.mu.Lock()
	self, gateways := p.addr, p.gateways
	p.mu.Unlock()
	if reaches(ap, self, isLocalAddr) {
		return "the egress proxy"
	}
	for _, g := range gateways {
		if reaches(ap, g.addrPort(), isLocalAddr) {
			return "an egress gateway serving it"
		}
	}
	return ""
}

// reaches reports whether a connection to ap could arrive at a listener
// bound to ln: ln's port on ln's own address, or on an unspecified address
// (which connects locally); and, when ln is unspecified (it listens on
// every address of the machine), on a loopback address or any address
// local says is the machine's. The same port on another address (a site
// on 127.0.0.3 while the listener is on 127.0.0.1) is someone else's. An
// invalid ln (not listening yet) is reached by nothing.
func reaches(ap, ln netip.AddrPort, local func(netip.Addr) bool) bool {
	if !ln.IsValid() || ap.Port() != ln.Port() {
		return false
	}
	a, at := ap.Addr().Unmap().WithZone(""), ln.Addr().Unmap().WithZone("")
	switch {
	case a == at, a.IsUnspecified():
		return true
	case at.IsUnspecified():
		return a.IsLoopback() || local(a)
	}
	return false
}

// isLocalAddr reports whether a is an address of one of this machine's
// interfaces, asked at the moment of the check, since interfaces come and
// go (a pool's network is set up after the gateway listens). A machine
// whose interfaces cannot be listed counts every address as local: a
// refusal, never a way through.
func isLocalAddr(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if b, ok := netip.AddrFromSlice(n.IP); ok && b.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// dial connects to the checked address ap, within DialTimeout, and never
// once the proxy is closed.
func (p *Proxy) dial(ctx context.Context, network string, ap netip.AddrPort, host string) (net.Conn, error) {
	if p.ctx.Err() != nil {
		return nil, ErrClosed
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	c, err := p.cfg.Dial(dctx, network, ap.String())
	if err != nil {
		return nil, err
	}
	if p.ctx.Err() != nil {
		c.Close()
		return nil, ErrClosed
	}
	return p.upstream(c, host), nil
}

// dialRefusal turns a dial error into the proxy's answer.
func dialRefusal(ap netip.AddrPort, err error) *refusal {
	status := http.StatusBadGateway
	if isTimeout(err) {
		status = http.StatusGatewayTimeout
	}
	return &refusal{status: status, rule: RuleDial, reason: fmt.Sprintf("dial %s failed: %v", ap, err)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func isLiteral(host string) bool {
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil
}

// refuse answers the client for a refusal and reports the decision.
func (p *Proxy) refuse(w http.ResponseWriter, d *Decision, ref *refusal) {
	d.Allowed, d.Status, d.Rule, d.Reason = false, ref.status, ref.rule, ref.reason
	p.emit(d)
	h := w.Header()
	h.Set("X-Browsergate-Denied", headerValue(ref.rule))
	h.Set("X-Browsergate-Reason", headerValue(ref.reason))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if d.Method == http.MethodConnect {
		h.Set("Connection", "close")
	}
	w.WriteHeader(ref.status)
	fmt.Fprintf(w, "browsergate egress proxy refused %s: %s: %s\n", d.Target, ref.rule, ref.reason)
}

// headerValue makes s safe and short for a header value: printable ASCII
// only (RFC 9110 section 5.5 field values; anything else becomes '?'), at
// most 512 bytes.
func headerValue(s string) string {
	const maxLen = 512
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxLen {
			break
		}
		if r < 0x20 || r >= 0x7f || r == utf8.RuneError {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// admit is the one way in for both request forms: it reads the target's
// host and port (defPort when none is given; 0 means one is required),
// runs the gate, and refuses on w when either fails.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, d *Decision, hostname, portStr string, defPort uint16) (netip.AddrPort, bool) {
	host, port, ref := splitTarget(hostname, portStr, defPort)
	if ref == nil {
		var ap netip.AddrPort
		if ap, ref = p.gate(r.Context(), d, host, port); ref == nil {
			return ap, true
		}
	}
	p.refuse(w, d, ref)
	return netip.AddrPort{}, false
}
