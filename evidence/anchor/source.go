package anchor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/transparency-dev/tessera/api/layout"
)

// Source is where a copy of the log is read: the log's own directory, a
// copy of it, or the S3 bucket. Each method returns the resource at its
// tlog-tiles path exactly (p is a partial tile's or bundle's width, 0 for
// a full one), or an error wrapping fs.ErrNotExist when there is none.
// Tessera's LogReader is one.
type Source interface {
	ReadCheckpoint(ctx context.Context) ([]byte, error)
	ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error)
	ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error)
}

// DirSource reads a copy of the log from a directory laid out as
// tlog-tiles says (checkpoint, tile/L/N, tile/entries/N).
type DirSource string

// ReadCheckpoint reads dir/checkpoint.
func (d DirSource) ReadCheckpoint(_ context.Context) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), layout.CheckpointPath))
}

// ReadTile reads dir/tile/L/N[.p/W].
func (d DirSource) ReadTile(_ context.Context, level, index uint64, p uint8) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(layout.TilePath(level, index, p))))
}

// ReadEntryBundle reads dir/tile/entries/N[.p/W].
func (d DirSource) ReadEntryBundle(_ context.Context, index uint64, p uint8) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(layout.EntriesPath(index, p))))
}

// hashSize is the size of a node hash (SHA-256).
const hashSize = 32

// readTile reads the tile at (level, index) of a tree of size: its
// partial copy, or, where the log has removed the partial once the full
// tile was written, the full tile's first p hashes (a tile's hashes never
// change once written, so they are the partial's).
func readTile(ctx context.Context, src Source, level, index uint64, p uint8) ([]byte, error) {
	raw, err := src.ReadTile(ctx, level, index, p)
	if p > 0 && errors.Is(err, fs.ErrNotExist) {
		raw, err = src.ReadTile(ctx, level, index, 0)
		if err == nil && len(raw) >= int(p)*hashSize {
			raw = raw[:int(p)*hashSize]
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", layout.TilePath(level, index, p), err)
	}
	return raw, nil
}

// readBundle reads the entry bundle at index of a tree of size, as
// readTile reads a tile: the full bundle's first p entries where the
// partial one is gone.
func readBundle(ctx context.Context, src Source, index uint64, p uint8) ([]byte, error) {
	raw, err := src.ReadEntryBundle(ctx, index, p)
	if p > 0 && errors.Is(err, fs.ErrNotExist) {
		raw, err = src.ReadEntryBundle(ctx, index, 0)
		if err == nil {
			if n, ok := bundlePrefix(raw, int(p)); ok {
				raw = raw[:n]
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", layout.EntriesPath(index, p), err)
	}
	return raw, nil
}

// bundlePrefix returns how many bytes the first n entries of a bundle
// take (each entry is a big-endian 16-bit length and that many bytes), or
// false when the bundle holds fewer.
func bundlePrefix(raw []byte, n int) (int, bool) {
	off := 0
	for range n {
		if off+2 > len(raw) {
			return 0, false
		}
		off += 2 + int(binary.BigEndian.Uint16(raw[off:]))
		if off > len(raw) {
			return 0, false
		}
	}
	return off, true
}
