package anchor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/storage/posix"
)

// DefaultRestoreWorkers is how many entry bundles, or tiles, Restore reads
// at once.
const DefaultRestoreWorkers = 8

// RestoreStats says what Restore did.
type RestoreStats struct {
	// From is how many leaves the directory held before; To how many it
	// holds after (From when nothing was restored).
	From, To uint64
	// Restored says the directory was rebuilt from the copy.
	Restored bool
	// Bundles and Tiles count the entry bundles read from the copy and the
	// copy's tiles compared with the rebuilt tree; Bytes what they took.
	Bundles, Tiles int
	Bytes          int64
	// MovedAside is where the directory went when it held leaves (all of
	// them in the copy, at the same indexes); empty when it held none.
	MovedAside string
	// RemovedAside are the directories earlier restores moved aside that
	// this one removed, keeping the newest KeepMovedAside.
	RemovedAside []string
}

// Restore brings the log's directory up to a copy of the log (the bucket
// Mirror keeps: Mirror.Source) when the directory holds fewer leaves than
// the copy's largest checkpoint: the directory of an anchorer that takes
// over from one whose machine was lost. A copy that keeps every version
// of its checkpoint (BucketSource.Checkpoints) is read whole: every
// version must verify with v, the log's verifier key
// (ErrCheckpointSignature), and be consistent with the largest one, by a
// consistency proof from the copy's tiles (ErrInconsistent); the restore
// goes to the largest, not to the current version, which may be an old
// one put back on top. Tessera's migration
// (tessera.NewMigrationTarget) then rebuilds the log in a new directory
// beside the log's from the copy's entry bundles alone, and refuses them
// unless the tree they give has the checkpoint's root (ErrBundleMismatch);
// every tile of the copy must equal the rebuilt one (ErrTileMismatch).
// The directory's own leaves must be the first leaves of the copy
// (ErrDiverged): a directory that diverges is never replaced. Only then is
// the rebuilt directory, with the copy's checkpoint, put in the log's
// place (a directory with leaves moved aside, one without removed) and
// Tessera opened on it again, to go on appending from the copy's size.
//
// The log's directory must hold Tessera's files only (ErrNotLogDir):
// it is moved aside (DIR.behind-<UTC time>, the KeepMovedAside newest
// kept) or removed whole. A directory that is a symbolic link stays one:
// the directory it names is replaced.
//
// A directory as large as the copy's current checkpoint says, or larger,
// is left alone, nothing else read (the versions grow with every copy):
// Mirror.Sync checks that it extends the copy. So is one as large as every
// version says, or an empty copy, no signature checked. A copy that does
// not verify changes nothing. While Restore runs, Append and Checkpoint
// fail (ErrNotOpen); Tessera is opened again whatever the outcome.
func (l *Log) Restore(ctx context.Context, src Source, v *Verifier) (stats RestoreStats, err error) {
	if v == nil {
		return stats, fmt.Errorf("%w: a restore needs the log's verifier", ErrConfig)
	}
	if v.Origin() != l.origin {
		return stats, fmt.Errorf("%w: the verifier is of %q, the log is %q", ErrOtherLog, v.Origin(), l.origin)
	}
	_, reader, err := l.open()
	if errors.Is(err, ErrNotOpen) {
		// An earlier restore could not open Tessera again: try now.
		if err := l.start(ctx); err != nil {
			return stats, err
		}
		_, reader, err = l.open()
	}
	if err != nil {
		return stats, err
	}
	size, err := reader.IntegratedSize(ctx)
	if err != nil {
		return stats, fmt.Errorf("restore: the size of the log in %s: %w", l.cfg.Dir, err)
	}
	stats.From, stats.To = size, size
	// The usual takeover: a directory as large as the copy's current
	// checkpoint says. Its versions are not read (they grow with every
	// copy): Mirror.Sync checks the directory extends the copy.
	if raw, err := src.ReadCheckpoint(ctx); err == nil {
		if cp, err := parseUnverified(raw); err == nil && size >= cp.Size {
			return stats, nil
		}
	}
	raws, err := copyCheckpoints(ctx, src)
	if err != nil {
		return stats, err
	}
	if len(raws) == 0 || size >= largestClaimed(raws) {
		return stats, nil
	}
	cp, err := largestConsistent(ctx, src, v, raws)
	if err != nil {
		return stats, err
	}
	if size >= cp.Size {
		return stats, nil
	}
	// A symbolic link stays: the directory it names is replaced.
	dir := realDir(l.cfg.Dir)
	if err := logFiles(dir); err != nil {
		return stats, err
	}

	l.mu.Lock()
	l.down = fmt.Errorf("restoring the log in %s from its copy", l.cfg.Dir)
	l.mu.Unlock()
	defer func() {
		if serr := l.start(context.WithoutCancel(ctx)); serr != nil {
			l.mu.Lock()
			l.down = serr
			l.mu.Unlock()
			err = errors.Join(err, serr)
		}
	}()
	if err := l.stop(ctx); err != nil {
		return stats, fmt.Errorf("restore: stop the log in %s: %w", l.cfg.Dir, err)
	}
	tmp := dir + ".restoring"
	if err := os.RemoveAll(tmp); err != nil {
		return stats, fmt.Errorf("restore: %w", err)
	}
	if err := rebuild(ctx, tmp, src, cp, &stats); err != nil {
		os.RemoveAll(tmp)
		return stats, fmt.Errorf("restore from the %s of the copy, refused: %w", cp, err)
	}
	if size > 0 {
		if err := isPrefix(ctx, DirSource(dir), size, DirSource(tmp), cp.Size); err != nil {
			os.RemoveAll(tmp)
			return stats, fmt.Errorf("%w: %s holds %d leaves, the copy's %s: %w", ErrDiverged, dir, size, cp, err)
		}
	}
	aside, err := l.swap(dir, tmp, size > 0)
	if err != nil {
		return stats, err
	}
	stats.To, stats.Restored = cp.Size, true
	if size == 0 {
		if err := os.RemoveAll(aside); err != nil {
			return stats, fmt.Errorf("restore: remove the log's former directory, without leaves: %w", err)
		}
		return stats, nil
	}
	stats.MovedAside = aside
	stats.RemovedAside, err = pruneAside(dir, KeepMovedAside)
	for _, old := range stats.RemovedAside {
		l.logger().Info("removed a directory an earlier restore moved aside: only the newest are kept",
			"removed", old, "kept", KeepMovedAside)
	}
	if err != nil {
		// The restore is done: what is left over is the operator's.
		l.logger().Warn("could not remove a directory an earlier restore moved aside", "dir", dir, "error", err)
	}
	return stats, nil
}

