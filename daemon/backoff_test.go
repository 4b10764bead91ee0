package daemon

import (
	"fmt"
	"testing"
	"time"
)

// TestSignInBackoffKeepsEachSourcesWait: with the table full of sources
// still waiting, new sources share the overflow entry and no held
// source's back-off is reset (it used to be cleared for everyone); a
// source whose wait was forgotten makes room; an IPv6 /64 is one source,
// and an IPv4-mapped address is its IPv4 one.
func TestSignInBackoffKeepsEachSourcesWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newSignInBackoff(3)
	for range 5 {
		b.failed("192.0.2.1", now)
	}
	b.failed("192.0.2.2", now)
	b.failed("192.0.2.3", now)
	for i := range 50 { // a flood of new sources, the table full
		b.failed(fmt.Sprintf("198.51.100.%d", i), now)
	}
	if wait, n := b.failed("192.0.2.1", now); n != 6 || wait != 16*time.Second {
		t.Errorf("a held source after a flood of others: failure %d, wait %s; want its 6th, 16s (not reset)", n, wait)
	}
	if _, n := b.failed("198.51.100.200", now); n != 51 {
		t.Errorf("a new source with the table full: failure %d of the overflow, want 51 (the flood counts as one source)", n)
	}
	if len(b.sources) != 3 {
		t.Errorf("the table holds %d sources, want its bound 3", len(b.sources))
	}

	later := now.Add(time.Minute + failuresForgotten + time.Second)
	if wait, n := b.failed("203.0.113.9", later); n != 1 || wait != 0 {
		t.Errorf("a new source once the others' waits were forgotten: failure %d, wait %s; want its first, none", n, wait)
	}
	if _, ok := b.sources["203.0.113.9"]; !ok {
		t.Error("a source whose wait was forgotten did not make room for a new one")
	}

	v6 := newSignInBackoff(10)
	v6.failed("2001:db8:1:2::1", now)
	if wait, n := v6.failed("2001:db8:1:2:ffff::9", now); n != 2 || wait == 0 {
		t.Errorf("another address of the same /64: failure %d, wait %s; want the /64's second, waiting", n, wait)
	}
	if _, n := v6.failed("2001:db8:1:3::1", now); n != 1 {
		t.Errorf("an address of another /64: failure %d, want its first", n)
	}
	v6.failed("::ffff:192.0.2.7", now)
	if _, n := v6.failed("192.0.2.7", now); n != 2 {
		t.Errorf("an IPv4-mapped address and its IPv4 one: failure %d, want one source's second", n)
	}
}

// TestSignInBackoffSweepsAtMostOnceASecond: with the table full, the walk
// for forgotten sources runs at most once a second: sources forgotten
// just after a sweep make room only at the next one, a second later, and
// a new source meanwhile shares the overflow.
func TestSignInBackoffSweepsAtMostOnceASecond(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newSignInBackoff(2)
	// Their waits end at now+1s: they are forgotten after now+1s+failuresForgotten.
	b.failed("192.0.2.1", now)
	b.failed("192.0.2.2", now)
	sweep := now.Add(time.Second + failuresForgotten) // nothing forgotten yet: a sweep drops none
	if _, n := b.failed("198.51.100.1", sweep); n != 1 {
		t.Fatalf("the first source over the bound: failure %d of the overflow, want 1", n)
	}
	soon := sweep.Add(500 * time.Millisecond) // both forgotten now, but the last sweep was half a second ago
	if _, n := b.failed("198.51.100.2", soon); n != 2 {
		t.Errorf("a new source half a second after a sweep: failure %d, want the overflow's 2nd (no sweep yet)", n)
	}
	if len(b.sources) != 2 || b.sources["192.0.2.1"] == nil {
		t.Errorf("the table was swept within a second of the last sweep: %v", b.sources)
	}
	if _, n := b.failed("198.51.100.3", sweep.Add(time.Second)); n != 1 || b.sources["198.51.100.3"] == nil {
		t.Errorf("a new source a second after the last sweep: failure %d, in the table %v; want its own first", n, b.sources["198.51.100.3"] != nil)
	}
}
