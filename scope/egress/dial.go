package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// RefusedError is what DialContext returns when the gate refuses a
// connection, or the checked address cannot be dialled: the rule that
// decided and the reason, as the proxy would have answered a browser.
type RefusedError struct {
	Rule, Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// DialContext is the gate and the pinned dial of the proxy, for a client
// in this process (the browserless engine's http.Transport): host:port is
// judged by the policy, a name is resolved exactly once, every answer is
// checked, and the first answer is dialled — no second lookup, so DNS
// rebinding cannot swap the target. Each call is reported once to
// OnDecision and the log, like a CONNECT tunnel (Method "DIAL"). A refusal
// is a *RefusedError. A context from WithDialTurn waits for the dial's
// turn before it connects. The proxy need not listen; Close stops further
// dials.
func (p *Proxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &Decision{Time: p.cfg.Now(), Method: "DIAL", Target: addr}
	refused := func(ref *refusal) error {
		d.Status, d.Rule, d.Reason = ref.status, ref.rule, ref.reason
		p.emit(d)
		return &RefusedError{Rule: ref.rule, Reason: ref.reason}
	}
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil, refused(badRequest("network %q is not tcp", network))
	}
	hostname, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refused(badRequest("dial target %q is not host:port", addr))
	}
	host, port, ref := splitTarget(hostname, portStr, 0)
	if ref != nil {
		return nil, refused(ref)
	}
	ap, ref := p.gate(ctx, d, host, port)
	if ref != nil {
		return nil, refused(ref)
	}
	if ref := takeDialTurn(ctx, ap); ref != nil {
		return nil, refused(ref)
	}
	d.Dialed = ap
	c, err := p.dial(ctx, "tcp", ap, d.Host)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, refused(&refusal{rule: RuleClosed, reason: "the egress gate is closed"})
		}
		return nil, refused(dialRefusal(ap, err))
	}
	d.Allowed, d.Status = true, 200
	p.emit(d)
	return c, nil
}

// String names the refusal for logs: rule and reason.
func (e *RefusedError) String() string { return fmt.Sprintf("%s: %s", e.Rule, e.Reason) }