// KeepMovedAside is how many directories moved aside by restores
// (DIR.behind-*) are kept, the newest: older ones are removed.
const KeepMovedAside = 3

// ErrNotLogDir is a log directory that holds more than Tessera's own
// files: a restore, which moves the directory aside or removes it, refuses
// it.
var ErrNotLogDir = errors.New("anchor: the log's directory holds files that are not the log's")

// logFiles checks that dir holds Tessera's own files only (its POSIX
// layout: checkpoint, tile/, .state/, and the temporary checkpoint<N>
// files a crash may leave) and names what else it holds.
func logFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	var other []string
	for _, e := range entries {
		n := e.Name()
		rest, isCheckpoint := strings.CutPrefix(n, layout.CheckpointPath)
		switch {
		case n == "tile" || n == ".state" || n == layout.CheckpointPath:
		case isCheckpoint && strings.Trim(rest, "0123456789") == "":
		default:
			other = append(other, n)
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("%w: %s holds %s besides the log's checkpoint, tile/ and .state/: a restore moves or removes the directory, so dir must be the log's own directory; restore refused",
			ErrNotLogDir, dir, strings.Join(other, ", "))
	}
	return nil
}

// realDir is dir with symbolic links resolved (the one a dangling link
// names, too): a restore replaces the directory a link points to, never
// the link.
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if to, err := os.Readlink(dir); err == nil {
			if !filepath.IsAbs(to) {
				to = filepath.Join(filepath.Dir(dir), to)
			}
			return filepath.Clean(to)
		}
	}
	return dir
}

// unfinished refuses a log directory that is missing while a rebuilt one
// waits beside it (DIR.restoring): a restore that could neither put the
// rebuilt directory in place nor the former one back. Tessera would start
// a new, empty log there.
func unfinished(dir string) error {
	real := realDir(dir)
	if _, err := os.Stat(real); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(real + ".restoring"); err != nil {
		return nil
	}
	return fmt.Errorf("%w: %s is missing and %s.restoring holds a rebuilt log a restore did not finish putting in its place: move it to %s (or remove it, and whatever the restore moved aside, to start a new log)",
		ErrNotOpen, real, real, real)
}

