package anchor

import (
	"bytes"
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/client"
)

// tileFetcher reads tiles from src for Tessera's proof builder, a
// partial tile from its full one where the log removed the partial.
func tileFetcher(src Source) client.TileFetcherFunc {
	return func(ctx context.Context, level, index uint64, p uint8) ([]byte, error) {
		return readTile(ctx, src, level, index, p)
	}
}

// Consistency checks that cur extends kept: a log that has only grown
// since kept was signed. A smaller cur is ErrRolledBack; one of the same
// size with another root, or whose consistency proof (computed from src's
// tiles, RFC 6962 §2.1.2) does not verify, is ErrInconsistent. Both
// checkpoints must already have been verified (Verifier.Checkpoint).
func (v *Verifier) Consistency(ctx context.Context, src Source, kept, cur Checkpoint) error {
	return consistent(ctx, src, kept, cur)
}

// consistent is Consistency, for checkpoints whose signatures were checked
// or that the anchorer trusts (its own log's and the bucket's).
func consistent(ctx context.Context, src Source, kept, cur Checkpoint) error {
	switch {
	case kept.Size > cur.Size:
		return fmt.Errorf("%w: kept %s, the current one has size %d", ErrRolledBack, kept, cur.Size)
	case kept.Size == cur.Size:
		if !bytes.Equal(kept.Root, cur.Root) {
			return fmt.Errorf("%w: two checkpoints of size %d with roots %x and %x", ErrInconsistent, cur.Size, kept.Root, cur.Root)
		}
		return nil
	case kept.Size == 0:
		return nil
	}
	pb, err := client.NewProofBuilder(ctx, cur.Size, tileFetcher(src))
	if err != nil {
		return fmt.Errorf("%w: from size %d to %d: %v", ErrInconsistent, kept.Size, cur.Size, err)
	}
	p, err := pb.ConsistencyProof(ctx, kept.Size, cur.Size)
	if err != nil {
		return fmt.Errorf("%w: from size %d to %d: build the proof from the tiles: %v", ErrInconsistent, kept.Size, cur.Size, err)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, kept.Size, cur.Size, p, kept.Root, cur.Root); err != nil {
		return fmt.Errorf("%w: from size %d to %d: %v", ErrInconsistent, kept.Size, cur.Size, err)
	}
	return nil
}

// Inclusion checks that leaf is the log's leaf at index under cp, with an
// inclusion proof computed from src's tiles (RFC 6962 §2.1.1): a spot
// check of one record that reads a few tiles and no entry bundle. cp must
// already have been verified (Verifier.Checkpoint or Current).
func (v *Verifier) Inclusion(ctx context.Context, src Source, cp Checkpoint, index uint64, leaf []byte) error {
	if index >= cp.Size {
		return fmt.Errorf("%w: leaf %d is beyond the %s", ErrInclusion, index, cp)
	}
	pb, err := client.NewProofBuilder(ctx, cp.Size, tileFetcher(src))
	if err != nil {
		return fmt.Errorf("%w: leaf %d under the %s: %v", ErrInclusion, index, cp, err)
	}
	p, err := pb.InclusionProof(ctx, index)
	if err != nil {
		return fmt.Errorf("%w: leaf %d under the %s: build the proof from the tiles: %v", ErrInclusion, index, cp, err)
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, cp.Size, rfc6962.DefaultHasher.HashLeaf(leaf), p, cp.Root); err != nil {
		return fmt.Errorf("%w: leaf %d under the %s: %v", ErrInclusion, index, cp, err)
	}
	return nil
}
