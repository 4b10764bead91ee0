package executor

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// profilePrefix names the profile directory of each browser browsergate
// launches, in the temporary directory.
const profilePrefix = "browsergate-chromium-"

// staleProfileAge: a profile with no browser's lock in it that was changed
// more recently than this may be one a daemon has just made for a browser
// it is starting, and is left alone.
const staleProfileAge = 10 * time.Minute

var sweepOnce sync.Once

// sweepAbandonedProfiles removes, once per daemon and off the launch's
// path, the profiles that browsers launched by browsergate left behind: a
// daemon stopped by SIGKILL (or the kernel's OOM killer, or a crash) cannot
// remove its own browser's profile, which holds what its sessions' pages
// stored (cookies, local storage, the hosts the network service talked
// to). What is left of such a browser's processes is stopped with it.
func sweepAbandonedProfiles(logger *slog.Logger) {
	sweepOnce.Do(func() {
		go func() {
			for _, dir := range sweepProfiles(os.TempDir(), time.Now()) {
				logger.Info("removed the profile of a browser a stopped daemon left behind", "dir", dir)
			}
		}()
	})
}

// sweepProfiles removes the abandoned profiles in tmp and returns them.
// Nothing is removed where there is no /proc to tell which processes run.
func sweepProfiles(tmp string, now time.Time) []string {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, profilePrefix+"*"))
	var removed []string
	for _, dir := range dirs {
		if abandoned(dir, now) {
			removeProfile(dir)
			removed = append(removed, dir)
		}
	}
	return removed
}

// abandoned reports whether the browser that used profile dir is gone.
// Chromium makes a lock in the profile as it starts (SingletonLock, a
// link to "host-pid" of its browser process): the profile is abandoned
// when that process, on this host, no longer runs with dir. A profile with
// no lock (its browser never got that far) is abandoned when no process
// names it and it has not changed for staleProfileAge. A directory of
// another user, or anything but a directory, is left alone.
func abandoned(dir string, now time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return false
	}
	lock, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return now.Sub(fi.ModTime()) > staleProfileAge && len(processesNaming(dir)) == 0
	}
	i := strings.LastIndexByte(lock, '-')
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(lock[i+1:])
	if i < 0 || err != nil || pid <= 0 || lock[:i] != host {
		return false // not a lock this daemon can judge
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) // gone; unreadable is not known to be gone
	}
	return !namesDir(string(cmdline), dir)
}

// A download is written into its directory under a hidden staging name
// (stageFile) and linked to its own name once whole: a daemon stopped in
// the middle of a copy leaves the staging file, part of a file the page
// sent. stagingName matches those names, and a staging file not written
// for staleStagingAge is taken for no copy's any more: a copy writes as
// its source sends, and one whose source stalls that long then fails to
// link its file (reported as not saved), leaving nothing.
var stagingName = regexp.MustCompile(`^\.browsergate-[0-9a-f]{16}\.part$`)

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
