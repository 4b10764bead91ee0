package anchor_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence/anchor"
)

// TestAppendCheckpointAuditRoundTrip appends records, takes the signed
// checkpoint, and audits the log's directory: the tree recomputed from
// the entry bundles gives the signed root, every leaf comes back at the
// index Append returned, and after more leaves the new checkpoint is
// consistent with the one kept.
func TestAppendCheckpointAuditRoundTrip(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	ctx := context.Background()
	// 600 leaves: two full bundles and a partial one, a partial tile at
	// level 1.
	first := records("s1", 1, 600)
	indices, err := l.Append(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	for i, idx := range indices {
		if idx != uint64(i) {
			t.Fatalf("leaf %d got index %d", i, idx)
		}
	}
	kept, err := l.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(kept), testOrigin+"\n600\n") {
		t.Fatalf("checkpoint does not start with the origin and size 600:\n%s", kept)
	}
	var got [][]byte
	cp, err := l.verifier.Audit(ctx, anchor.DirSource(l.dir), anchor.AuditOptions{Leaf: func(i uint64, leaf []byte) error {
		if i != uint64(len(got)) {
			t.Errorf("leaf %d handed back as %d", len(got), i)
		}
		got = append(got, bytes.Clone(leaf))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 600 || cp.Origin != testOrigin {
		t.Fatalf("audited %+v, want size 600 of %s", cp, testOrigin)
	}
	if len(got) != len(first) {
		t.Fatalf("audit handed back %d leaves, want %d", len(got), len(first))
	}
	for i := range first {
		if !bytes.Equal(got[i], first[i]) {
			t.Fatalf("leaf %d is %q, appended %q", i, got[i], first[i])
		}
	}

	// More leaves: the partial bundle and tiles grow; the new checkpoint
	// extends the kept one.
	l.appendAll(t, records("s2", 1, 300))
	cp, err = l.verifier.Audit(ctx, anchor.DirSource(l.dir), anchor.AuditOptions{Kept: [][]byte{kept}})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 900 {
		t.Fatalf("audited size %d, want 900", cp.Size)
	}
}

// TestInclusionProofSpotChecksOneLeaf checks single leaves with an
// inclusion proof built from the tiles: the appended leaf at its index
// passes; another leaf, or the right leaf at another index, does not.
func TestInclusionProofSpotChecksOneLeaf(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	leaves := records("s1", 1, 1000)
	l.appendAll(t, leaves)
	ctx := context.Background()
	src := anchor.DirSource(l.dir)
	cp, err := l.verifier.Current(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint64{0, 255, 256, 511, 777, 999} {
		if err := l.verifier.Inclusion(ctx, src, cp, i, leaves[i]); err != nil {
			t.Errorf("leaf %d: %v", i, err)
		}
	}
	for _, tc := range []struct {
		name  string
		index uint64
		leaf  []byte
	}{
		{"a rewritten record", 10, []byte(strings.Replace(string(leaves[10]), `"seq":11`, `"seq":12`, 1))},
		{"the record at another index", 11, leaves[10]},
		{"an index beyond the checkpoint", 1000, leaves[10]},
	} {
		if err := l.verifier.Inclusion(ctx, src, cp, tc.index, tc.leaf); !errors.Is(err, anchor.ErrInclusion) {
			t.Errorf("%s: got %v, want ErrInclusion", tc.name, err)
		}
	}
}

// TestOpenRefusesAnotherLogsDirectory opens a log's directory with a key
// of another origin: the anchorer must not append another log's leaves
// there.
func TestOpenRefusesAnotherLogsDirectory(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	l.appendAll(t, records("s1", 1, 3))
	other, _ := newKey(t, "browsergate.test/another-log")
	_, err := anchor.Open(context.Background(), anchor.Config{Dir: l.dir, Signer: other})
	if !errors.Is(err, anchor.ErrOtherLog) {
		t.Fatalf("got %v, want ErrOtherLog", err)
	}
	_, err = anchor.Open(context.Background(), anchor.Config{Dir: t.TempDir(), Signer: other, Origin: testOrigin})
	if !errors.Is(err, anchor.ErrConfig) {
		t.Fatalf("an Origin that is not the signer's name: got %v, want ErrConfig", err)
	}
}

// TestAppendRefusesOversizedLeafWhole appends a batch whose last leaf is
// larger than a tlog-tiles entry holds: nothing of the batch is added.
func TestAppendRefusesOversizedLeafWhole(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	ctx := context.Background()
	batch := append(records("s1", 1, 2), make([]byte, 1<<16))
	if _, err := l.Append(ctx, batch); err == nil {
		t.Fatal("a leaf of 65536 bytes was appended")
	}
	cp, err := l.verifier.Checkpoint(l.appendAll(t, records("s2", 1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 1 {
		t.Fatalf("after the refused batch and one leaf the log has %d leaves, want 1", cp.Size)
	}
}

// TestAuditReadsPartialsFromFullTiles audits an earlier checkpoint in a
// copy from which the partial leaf tile and bundle of its size are gone,
// as Tessera removes them once full ones replace them: the full ones'
// first hashes and entries serve.
func TestAuditReadsPartialsFromFullTiles(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	leaves := records("s1", 1, 900)
	cp600 := l.appendAll(t, leaves[:600])
	l.appendAll(t, leaves[600:])
	dir := copyDir(t, l.dir)
	for _, partial := range []string{"tile/entries/002.p/88", "tile/0/002.p/88"} {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(partial))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint"), cp600, 0o644); err != nil {
		t.Fatal(err)
	}
	var n int
	cp, err := l.verifier.Audit(context.Background(), anchor.DirSource(dir), anchor.AuditOptions{Leaf: func(i uint64, leaf []byte) error {
		if !bytes.Equal(leaf, leaves[i]) {
			t.Errorf("leaf %d is %q, want %q", i, leaf, leaves[i])
		}
		n++
		return nil
	}})
	if err != nil || cp.Size != 600 || n != 600 {
		t.Fatalf("audit of size %d with %d leaves: %v; want 600", cp.Size, n, err)
	}
}

// TestOpenRefusesACheckpointIntervalOutOfRange: less than 100ms (Tessera's
// least) or more than a minute (an anchoring round waits at most 2
// minutes for a checkpoint) is ErrConfig.
func TestOpenRefusesACheckpointIntervalOutOfRange(t *testing.T) {
	t.Parallel()
	s, _ := newKey(t, testOrigin)
	for _, d := range []time.Duration{50 * time.Millisecond, anchor.MaxCheckpointInterval + time.Second} {
		if _, err := anchor.Open(context.Background(), anchor.Config{Dir: t.TempDir(), Signer: s, CheckpointInterval: d}); !errors.Is(err, anchor.ErrConfig) {
			t.Errorf("CheckpointInterval %v: %v, want ErrConfig", d, err)
		}
	}
}
