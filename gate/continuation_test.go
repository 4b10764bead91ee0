package gate

import (
	"math/rand/v2"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestReadingIsFreeOnlyForward: page 2 of a reply whose page 1 was given
// is free, page 2 again is not, skipping ahead is, going back is not, and
// neither is a page the reply does not have.
func TestReadingIsFreeOnlyForward(t *testing.T) {
	r := NewReading(4, 3)
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
		r := NewReading(pages, pages-1)
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
	r := NewReading(1, 5)
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

// TestReadingFreePagesAreTheDefaultPagesNotTheAskedOnes: a reply split
// into many small pages (a small max_chars) has no more free pages than
// its text has at the default page size; the forward pages past them
// count, and still move the reading on.
func TestReadingFreePagesAreTheDefaultPagesNotTheAskedOnes(t *testing.T) {
	const defaultPage = 200000
	free := FreePages(300000, defaultPage) // two default pages: one free
	if free != 1 {
		t.Fatalf("FreePages(300000, %d) = %d, want 1", defaultPage, free)
	}
	r := NewReading(300, free) // 300 pages of 1000 bytes
	if !r.Advance(2) {
		t.Fatal("Advance(2) is not free")
	}
	for n := 3; n <= 300; n++ {
		if r.Advance(n) {
			t.Fatalf("Advance(%d) is free: the reply has 1 free page", n)
		}
	}
	if r.Given != 300 {
		t.Errorf("Given = %d, want 300: a counted forward page still moves the reading on", r.Given)
	}
}

// TestFreePagesIsTheDefaultPageCountLessOne: the text's pages at the
// default size, less the first; none for a text that fits one page, and
// none for a nonsensical size.
func TestFreePagesIsTheDefaultPageCountLessOne(t *testing.T) {
	for _, c := range []struct{ text, page, want int }{
		{0, 100, 0},
		{1, 100, 0},
		{100, 100, 0},
		{101, 100, 1},
		{200, 100, 1},
		{201, 100, 2},
		{1 << 20, 200000, 5},
		{500, 0, 0},
		{500, -1, 0},
	} {
		if got := FreePages(c.text, c.page); got != c.want {
			t.Errorf("FreePages(%d, %d) = %d, want %d", c.text, c.page, got, c.want)
		}
	}
}

// TestNewReadingNeverGivesMoreFreePagesThanTheReplyHas: a free count
// above the reply's pages after the first is cut to them, and a negative
// one is none.
func TestNewReadingNeverGivesMoreFreePagesThanTheReplyHas(t *testing.T) {
	if r := NewReading(3, 10); r.Free != 2 {
		t.Errorf("NewReading(3, 10).Free = %d, want 2", r.Free)
	}
	if r := NewReading(3, -4); r.Free != 0 {
		t.Errorf("NewReading(3, -4).Free = %d, want 0", r.Free)
	}
}

// TestTakeContinuationIsBoundedByMaxInteractions: a session has at most
// max_interactions free continuations; every one after counts.
func TestTakeContinuationIsBoundedByMaxInteractions(t *testing.T) {
	b := &toolclad.Browser{MaxInteractions: 3}
	var l Limits
	for i := 1; i <= 3; i++ {
		if !l.TakeContinuation(b) {
			t.Fatalf("continuation %d of max_interactions 3 is not free", i)
		}
	}
	for i := 4; i <= 10; i++ {
		if l.TakeContinuation(b) {
			t.Fatalf("continuation %d of max_interactions 3 is free", i)
		}
	}
	if l.Continuations != 3 {
		t.Errorf("Continuations = %d, want 3", l.Continuations)
	}
	if l.Interactions != 0 {
		t.Errorf("Interactions = %d: TakeContinuation counts no interaction", l.Interactions)
	}
}
