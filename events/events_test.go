package events

import (
	"runtime"
	"sync"
	"testing"
)

// TestWatchersGetEveryEventInOrder: two watchers each get every event, in
// the order published, numbered from 1; a nil hub takes events quietly.
func TestWatchersGetEveryEventInOrder(t *testing.T) {
	h := NewHub(100)
	a, b := h.Watch(), h.Watch()
	for i := range 50 {
		h.Publish(Event{Type: Decision, Command: "navigate", Allowed: Bool(i%2 == 0)})
	}
	for _, w := range []*Watch{a, b} {
		for i := range 50 {
			e := <-w.C
			if e.Seq != uint64(i+1) || e.Time.IsZero() || *e.Allowed != (i%2 == 0) {
				t.Fatalf("event %d: %+v", i, e)
			}
		}
	}
	var none *Hub
	none.Publish(Event{Type: Decision})
}

// TestSlowWatcherIsDropped: a watcher that falls more than its buffer
// behind is dropped (its channel closed, Dropped true) while the others,
// and Publish, go on; nothing blocks.
func TestSlowWatcherIsDropped(t *testing.T) {
	h := NewHub(10)
	slow, fast := h.Watch(), h.Watch()
	var got []uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range fast.C {
			got = append(got, e.Seq)
			if e.Seq == 100 {
				return
			}
		}
	}()
	for range 100 {
		h.Publish(Event{Type: Blocked})
		// The fast watcher reads as it goes; publishing waits for no one,
		// so a little room is left for it.
		for len(fast.c) > 5 {
			runtime.Gosched()
		}
	}
	wg.Wait()
	if len(got) != 100 {
		t.Errorf("the fast watcher got %d events", len(got))
	}
	n := 0
	for range slow.C {
		n++
	}
	if !slow.Dropped() || n != 10 {
		t.Errorf("the slow watcher: dropped %v after %d events", slow.Dropped(), n)
	}
	if h.Watchers() != 1 {
		t.Errorf("%d watchers left, want the fast one", h.Watchers())
	}
	fast.Close()
	fast.Close() // twice is harmless
	if h.Watchers() != 0 || fast.Dropped() {
		t.Errorf("after Close: %d watchers, dropped %v", h.Watchers(), fast.Dropped())
	}
}

// TestHubSeq: Seq is the number of the last event published.
func TestHubSeq(t *testing.T) {
	h := NewHub(0)
	if h.Seq() != 0 {
		t.Errorf("a new hub's Seq: %d", h.Seq())
	}
	h.Publish(Event{Type: Decision})
	h.Publish(Event{Type: Decision})
	if h.Seq() != 2 {
		t.Errorf("after two events Seq is %d", h.Seq())
	}
	var none *Hub
	if none.Seq() != 0 {
		t.Error("a nil hub's Seq is not 0")
	}
}