// swap puts the rebuilt directory tmp in dir's place and returns where
// dir went: DIR.behind-<UTC time> when it held leaves, else a name to
// remove. When the rebuilt one cannot take its place, dir is put back;
// when that fails too, dir is left missing and Tessera is not opened on a
// new empty one (unfinished).
func (l *Log) swap(dir, tmp string, behind bool) (string, error) {
	stem := dir + ".replaced"
	if behind {
		stem = dir + ".behind-" + l.now().UTC().Format(asideTime)
	}
	aside := freeName(stem)
	if err := l.rename(dir, aside); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	if err := l.rename(tmp, dir); err != nil {
		if berr := l.rename(aside, dir); berr != nil {
			return "", fmt.Errorf("restore: put the rebuilt log in place: %w; and the log's former directory back: %w (%s is missing: the log is not opened until it is there)", err, berr, dir)
		}
		os.RemoveAll(tmp)
		return "", fmt.Errorf("restore: put the rebuilt log in place: %w (the log's directory is put back as it was)", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	return aside, nil
}

// asideTime is the time in a moved-aside directory's name.
const asideTime = "20060102T150405Z"

// freeName is stem, or stem-2, stem-3, … when it is taken (two restores
// within a second).
func freeName(stem string) string {
	name := stem
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", stem, i)
	}
}

// pruneAside removes the directories restores moved aside from dir
// (DIR.behind-<time>[-n]) but the newest keep, and returns those it
// removed.
func pruneAside(dir string, keep int) ([]string, error) {
	type aside struct {
		path string
		at   string
		n    int
	}
	prefix := filepath.Base(dir) + ".behind-"
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	var all []aside
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		at, count, _ := strings.Cut(rest, "-")
		n := 1
		if count != "" {
			if n, err = strconv.Atoi(count); err != nil {
				continue
			}
		}
		if _, err := time.Parse(asideTime, at); err != nil {
			continue
		}
		all = append(all, aside{filepath.Join(filepath.Dir(dir), e.Name()), at, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].at != all[j].at {
			return all[i].at > all[j].at
		}
		return all[i].n > all[j].n
	})
	var removed []string
	for _, a := range all[min(keep, len(all)):] {
		if err := os.RemoveAll(a.path); err != nil {
			return removed, err
		}
		removed = append(removed, a.path)
	}
	return removed, nil
}

// versioned is a copy that keeps every version of its checkpoint
// (BucketSource).
type versioned interface {
	Checkpoints(ctx context.Context) ([][]byte, error)
}

// copyCheckpoints reads every version of the copy's checkpoint a
// versioned copy keeps, or its one checkpoint; none when it has none.
func copyCheckpoints(ctx context.Context, src Source) ([][]byte, error) {
	if vs, ok := src.(versioned); ok {
		raws, err := vs.Checkpoints(ctx)
		if err != nil {
			return nil, fmt.Errorf("restore: read the copy's checkpoint versions: %w", err)
		}
		return raws, nil
	}
	raw, err := src.ReadCheckpoint(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restore: read the copy's checkpoint: %w", err)
	}
	return [][]byte{raw}, nil
}

// largestClaimed is the largest size the checkpoint versions say, their
// signatures unchecked: a directory that holds as many leaves needs no
// restore, whatever else the copy holds (Mirror.Sync then checks that
// the directory extends the copy's checkpoint). A version that is no
// checkpoint at all claims no size; when a restore is needed, it is
// refused with the rest.
func largestClaimed(raws [][]byte) uint64 {
	var top uint64
	for _, raw := range raws {
		if cp, err := parseUnverified(raw); err == nil {
			top = max(top, cp.Size)
		}
	}
	return top
}

// largestConsistent verifies every checkpoint version of the copy and
// returns the largest, once every other version is shown consistent with
// it by a proof from src's tiles: the copy holds one history, and an old
// version put back on top (the bucket's current one) does not take a
// restore back to it.
func largestConsistent(ctx context.Context, src Source, v *Verifier, raws [][]byte) (Checkpoint, error) {
	cps := make([]Checkpoint, len(raws))
	top := 0
	for i, raw := range raws {
		cp, err := v.Checkpoint(raw)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("restore refused: checkpoint version %d of %d of the copy: %w", i+1, len(raws), err)
		}
		cps[i] = cp
		if cp.Size > cps[top].Size {
			top = i
		}
	}
	for i, cp := range cps {
		if i == top {
			continue
		}
		if err := v.Consistency(ctx, src, cp, cps[top]); err != nil {
			return Checkpoint{}, fmt.Errorf("restore refused: the copy's checkpoint versions are not one history: version %d of %d (%s) and the largest, version %d (%s): %w",
				i+1, len(cps), cp, top+1, cps[top], err)
		}
	}
	return cps[top], nil
}

