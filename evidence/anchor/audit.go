package anchor

import (
	"bytes"
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
)

// AuditOptions are what an auditor brings to Audit besides the copy.
type AuditOptions struct {
	// Kept are checkpoints the auditor kept from earlier visits (or every
	// version of the checkpoint the bucket keeps: BucketSource's
	// Checkpoints). Each must verify, and the current checkpoint must be
	// consistent with each: a log shortened (ErrRolledBack) or rewritten
	// (ErrInconsistent) since shows.
	Kept [][]byte
	// Leaf, when set, is called with every leaf in index order as the
	// entry bundles are read. The leaves are the log's only if Audit
	// returns nil; an error Leaf returns ends the audit with that error.
	Leaf func(index uint64, leaf []byte) error
}

// Current reads the copy's checkpoint and checks its signature.
func (v *Verifier) Current(ctx context.Context, src Source) (Checkpoint, error) {
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read the checkpoint: %w", err)
	}
	return v.Checkpoint(raw)
}

// Audit checks a copy of the log from its files alone: the checkpoint's
// signature; consistency with every kept checkpoint; the tree recomputed
// from every entry bundle against the checkpoint's root (a leaf
// rewritten, removed or added shows, ErrBundleMismatch); and every hash
// tile against that tree (ErrTileMismatch). It returns the checkpoint it
// verified.
func (v *Verifier) Audit(ctx context.Context, src Source, opts AuditOptions) (Checkpoint, error) {
	cp, err := v.Current(ctx, src)
	if err != nil {
		return Checkpoint{}, err
	}
	for i, raw := range opts.Kept {
		kept, err := v.Checkpoint(raw)
		if err != nil {
			return cp, fmt.Errorf("kept checkpoint %d: %w", i, err)
		}
		if err := v.Consistency(ctx, src, kept, cp); err != nil {
			return cp, err
		}
	}
	t, err := recompute(ctx, src, cp.Size, opts.Leaf)
	if err != nil {
		return cp, err
	}
	if !bytes.Equal(t.root, cp.Root) {
		where := "the tiles agree with the bundles, so both were rewritten"
		if t.leafTileErr != nil {
			where = "first difference from the tiles: " + t.leafTileErr.Error()
		}
		return cp, fmt.Errorf("%w: the %d leaves of the entry bundles give root %x, the %s says %x (%s)",
			ErrBundleMismatch, cp.Size, t.root, cp, cp.Root, where)
	}
	if t.leafTileErr != nil {
		return cp, fmt.Errorf("%w: %w", ErrTileMismatch, t.leafTileErr)
	}
	if err := checkUpperTiles(ctx, src, cp.Size, t.rows); err != nil {
		return cp, fmt.Errorf("%w: %w", ErrTileMismatch, err)
	}
	return cp, nil
}

// tree is a tree recomputed from its entry bundles.
type tree struct {
	root []byte
	// rows holds, by tile level (1, 2, …), the hashes of the complete
	// nodes at tree level 8×tile level, in order: what those tiles hold.
	rows map[uint64][]byte
	// leafTileErr is the first level-0 tile that differs from the leaf
	// hashes, if any.
	leafTileErr error
}

// recompute reads every entry bundle of a tree of size, hashes its leaves
// (RFC 6962), compares them with the level-0 tiles, and computes the root
// and the nodes the upper tiles hold.
func recompute(ctx context.Context, src Source, size uint64, leaf func(uint64, []byte) error) (tree, error) {
	t := tree{rows: map[uint64][]byte{}}
	rf := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := rf.NewEmptyRange(0)
	visit := func(id compact.NodeID, h []byte) {
		if id.Level > 0 && id.Level%layout.TileHeight == 0 {
			l := uint64(id.Level / layout.TileHeight)
			t.rows[l] = append(t.rows[l], h...)
		}
	}
	for i := uint64(0); i*layout.EntryBundleWidth < size; i++ {
		p := layout.PartialTileSize(0, i, size)
		path := layout.EntriesPath(i, p)
		raw, err := readBundle(ctx, src, i, p)
		if err != nil {
			return t, fmt.Errorf("%w: %v", ErrBundleMismatch, err)
		}
		var b api.EntryBundle
		if err := b.UnmarshalText(raw); err != nil {
			return t, fmt.Errorf("%w: %s: %v", ErrBundleMismatch, path, err)
		}
		want := int(p)
		if p == 0 {
			want = layout.EntryBundleWidth
		}
		if len(b.Entries) != want {
			return t, fmt.Errorf("%w: %s holds %d entries, a tree of size %d has %d there", ErrBundleMismatch, path, len(b.Entries), size, want)
		}
		hashes := make([]byte, 0, want*hashSize)
		for j, e := range b.Entries {
			index := i*layout.EntryBundleWidth + uint64(j)
			h := rfc6962.DefaultHasher.HashLeaf(e)
			if err := r.Append(h, visit); err != nil {
				return t, fmt.Errorf("recompute the tree at leaf %d: %v", index, err)
			}
			hashes = append(hashes, h...)
			if leaf != nil {
				if err := leaf(index, e); err != nil {
					return t, err
				}
			}
		}
		if t.leafTileErr == nil {
			t.leafTileErr = compareTile(ctx, src, 0, i, p, hashes, path)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		return t, fmt.Errorf("recompute the root: %v", err)
	}
	if size == 0 {
		root = rfc6962.DefaultHasher.EmptyRoot()
	}
	t.root = root
	return t, nil
}

// checkUpperTiles compares every tile above level 0 of a tree of size
// with the nodes recomputed from the leaves.
func checkUpperTiles(ctx context.Context, src Source, size uint64, rows map[uint64][]byte) error {
	for level := uint64(1); size>>(level*layout.TileHeight) > 0; level++ {
		n := size >> (level * layout.TileHeight)
		row := rows[level]
		if uint64(len(row)) != n*hashSize {
			return fmt.Errorf("recomputed %d nodes at tile level %d, want %d", len(row)/hashSize, level, n)
		}
		for i := uint64(0); i*layout.TileWidth < n; i++ {
			p := layout.PartialTileSize(level, i, size)
			end := min((i+1)*layout.TileWidth, n)
			if err := compareTile(ctx, src, level, i, p, row[i*layout.TileWidth*hashSize:end*hashSize], ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// compareTile reads the tile at (level, index, p) and compares it with
// want, naming the tile, the node and, for a leaf tile, the bundle.
func compareTile(ctx context.Context, src Source, level, index uint64, p uint8, want []byte, bundle string) error {
	path := layout.TilePath(level, index, p)
	got, err := readTile(ctx, src, level, index, p)
	if err != nil {
		return err
	}
	if bytes.Equal(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s holds %d bytes, want %d hashes", path, len(got), len(want)/hashSize)
	}
	k := 0
	for bytes.Equal(got[k*hashSize:(k+1)*hashSize], want[k*hashSize:(k+1)*hashSize]) {
		k++
	}
	node := index*layout.TileWidth + uint64(k)
	if level == 0 {
		return fmt.Errorf("%s: leaf %d hashes to %x in %s, the tile says %x", path, node, want[k*hashSize:(k+1)*hashSize], bundle, got[k*hashSize:(k+1)*hashSize])
	}
	return fmt.Errorf("%s: node %d at tree level %d is %x, the entry bundles give %x", path, node, level*layout.TileHeight, got[k*hashSize:(k+1)*hashSize], want[k*hashSize:(k+1)*hashSize])
}
