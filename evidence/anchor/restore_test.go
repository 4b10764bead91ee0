package anchor_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/evidence/anchor"
)

// restoreOK restores l from src, failing t on an error.
func (l *testLog) restoreOK(t testing.TB, src anchor.Source) anchor.RestoreStats {
	t.Helper()
	stats, err := l.Restore(context.Background(), src, l.verifier)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// size is how many leaves l holds.
func (l *testLog) size(t testing.TB) uint64 {
	t.Helper()
	n, err := l.Size(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// leavesOf reads the leaves of the copy in src through an audit.
func leavesOf(t *testing.T, v *anchor.Verifier, src anchor.Source, kept [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	if _, err := v.Audit(context.Background(), src, anchor.AuditOptions{Kept: kept, Leaf: func(_ uint64, leaf []byte) error {
		out = append(out, bytes.Clone(leaf))
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestoreFromTheBucketGoesOnAppending: anchorer A's log is mirrored
// and A's machine is lost; B, with the same key and an empty directory,
// restores the log from the bucket, appends more and mirrors them. The
// bucket's every checkpoint version is consistent with its current one
// (no fork), and its leaves are A's followed by B's.
func TestRestoreFromTheBucketGoesOnAppending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, c, m := mirrorSetup(t)
	a.appendAll(t, records("a", 1, 700))
	syncOK(t, m, a.Source())
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	bucket := anchor.BucketSource{Client: c, Bucket: testBucket}
	stats := b.restoreOK(t, bucket)
	// 3 bundles read (2 full, 1 partial of 188), 4 tiles compared (3 at
	// level 0, 1 at level 1).
	if !stats.Restored || stats.From != 0 || stats.To != 700 || stats.Bundles != 3 || stats.Tiles != 4 || stats.MovedAside != "" {
		t.Fatalf("restore into an empty directory: %+v", stats)
	}
	if got := b.size(t); got != 700 {
		t.Fatalf("the restored log holds %d leaves, want 700", got)
	}
	idx, err := b.Append(ctx, records("b", 1, 100))
	if err != nil || idx[0] != 700 {
		t.Fatalf("append after the restore: first index %v, %v; want 700", idx, err)
	}
	if _, err := b.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	syncOK(t, newMirror(t, c, testBucket), b.Source())

	history, err := bucket.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaves := leavesOf(t, b.verifier, bucket, history)
	want := append(records("a", 1, 700), records("b", 1, 100)...)
	if len(history) != 2 || len(leaves) != len(want) {
		t.Fatalf("the bucket: %d checkpoint versions, %d leaves; want 2 and %d", len(history), len(leaves), len(want))
	}
	for i := range want {
		if !bytes.Equal(leaves[i], want[i]) {
			t.Fatalf("leaf %d is %s, want %s", i, leaves[i], want[i])
		}
	}
	if stats := b.restoreOK(t, bucket); stats.Restored || stats.From != 800 {
		t.Fatalf("a restore of a log as large as its bucket: %+v, want nothing done", stats)
	}
}

// tamperedSource is a copy of a log with one resource changed on its way
// to the reader.
type tamperedSource struct {
	anchor.Source
	bundle func(index uint64, p uint8, raw []byte) []byte
	tile   func(level, index uint64, p uint8, raw []byte) []byte
}

func (s tamperedSource) ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error) {
	raw, err := s.Source.ReadEntryBundle(ctx, index, p)
	if err == nil && s.bundle != nil {
		raw = s.bundle(index, p, bytes.Clone(raw))
	}
	return raw, err
}

func (s tamperedSource) ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error) {
	raw, err := s.Source.ReadTile(ctx, level, index, p)
	if err == nil && s.tile != nil {
		raw = s.tile(level, index, p, bytes.Clone(raw))
	}
	return raw, err
}

// TestRestoreRefusesACopyThatDoesNotVerify: a copy with a rewritten leaf,
// a leaf added to a bundle, a rewritten tile or a forged checkpoint is
// refused, and the directory restored into is left as it was: empty, and
// appending from leaf 0.
func TestRestoreRefusesACopyThatDoesNotVerify(t *testing.T) {
	t.Parallel()
	dir, v, _ := closedLog(t)
	flip := func(raw []byte, at int) []byte { raw[at] ^= 0x01; return raw }
	other := openLog(t) // another key of the same origin
	other.appendAll(t, records("s1", 1, 600))
	for _, tc := range []struct {
		name string
		src  anchor.Source
		want error
	}{
		{"a leaf rewritten", tamperedSource{Source: anchor.DirSource(dir), bundle: func(i uint64, _ uint8, raw []byte) []byte {
			if i == 1 {
				return flip(raw, 40)
			}
			return raw
		}}, anchor.ErrBundleMismatch},
		{"a leaf added to the partial bundle", tamperedSource{Source: anchor.DirSource(dir), bundle: func(i uint64, p uint8, raw []byte) []byte {
			if p > 0 {
				return append(raw, 0, 1, 'x')
			}
			return raw
		}}, anchor.ErrBundleMismatch},
		{"a tile rewritten", tamperedSource{Source: anchor.DirSource(dir), tile: func(level, i uint64, _ uint8, raw []byte) []byte {
			if level == 0 && i == 1 {
				return flip(raw, 70)
			}
			return raw
		}}, anchor.ErrTileMismatch},
		{"a checkpoint of another key", other.Source(), anchor.ErrCheckpointSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := openLogWith(t, filepath.Join(t.TempDir(), "log"), other.signer, other.vkey)
			stats, err := b.Restore(context.Background(), tc.src, v)
			if !errors.Is(err, tc.want) {
				t.Fatalf("restore: %+v, %v; want %v", stats, err, tc.want)
			}
			t.Log(err)
			if _, err := os.Stat(filepath.Join(b.dir, "tile", "entries")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused restore left entry bundles in the directory (%v)", err)
			}
			if got := b.size(t); got != 0 {
				t.Fatalf("after a refused restore the log holds %d leaves, want 0", got)
			}
		})
	}
}

// TestRestoreLeavesADivergingDirectory: a directory behind the copy whose
// leaves are not the copy's first ones (another history under the same
// key) is not replaced, and one that is the copy's prefix is moved aside,
// not lost.
func TestRestoreLeavesADivergingDirectory(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	behind := copyDir(t, a.dir)
	a.appendAll(t, records("a", 301, 400))

	diverging := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	diverging.appendAll(t, records("other", 1, 10))
	if stats, err := diverging.Restore(context.Background(), a.Source(), a.verifier); !errors.Is(err, anchor.ErrDiverged) {
		t.Fatalf("a diverging directory: %+v, %v; want ErrDiverged", stats, err)
	}
	if got := diverging.size(t); got != 10 {
		t.Fatalf("the diverging directory holds %d leaves after the refused restore, want its 10", got)
	}

	b := openLogWith(t, behind, a.signer, a.vkey)
	stats := b.restoreOK(t, a.Source())
	if !stats.Restored || stats.From != 300 || stats.To != 700 || stats.MovedAside == "" {
		t.Fatalf("a directory behind the copy: %+v", stats)
	}
	if got := leavesOf(t, a.verifier, anchor.DirSource(stats.MovedAside), nil); len(got) != 300 {
		t.Fatalf("the directory moved aside holds %d leaves, want its 300", len(got))
	}
	if got := b.size(t); got != 700 {
		t.Fatalf("the restored log holds %d leaves, want 700", got)
	}
}

// TestRestoreIntoDirWithTrailingSlash: a Dir written "/x/log/" is the
// directory /x/log (Open cleans it): the restore builds its new directory
// beside the log's, not inside it, and succeeds.
func TestRestoreIntoDirWithTrailingSlash(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	dir := filepath.Join(t.TempDir(), "log") + "/"
	b := openLogWith(t, dir, a.signer, a.vkey)
	if st := b.restoreOK(t, a.Source()); !st.Restored || st.To != 300 {
		t.Fatalf("restore into %q: %+v", dir, st)
	}
	if got := b.size(t); got != 300 {
		t.Fatalf("the restored log holds %d leaves, want 300", got)
	}
}

// TestRestoreGoesToTheLargestCheckpointVersion: an old checkpoint version
// put back on top of the bucket does not take a restore back to it: the
// log is restored to the largest version, consistent with the others.
func TestRestoreGoesToTheLargestCheckpointVersion(t *testing.T) {
	t.Parallel()
	a, c, m := mirrorSetup(t)
	old := a.appendAll(t, records("a", 1, 300))
	syncOK(t, m, a.Source())
	a.appendAll(t, records("a", 301, 400))
	syncOK(t, m, a.Source())
	putObject(t, c, testBucket, "checkpoint", old)

	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	if st := b.restoreOK(t, anchor.BucketSource{Client: c, Bucket: testBucket}); !st.Restored || st.To != 700 {
		t.Fatalf("restore from a bucket whose current checkpoint is an old version: %+v, want 700 leaves", st)
	}
	if got := b.size(t); got != 700 {
		t.Fatalf("the restored log holds %d leaves, want 700", got)
	}
}

// TestRestoreRefusesCheckpointVersionsOfTwoHistories: a bucket holding a
// checkpoint version of another history under the same key (same size,
// another root) is refused, and the directory is left as it was.
func TestRestoreRefusesCheckpointVersionsOfTwoHistories(t *testing.T) {
	t.Parallel()
	a, c, m := mirrorSetup(t)
	a.appendAll(t, records("a", 1, 300))
	syncOK(t, m, a.Source())
	fork := openLogWith(t, t.TempDir(), a.signer, a.vkey)
	putObject(t, c, testBucket, "checkpoint", fork.appendAll(t, records("fork", 1, 300)))

	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	stats, err := b.Restore(context.Background(), anchor.BucketSource{Client: c, Bucket: testBucket}, a.verifier)
	if !errors.Is(err, anchor.ErrInconsistent) || stats.Restored {
		t.Fatalf("restore from a bucket of two histories: %+v, %v; want ErrInconsistent", stats, err)
	}
	t.Log(err)
	if got := b.size(t); got != 0 {
		t.Fatalf("after the refused restore the log holds %d leaves, want 0", got)
	}
}

// TestRestoreSkipsABucketNoLargerThanTheDirectory: a directory as large as
// every checkpoint version of the bucket is not restored, and the
// versions are not checked: a version that is no checkpoint, or one of
// another key, on top does not stop the anchorer.
func TestRestoreSkipsABucketNoLargerThanTheDirectory(t *testing.T) {
	t.Parallel()
	a, c, m := mirrorSetup(t)
	a.appendAll(t, records("a", 1, 700))
	syncOK(t, m, a.Source())
	other := openLog(t) // another key of the same origin
	putObject(t, c, testBucket, "checkpoint", other.appendAll(t, records("o", 1, 700)))
	putObject(t, c, testBucket, "checkpoint", []byte("not a checkpoint"))

	stats, err := a.Restore(context.Background(), anchor.BucketSource{Client: c, Bucket: testBucket}, a.verifier)
	if err != nil || stats.Restored || stats.From != 700 {
		t.Fatalf("restore of a directory as large as its bucket: %+v, %v; want nothing done", stats, err)
	}
	// Behind the bucket, the same versions are checked, and refused.
	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	if _, err := b.Restore(context.Background(), anchor.BucketSource{Client: c, Bucket: testBucket}, a.verifier); !errors.Is(err, anchor.ErrCheckpointSignature) {
		t.Fatalf("restore of an empty directory from that bucket: %v, want ErrCheckpointSignature", err)
	}
}
