package executor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// profilePrefix names the profile directory of each browser browsergate
// launches, in the temporary directory.
const profilePrefix = "browsergate-chromium-"

// profileLockName is the file in each launched browser's profile that its
// daemon holds locked (flock) for as long as the profile is its.
const profileLockName = "browsergate.lock"

// lockProfile makes the lock file of a new profile dir and locks it, under
// another name first, so that no sweep ever finds it there unlocked while
// its daemon runs. The kernel lets go of the lock when the daemon's
// process ends, however it ends, in whatever PID namespace the sweep runs
// and by whatever path it reaches the directory. The caller closes the
// file once the profile is removed; Go opens files close-on-exec, so the
// browser does not hold it.
func lockProfile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".lock-")
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, profileLockName))
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

var sweepOnce sync.Once

// sweepAbandonedProfiles removes, once per daemon and off the launch's
// path, the profiles in the temporary directory that browsers launched by
// browsergate left behind: a daemon stopped by SIGKILL (or the kernel's
// OOM killer, or a crash) cannot remove its own browser's profile, which
// holds what its sessions' pages stored (cookies, local storage, the hosts
// the network service talked to). What is left of such a browser's
// processes that this daemon can see, named by the same path, is stopped
// with it (removeProfile).
func sweepAbandonedProfiles(logger *slog.Logger) {
	sweepOnce.Do(func() {
		go func() {
			removed, failed := sweepProfiles(os.TempDir())
			for _, dir := range removed {
				logger.Info("removed the profile of a browser a stopped daemon left behind", "dir", dir)
			}
			for _, dir := range failed {
				logger.Warn("could not remove the profile of a browser a stopped daemon left behind", "dir", dir)
			}
		}()
	})
}

// sweepProfiles removes the abandoned profiles in tmp: those it removed,
// and those it could not.
func sweepProfiles(tmp string) (removed, failed []string) {
	entries, _ := os.ReadDir(tmp) // not a pattern: tmp's name may hold * or [
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), profilePrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		release, ok := abandoned(dir)
		if !ok {
			continue
		}
		removeProfile(dir)
		release()
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			removed = append(removed, dir)
		} else {
			failed = append(failed, dir)
		}
	}
	return removed, failed
}

// abandoned reports whether profile dir is one no daemon holds any more: a
// directory of this user whose lock file (a regular file, not a link) it
// could lock, its daemon having ended; the lock is then held until release
// is called. A profile without a lock file (one made by an older
// browsergate, or by a daemon stopped before it locked it), another
// user's, or anything but a directory is left alone.
func abandoned(dir string) (release func(), ok bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return nil, false
	}
	// Not a link, and never waiting for a writer (a FIFO of that name).
	f, err := os.OpenFile(filepath.Join(dir, profileLockName), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	if lfi, err := f.Stat(); err != nil || !lfi.Mode().IsRegular() ||
		syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// A download is written into its directory under a hidden staging name
// (stageFile) and linked to its own name once whole: a daemon stopped in
// the middle of a copy leaves the staging file, part of a file the page
// sent. stagingName matches those names, and a staging file not written
// for staleStagingAge is taken for no copy's any more: a copy writes as
// its source sends, and one whose source stalls that long just as another
// daemon sweeps the directory then fails to link its file (reported as
// not saved), leaving nothing.
var stagingName = regexp.MustCompile(`^\.browsergate-[0-9a-f]{16}\.part$`)

// newStagingName is a new staging file's name, one stagingName matches.
func newStagingName() string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return ".browsergate-" + hex.EncodeToString(rnd[:]) + ".part"
}

const staleStagingAge = time.Hour

// sweptDirs are the download directories this daemon has swept.
var sweptDirs sync.Map

// sweepStaleStaging removes, once per directory and daemon and off the
// copy's path, the staging files of copies that no daemon finishes any
// more from the download directory dir.
func sweepStaleStaging(dir string) {
	if _, done := sweptDirs.LoadOrStore(filepath.Clean(dir), true); done {
		return
	}
	go sweepStaging(dir, time.Now())
}

// sweepStaging removes the stale staging files of dir (regular files of a
// staging name not changed for staleStagingAge) and returns their names.
func sweepStaging(dir string, now time.Time) []string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !stagingName.MatchString(e.Name()) {
			continue
		}
		fi, err := root.Lstat(e.Name())
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) <= staleStagingAge {
			continue
		}
		if root.Remove(e.Name()) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}
