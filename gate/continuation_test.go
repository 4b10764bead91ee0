package gate

import (
	"math/rand/v2"
	"testing"
)

// TestReadingIsFreeOnlyForward: page 2 of a reply whose page 1 was given
// is free, page 2 again is not, skipping ahead is, going back is not, and
// neither is a page the reply does not have.
func TestReadingIsFreeOnlyForward(t *testing.T) {
	r := NewReading(4)
	for _, step := range []struct {
		page int
		free bool
	}{
		{1, false}, // the reply's own page
		{2, true},
		{2, false}, // the same page again counts
		{4, true},  // forward, skipping 3
		{3, false}, // back
		{5, false}, // the reply has 4 pages
		{4, false},
	} {
		if got := r.Advance(step.page); got != step.free {
			t.Errorf("Advance(%d) after %d given = %v, want %v", step.page, r.Given, got, step.free)
		}
	}
	if r.Given != 4 {
		t.Errorf("Given = %d, want 4", r.Given)
	}
}

// TestReadingFreePagesAreBoundedByTheReply: whatever pages the agent asks
// for, in whatever order, no more of them are free than the reply has
// pages after its first — the limit cannot be got round by asking again.
func TestReadingFreePagesAreBoundedByTheReply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		pages := 1 + rng.IntN(20)
		r := NewReading(pages)
		free := 0
		for range 200 {
			if r.Advance(rng.IntN(pages+3) - 1) {
				free++
			}
		}
		if free > pages-1 {
			t.Fatalf("%d free continuations of a reply of %d pages", free, pages)
		}
	}
}

// TestReadingOfOnePageHasNoFreeContinuation: a reply that fitted gives
// nothing more for free.
func TestReadingOfOnePageHasNoFreeContinuation(t *testing.T) {
	r := NewReading(1)
	for n := -1; n <= 3; n++ {
		if r.Advance(n) {
			t.Errorf("Advance(%d) of a one-page reply is free", n)
		}
	}
	var zero Reading
	if zero.Advance(1) {
		t.Error("Advance(1) with no reply kept is free")
	}
}
