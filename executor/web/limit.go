package web

import (
	"context"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// HostLimiter spaces requests to each host to a rate: a request waits for
// its turn (within its context's deadline) rather than fail. A nil
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

// Wait blocks until a request to host may go, or fails at once when it
// could not go before ctx's deadline.
func (l *HostLimiter) Wait(ctx context.Context, host string) error {
	if l == nil || l.perSecond <= 0 {
		return nil
	}
	host = strings.ToLower(host)
	l.mu.Lock()
	lim, ok := l.hosts[host]
	if !ok {
		if len(l.hosts) >= maxLimitedHosts {
			l.pruneLocked()
		}
		lim = rate.NewLimiter(rate.Limit(l.perSecond), 1)
		l.hosts[host] = lim
	}
	l.mu.Unlock()
	return lim.Wait(ctx)
}

// maxLimitedHosts is how many hosts the limiter remembers before it
// forgets the idle ones.
const maxLimitedHosts = 1024

// pruneLocked forgets the hosts whose next request could go at once: a
// limiter with its whole burst back is the same as a new one.
func (l *HostLimiter) pruneLocked() {
	for h, lim := range l.hosts {
		if lim.Tokens() >= 1 {
			delete(l.hosts, h)
		}
	}
}
