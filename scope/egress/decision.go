package egress

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"time"
)

// Rules the proxy itself applies. Policy rules (from scope.Verdict.Rule)
// are passed through unchanged.
const (
	// RuleBadRequest refuses what is not a proxy request the proxy serves:
	// an origin-form request, a scheme other than http or ws, a missing or
	// invalid port.
	RuleBadRequest = "bad request"
	// RuleDNS marks a lookup that failed, timed out or returned nothing:
	// with no checked address there is nothing to dial.
	RuleDNS = "dns"
	// RuleSelf refuses the proxy's own listening address, so that a page
	// cannot loop requests through the proxy (or reach its port at all).
	RuleSelf = "self"
	// RuleDial marks an upstream dial that failed or timed out.
	RuleDial = "dial"
	// RuleUpstream marks an upstream that failed after the connection was
	// made (reset, malformed response, timeout).
	RuleUpstream = "upstream"
	// RulePolicyError denies a request whose Policy call panicked: an error
	// inside the gate is a denial (fail closed).
	RulePolicyError = "policy error"
	// RuleClosed marks a request that arrived while the proxy was closing.
	RuleClosed = "closed"
	// RuleTurn refuses a dial whose turn at its address did not come in
	// time (WithDialTurn): no connection is opened.
	RuleTurn = "rate limit"
	// RuleApprovedNotGlobal refuses a host the policy allowed only because
	// a human approved its origin (Verdict.Allowed with Verdict.Ask set)
	// when one of its answers is not globally reachable: what was put to
	// the human was a public host, and no allow_private_cidrs grant may
	// turn that approval into a way to a private address.
	RuleApprovedNotGlobal = "approved origin, address not global"
)

// Decision is the record of one proxied request or tunnel, allowed or not.
// It is what OnDecision receives and what the log line holds, so logs and
// evidence never disagree.
type Decision struct {
	// Time is when the proxy started on the request.
	Time time.Time
	// Method is the request method ("CONNECT" for tunnels).
	Method string
	// Target is the request-target: the absolute URL, or host:port for
	// CONNECT.
	Target string
	// Host is the canonical host the policy judged (the raw host when the
	// policy returned none, or the request did not get that far).
	Host string
	// Port is the target port.
	Port uint16
	// Resolved are the addresses that were checked: the lookup's answers,
	// or the IP literal itself.
	Resolved []netip.Addr
	// Dialed is the checked address the proxy connected to (or tried to);
	// invalid when it never got that far.
	Dialed netip.AddrPort
	// Allowed is true only when every check passed and the request was
	// forwarded to (or the tunnel opened with) Dialed.
	Allowed bool
	// Status is the HTTP status the client received: the proxy's own (403,
	// 400, 502, 504, 200 for an open tunnel) or the upstream's.
	Status int
	// Rule names the rule that decided: the policy's rule, or one of the
	// Rule constants of this package.
	Rule string
	// Reason is one human sentence saying why.
	Reason string
	// Duration is the time from Time to the decision (the upstream's
	// response headers, or the tunnel's opening), not the whole exchange.
	Duration time.Duration
}

// LogValue lets a Decision be logged as one structured slog group.
func (d Decision) LogValue() slog.Value {
	return slog.GroupValue(d.attrs()...)
}

func (d Decision) attrs() []slog.Attr {
	resolved := make([]string, len(d.Resolved))
	for i, a := range d.Resolved {
		resolved[i] = a.String()
	}
	dialed := ""
	if d.Dialed.IsValid() {
		dialed = d.Dialed.String()
	}
	return []slog.Attr{
		slog.Bool("allowed", d.Allowed),
		slog.String("method", d.Method),
		slog.String("target", d.Target),
		slog.String("host", d.Host),
		slog.Int("port", int(d.Port)),
		slog.String("resolved", strings.Join(resolved, ",")),
		slog.String("dialed", dialed),
		slog.Int("status", d.Status),
		slog.String("rule", d.Rule),
		slog.String("reason", d.Reason),
		slog.Duration("duration", d.Duration),
	}
}

// emit completes d and reports it once, to OnDecision and to the log.
func (p *Proxy) emit(d *Decision) {
	d.Duration = p.cfg.Now().Sub(d.Time)
	if p.cfg.OnDecision != nil {
		p.cfg.OnDecision(*d)
	}
	level := slog.LevelInfo
	if !d.Allowed {
		level = p.cfg.DeniedLevel.Level()
	}
	p.cfg.Logger.LogAttrs(context.Background(), level, "egress decision", d.attrs()...)
}
