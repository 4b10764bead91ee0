package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Compact rewrites the evidence file at path into a fresh file holding
// only what the log holds now, and puts it in the old one's place. bbolt
// keeps the pages a removal freed, with their old bytes, for reuse: after
// Prune, the removed sessions' records are gone from the log but still in
// the file, readable with a hex editor. Compact leaves none of them in the
// file at path (what the filesystem does with the old file's blocks is its
// own).
//
// The old file stays locked, for writing, until the new one is in its
// place, so no writer comes in between; the new file is verified before it
// replaces the old one, and a failure leaves the old file as it was. It
// returns both files' sizes.
func Compact(path string, timeout time.Duration) (before, after int64, err error) {
	// A symlink is followed: the file it names is the log (renaming over
	// the link would leave that file, free pages and all, in place).
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: max(timeout, 0)})
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	defer src.Close()
	if err := src.View(checkFormat); err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	orig, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	// A copy an earlier compaction left (it was killed) holds the log too.
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".compact-*"))
	for _, f := range stale {
		os.Remove(f)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".compact-*")
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	// The new file is the old one's: its mode, and its owner when this
	// runs as root (prune by an administrator must not leave the daemon's
	// user a file it cannot open).
	err = tmp.Chmod(orig.Mode().Perm())
	if st, ok := orig.Sys().(*syscall.Stat_t); ok && err == nil && os.Geteuid() == 0 {
		err = tmp.Chown(int(st.Uid), int(st.Gid))
	}
	tmp.Close()
	if err != nil {
		os.Remove(tmpPath)
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmpPath)
		}
	}()
	dst, err := bolt.Open(tmpPath, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	if err := bolt.Compact(dst, src, 0); err != nil {
		dst.Close()
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	// The copy must verify before it replaces the original.
	check, err := Open(tmpPath, &Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: the copy: %w", path, err)
	}
	rep, err := check.Verify()
	check.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: the copy: %w", path, err)
	}
	if first, bad := rep.FirstBad(); bad {
		return 0, 0, fmt.Errorf("compact evidence %s: %w in the copy: %s (the file was left as it was)", path, ErrNotIntact, first)
	}
	before = orig.Size()
	if fi, err := os.Stat(tmpPath); err == nil {
		after = fi.Size()
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return 0, 0, fmt.Errorf("compact evidence %s: %w", path, err)
	}
	done = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename, durable
		d.Close()
	}
	return before, after, nil
}