// rebuild builds the log of cp in the new directory dir from src's entry
// bundles with Tessera's migration, checks src's tiles against the tree
// it built, and writes cp as the directory's checkpoint.
func rebuild(ctx context.Context, dir string, src Source, cp Checkpoint, stats *RestoreStats) error {
	driver, err := posix.New(ctx, posix.Config{Path: dir})
	if err != nil {
		return err
	}
	target, err := tessera.NewMigrationTarget(ctx, driver, tessera.NewMigrationOptions())
	if err != nil {
		return err
	}
	// Tessera retries a failed read ten times, backing off: a bundle that
	// is missing or malformed will not get better, so it ends the
	// migration at once (the S3 client retries what may pass).
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	fetch := func(ctx context.Context, index uint64, p uint8) ([]byte, error) {
		raw, err := readBundle(ctx, src, index, p)
		if err == nil {
			err = bundleHolds(raw, index, p)
		}
		if err != nil {
			cancel(err)
			return nil, err
		}
		mu.Lock()
		stats.Bundles++
		stats.Bytes += int64(len(raw))
		mu.Unlock()
		return raw, nil
	}
	if err := target.Migrate(mctx, DefaultRestoreWorkers, cp.Size, cp.Root, fetch); err != nil {
		if cause := context.Cause(mctx); cause != nil && ctx.Err() == nil {
			return fmt.Errorf("%w: %w", ErrBundleMismatch, cause)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("rebuild the tree: %w", ctx.Err())
		}
		// Name what differs: the tree the bundles give, recomputed.
		if t, rerr := recompute(ctx, DirSource(dir), cp.Size, nil); rerr == nil && !bytes.Equal(t.root, cp.Root) {
			return fmt.Errorf("%w: the %d leaves of the copy's entry bundles give root %x, its %s says %x", ErrBundleMismatch, cp.Size, t.root, cp, cp.Root)
		}
		return fmt.Errorf("rebuild the tree: %w", err)
	}
	if err := sameTiles(ctx, src, DirSource(dir), cp.Size, stats); err != nil {
		return fmt.Errorf("%w: %w", ErrTileMismatch, err)
	}
	return writeSynced(filepath.Join(dir, layout.CheckpointPath), cp.Raw)
}

// bundleHolds checks that raw is a whole entry bundle of p entries (256
// when p is 0): no fewer, and no bytes after them.
func bundleHolds(raw []byte, index uint64, p uint8) error {
	want := int(p)
	if p == 0 {
		want = layout.EntryBundleWidth
	}
	if n, ok := bundlePrefix(raw, want); !ok || n != len(raw) {
		return fmt.Errorf("%s does not hold exactly %d entries", layout.EntriesPath(index, p), want)
	}
	return nil
}

// sameTiles compares every tile of src of a tree of size with the one
// the rebuilt directory has, DefaultRestoreWorkers at once.
func sameTiles(ctx context.Context, src Source, rebuilt DirSource, size uint64, stats *RestoreStats) error {
	var tiles []resource
	for _, r := range changed(0, size) {
		if r.level >= 0 {
			tiles = append(tiles, r)
		}
	}
	var mu sync.Mutex
	return eachAtOnce(ctx, DefaultRestoreWorkers, tiles, func(ctx context.Context, r resource) error {
		want, err := readTile(ctx, rebuilt, uint64(r.level), r.index, r.p)
		if err != nil {
			return err
		}
		if err := compareTile(ctx, src, uint64(r.level), r.index, r.p, want, layout.EntriesPath(r.index, r.p)); err != nil {
			return err
		}
		mu.Lock()
		stats.Tiles++
		stats.Bytes += int64(len(want))
		mu.Unlock()
		return nil
	})
}

// isPrefix checks that the first size leaves of dir are the first leaves
// of rebuilt, a tree of size full: entry bundle by entry bundle, byte for
// byte.
func isPrefix(ctx context.Context, dir Source, size uint64, rebuilt Source, full uint64) error {
	for i := uint64(0); i*layout.EntryBundleWidth < size; i++ {
		p := layout.PartialTileSize(0, i, size)
		have, err := readBundle(ctx, dir, i, p)
		if err != nil {
			return err
		}
		theirs, err := readBundle(ctx, rebuilt, i, layout.PartialTileSize(0, i, full))
		if err != nil {
			return err
		}
		n := int(p)
		if p == 0 {
			n = layout.EntryBundleWidth
		}
		end, ok := bundlePrefix(theirs, n)
		if !ok || !bytes.Equal(have, theirs[:end]) {
			return fmt.Errorf("its leaves in %s differ from the copy's", layout.EntriesPath(i, p))
		}
	}
	return nil
}

// writeSynced writes a new file and syncs it.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir syncs a directory, so that a rename in it lasts.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
