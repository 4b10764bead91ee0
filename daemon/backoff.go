package daemon

import (
	"net/netip"
	"sync"
	"time"
)

// signInBackoff is the console's back-off after wrong tokens, kept per
// source: each wrong token makes its source's next one wait 1, 2, 4 … up
// to 60 s after it. A source is an IPv4 address, or an IPv6 /64 (one
// host may have a whole /64 to send from).
//
// The table is bounded without forgetting anyone's back-off before its
// time: a source whose wait ended more than failuresForgotten ago is
// dropped to make room, and when every source held is still waiting, the
// new ones share one entry (the overflow), which a flood of sources
// drives up as one. Nothing else resets an entry: not a right token (it
// does not show that the wrong ones were its holder's), not another
// source's, not a timer.
//
// The sweep for forgotten sources walks the whole table: it runs at most
// once a second (sweepEvery), so that a flood of new sources with the
// table full costs one walk a second, not one a wrong token. A source
// that came while the table was full waits in the overflow until then.
type signInBackoff struct {
	mu       sync.Mutex
	max      int
	sources  map[string]*failures
	overflow failures
	swept    time.Time // when the table was last swept
}

// sweepEvery is how often at most the full table is swept.
const sweepEvery = time.Second

// failures are a source's wrong tokens in a row, and when its next
// wrong one is answered 401 rather than 429.
type failures struct {
	n    int
	next time.Time
}

// failuresForgotten is how long after its last wait a source's wrong
// tokens are forgotten: the next one starts the back-off at 1 s again.
const failuresForgotten = 15 * time.Minute

// backoffSources is how many sources the back-off holds apart.
const backoffSources = 4096

func newSignInBackoff(max int) *signInBackoff {
	return &signInBackoff{max: max, sources: map[string]*failures{}}
}

// failed counts a wrong token from the source of addr (an address without
// a port) at now, and returns how long the source had still to wait when
// it came (0: it was its turn) and its failures in a row.
func (b *signInBackoff) failed(addr string, now time.Time) (time.Duration, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.entry(sourceOf(addr), now)
	wait := max(f.next.Sub(now), 0)
	if now.Sub(f.next) > failuresForgotten {
		f.n = 0
	}
	f.n++
	f.next = now.Add(min(time.Second<<min(f.n-1, 6), time.Minute))
	return wait, f.n
}

// entry is the source's entry, made if there is room; b.mu must be held.
func (b *signInBackoff) entry(source string, now time.Time) *failures {
	if f := b.sources[source]; f != nil {
		return f
	}
	if len(b.sources) >= b.max && now.Sub(b.swept) >= sweepEvery {
		b.swept = now
		for k, f := range b.sources {
			if now.Sub(f.next) > failuresForgotten {
				delete(b.sources, k)
			}
		}
	}
	if len(b.sources) >= b.max {
		return &b.overflow
	}
	f := &failures{}
	b.sources[source] = f
	return f
}

// sourceOf is the back-off's key for an address: the address, or its /64
// for IPv6 (an IPv4-mapped address is the IPv4 one).
func sourceOf(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return p.String()
	}
	return a.String()
}
