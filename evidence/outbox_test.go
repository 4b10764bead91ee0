package evidence_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestNextBatchNamesASessionGoneWithoutATombstone: a session shipped that
// the file no longer holds, and whose pruning left no tombstone, fails the
// batch (ErrCorrupt naming it), also when the file has gained as many new
// sessions since as it lost; while every session shipped is there, the
// batch carries no removal.
func TestNextBatchNamesASessionGoneWithoutATombstone(t *testing.T) {
	store, err := evidence.Open(filepath.Join(t.TempDir(), "evidence.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	call := func(session string) {
		t.Helper()
		e := &evidence.Envelope{Session: session, Principal: "alice", Tool: "web", Command: "snapshot",
			Decision: evidence.Decision{Allowed: true, Stage: evidence.StageGate}, Output: "a page"}
		if err := store.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	call("s1")
	call("s2")
	sh := evidence.NewShipped()
	b, err := store.NextBatch(sh, 0)
	if err != nil || !b.Complete || len(b.Records) != 2 {
		t.Fatalf("the first batch: %v, %+v", err, b)
	}
	sh.Apply(b)

	call("s3")
	b, err = store.NextBatch(sh, 0)
	if err != nil || len(b.Removed) != 0 || len(b.Records) != 1 {
		t.Fatalf("a batch with every session shipped still in the file: %v, %d records, removed %v", err, len(b.Records), b.Removed)
	}
	sh.Apply(b)

	// The shipper believes it shipped a session the file does not hold
	// (as if it was removed from the file without a tombstone), and the
	// file gained a session: it holds as many sessions as were shipped.
	sh.Heads["gone"] = bytes.Clone(sh.Heads["s1"])
	call("s4")
	_, err = store.NextBatch(sh, 0)
	if !errors.Is(err, evidence.ErrCorrupt) || !strings.Contains(err.Error(), `session "gone"`) {
		t.Fatalf("a batch after a session went without a tombstone: %v, want ErrCorrupt naming it", err)
	}
}
