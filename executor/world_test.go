package executor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWorldWaitIsBoundedByTheCaller: observe reads the page and the
// element side by side, and both may need the isolated world. A
// reader waiting for the other to make it gives up when its own context
// ends (readPage's 3 s bound), not when the other's does: here the other
// never finishes.
func TestWorldWaitIsBoundedByTheCaller(t *testing.T) {
	t.Parallel()
	s := &session{worldLock: newCtxLock()}
	if err := s.worldLock.lock(context.Background()); err != nil { // the other reader, stuck
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.world(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("world with its context ended: %v, want the deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("world still waits for the other reader after its own context ended")
	}
}
