package web

import (
	"context"
	"fmt"
	"math"
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
//
// A HostLimiter made by NewSharedHostLimiter takes its turns from a
// Schedule that a fleet of daemons shares instead of keeping its own.
type HostLimiter struct {
	perSecond float64
	mu        sync.Mutex
	hosts     map[string]*rate.Limiter
	// shared, when set, gives the turns, under the schedule named key.
	shared Schedule
	key    string
}

// Schedule is a schedule of turns per host kept outside the process: the
// one a fleet of daemons shares (package fleet). Take takes host's next
// turn on the schedule named key, a turn every interval, and returns how
// long to wait for it; a turn more than within away is not taken (an
// error). Any error refuses the request: it is never sent unpaced.
type Schedule interface {
	Take(ctx context.Context, key, host string, interval, within time.Duration) (time.Duration, error)
}

// NewSharedHostLimiter spaces requests to each host to perSecond (0: no
// limit) on s's schedule named key, shared with every limiter of that
// key: the fleet's replicas together send a host no more than perSecond.
func NewSharedHostLimiter(perSecond float64, s Schedule, key string) *HostLimiter {
	l := NewHostLimiter(perSecond)
	l.shared, l.key = s, key
	return l
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
	if l.shared != nil {
		return l.waitShared(ctx, host)
	}
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
	if err := sleep(ctx, delay); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// waitShared takes a turn at host on the shared schedule and waits for it.
func (l *HostLimiter) waitShared(ctx context.Context, host string) error {
	within := time.Duration(math.MaxInt64)
	if dl, ok := ctx.Deadline(); ok {
		within = time.Until(dl)
	}
	interval := time.Duration(float64(time.Second) / l.perSecond)
	delay, err := l.shared.Take(ctx, l.key, host, interval, within)
	if err != nil {
		return err
	}
	return sleep(ctx, delay)
}

// sleep waits for d, or fails when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
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
