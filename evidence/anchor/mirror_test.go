package anchor_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/browsergate/browsergate/evidence/anchor"
)

// TestMirrorCopiesLogUnderObjectLock mirrors a log to a bucket with
// Object Lock, audits the bucket's copy alone, mirrors again after more
// leaves (only what changed is written) and checks that every object
// version the mirror wrote is held in compliance mode.
func TestMirrorCopiesLogUnderObjectLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const bucket = testBucket
	since := time.Now()
	l, c, m := mirrorSetup(t)
	kept := l.appendAll(t, records("s1", 1, 600))
	stats := syncOK(t, m, l.Source())
	// 3 bundles, 3 leaf tiles, 1 level-1 tile, the checkpoint.
	if stats.Size != 600 || stats.Objects != 8 {
		t.Fatalf("first sync: %+v, want size 600 in 8 objects", stats)
	}
	src := anchor.BucketSource{Client: c, Bucket: bucket}
	if _, err := l.verifier.Audit(ctx, src, anchor.AuditOptions{Kept: [][]byte{kept}}); err != nil {
		t.Fatalf("audit of the bucket: %v", err)
	}

	l.appendAll(t, records("s2", 1, 300))
	stats = syncOK(t, m, l.Source())
	// Bundle 2 and leaf tile 2 are full now, bundle 3 and leaf tile 3
	// new and partial, the level-1 tile grew, and the checkpoint.
	if stats.Size != 900 || stats.Objects != 6 {
		t.Fatalf("second sync: %+v, want size 900 in 6 objects", stats)
	}
	if stats = syncOK(t, m, l.Source()); stats.Objects != 0 {
		t.Fatalf("a sync with nothing new: %+v; want no object written", stats)
	}
	history, err := src.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 2 || !bytes.Equal(history[0], kept) {
		t.Fatalf("the bucket keeps %d checkpoint versions, want the 2 mirrored, the kept one first", len(history))
	}
	var n uint64
	cp, err := l.verifier.Audit(ctx, src, anchor.AuditOptions{Kept: history, Leaf: func(uint64, []byte) error { n++; return nil }})
	if err != nil || cp.Size != 900 || n != 900 {
		t.Fatalf("audit of the bucket after the second sync: size %d, %d leaves, %v", cp.Size, n, err)
	}
	requireLocked(t, c, bucket, since)
}

// TestMirrorRefusesRolledBackLog mirrors a log, then asks a new mirror
// (which learns the bucket's checkpoint from the bucket) to copy an
// earlier copy of the log, and a log of the same key rewritten: copying
// either would put a checkpoint over the bucket's that does not extend it.
func TestMirrorRefusesRolledBackLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const bucket = testBucket
	l, c, m := mirrorSetup(t)
	l.appendAll(t, records("s1", 1, 300))
	earlier := copyDir(t, l.dir)
	l.appendAll(t, records("s2", 1, 300))
	syncOK(t, m, l.Source())
	if _, err := newMirror(t, c, bucket).Sync(ctx, anchor.DirSource(earlier)); !errors.Is(err, anchor.ErrMirrorAhead) {
		t.Fatalf("an earlier copy: got %v, want ErrMirrorAhead", err)
	}
	rewritten := openLogWith(t, t.TempDir(), l.signer, l.vkey)
	rewritten.appendAll(t, records("s1", 1, 300))
	rewritten.appendAll(t, records("s3", 1, 400))
	if _, err := newMirror(t, c, bucket).Sync(ctx, rewritten.Source()); !errors.Is(err, anchor.ErrMirrorAhead) {
		t.Fatalf("a rewritten log: got %v, want ErrMirrorAhead", err)
	}
}

// TestAuditOfBucketDetectsOldCheckpointPutBack puts an earlier checkpoint
// version back on top of the bucket's (which Object Lock cannot stop: a
// new version is a write): an auditor who kept nothing still sees the
// roll back, from the versions the bucket keeps locked.
func TestAuditOfBucketDetectsOldCheckpointPutBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const bucket = testBucket
	l, c, m := mirrorSetup(t)
	old := l.appendAll(t, records("s1", 1, 300))
	syncOK(t, m, l.Source())
	l.appendAll(t, records("s2", 1, 300))
	syncOK(t, m, l.Source())
	// The attacker's write: the old checkpoint as the current version.
	putObject(t, c, bucket, "checkpoint", old)
	src := anchor.BucketSource{Client: c, Bucket: bucket}
	if _, err := l.verifier.Audit(ctx, src, anchor.AuditOptions{}); err != nil {
		t.Fatalf("without the history the old checkpoint verifies (it is genuine): %v", err)
	}
	history, err := src.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.verifier.Audit(ctx, src, anchor.AuditOptions{Kept: history}); !errors.Is(err, anchor.ErrRolledBack) {
		t.Fatalf("with the bucket's checkpoint versions: got %v, want ErrRolledBack", err)
	}
}

// TestEnsureBucketRefusesBucketWithoutObjectLock: EnsureBucket accepts a
// bucket it made (again), and refuses one made without Object Lock,
// where the mirror's objects could be deleted.
func TestEnsureBucketRefusesBucketWithoutObjectLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := lockedBucket(t, testBucket)
	if err := anchor.EnsureBucket(ctx, c, testBucket); err != nil {
		t.Fatalf("a second EnsureBucket of a locked bucket: %v", err)
	}
	plain := "plain-bucket"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &plain}); err != nil {
		t.Fatal(err)
	}
	if err := anchor.EnsureBucket(ctx, c, plain); !errors.Is(err, anchor.ErrBucketNotLocked) {
		t.Fatalf("a bucket without Object Lock: got %v, want ErrBucketNotLocked", err)
	}
}
