package web

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// HostLimiter spaces requests to each host to a rate: a request waits for
// its turn (within its context's deadline) rather than fail. For the
// browserless engine a host is a destination address, the IP the egress
// gate's pinned dial connected to, never a name: "localhost",
// "127.0.0.1", "[::ffff:127.0.0.1]" and a name resolving to 127.0.0.1 are
// one host with one budget, and a new spelling cannot buy a request more
// (issue 31). The browser's request guard, which judges a request before
// anything resolves it, counts by the host the URL names (WaitHost). A nil
// HostLimiter, or one of rate 0, lets every request through at once.
type HostLimiter struct {
	perSecond float64
	mu        sync.Mutex
	hosts     map[string]*rate.Limiter
}

// NewHostLimiter spaces requests to each host to perSecond (0: no limit).
// The first request to a host goes at once.
func NewHostLimiter(perSecond float64) *HostLimiter {
	return &HostLimiter{perSecond: perSecond, hosts: map[string]*rate.Limiter{}}
}

// Wait blocks until a request to the address dest may go, or fails at
// once when it could not go before ctx's deadline. An IPv4-mapped IPv6
// address is its IPv4 address, and a zone is dropped.
func (l *HostLimiter) Wait(ctx context.Context, dest netip.Addr) error {
	if l == nil || l.perSecond <= 0 {
		return nil
	}
	if !dest.IsValid() {
		return ErrNoDestination
	}
	return l.wait(ctx, dest.Unmap().WithZone("").String())
}

// WaitHost is Wait for a host as a URL names it, in its canonical form
// (scope.ParseURL's: a name lowercase, an IPv6 literal in brackets): an
// IP literal counts as its address, in every spelling, and a name as
// itself. A name and the address it resolves to are two hosts here.
func (l *HostLimiter) WaitHost(ctx context.Context, host string) error {
	if l == nil || l.perSecond <= 0 {
		return nil
	}
	if host == "" {
		return ErrNoHost
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		return l.wait(ctx, a.Unmap().WithZone("").String())
	}
	return l.wait(ctx, strings.ToLower(host))
}

// Enabled reports whether the limiter spaces anything.
func (l *HostLimiter) Enabled() bool { return l != nil && l.perSecond > 0 }

// wait takes a turn at host. The turn is taken under the lock, so that a
// limiter is never forgotten while a request holds a turn of it.
func (l *HostLimiter) wait(ctx context.Context, host string) error {
	now := time.Now()
	l.mu.Lock()
	lim, ok := l.hosts[host]
	if !ok {
		if len(l.hosts) >= maxLimitedHosts {
			l.pruneLocked(now)
		}
		lim = rate.NewLimiter(rate.Limit(l.perSecond), 1)
		l.hosts[host] = lim
	}
	r := lim.ReserveN(now, 1)
	l.mu.Unlock()
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(delay).After(dl) {
		r.CancelAt(now)
		return fmt.Errorf("its turn comes in %s, after the call's deadline", delay.Round(time.Millisecond))
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}

// maxLimitedHosts is how many hosts the limiter remembers before it
// forgets the idle ones.
const maxLimitedHosts = 1024

// pruneLocked forgets the hosts whose next request could go at once: a
// limiter with its whole burst back is the same as a new one.
func (l *HostLimiter) pruneLocked(now time.Time) {
	for h, lim := range l.hosts {
		if lim.TokensAt(now) >= 1 {
			delete(l.hosts, h)
		}
	}
}
