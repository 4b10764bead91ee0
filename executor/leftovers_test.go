package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSweepRemovesOnlyAbandonedProfiles: a profile whose lock file no
// process holds is removed, with its singleton socket's directory, by
// whatever path the sweep reaches it; one whose lock is held (here, in
// this process; in a process of another PID namespace) is left, by any
// path, as is a profile with no lock file, one whose lock file is a link
// or a directory, and anything but a directory of that name.
func TestSweepRemovesOnlyAbandonedProfiles(t *testing.T) {
	real := t.TempDir()
	t.Setenv("TMPDIR", real) // singletonDir takes socket directories right in it
	// The sweep reaches the directory by another path than the daemons
	// that made the profiles (a link to it, a bind mount, "//").
	alias := filepath.Join(t.TempDir(), "tmp")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	profile := func(name string) string {
		dir := filepath.Join(real, profilePrefix+name)
		if err := os.MkdirAll(filepath.Join(dir, "Default"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "Default", "Cookies"), []byte("session=1"), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	locked := func(dir string) *os.File {
		f, err := lockProfile(dir)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}

	// A killed daemon's: its lock file is there, and free.
	crashed := profile("crashed")
	locked(crashed).Close()
	socketDir := filepath.Join(real, "org.chromium.Chromium.abc")
	if err := os.Mkdir(socketDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(socketDir, "SingletonSocket"), filepath.Join(crashed, "SingletonSocket")); err != nil {
		t.Fatal(err)
	}
	// A running daemon's, here.
	live := profile("live")
	defer locked(live).Close()
	// A running daemon's in another PID namespace, where no pid of this
	// one means anything.
	elsewhere := profile("other-pid-namespace")
	locked(elsewhere).Close()
	holder := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc",
		"flock", "--exclusive", filepath.Join(elsewhere, profileLockName), "sleep", "60")
	holderOut := &strings.Builder{}
	holder.Stdout, holder.Stderr = holderOut, holderOut
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { holder.Wait(); close(ended) }()
	t.Cleanup(func() { holder.Process.Kill(); <-ended })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		release, ok := abandoned(elsewhere)
		if !ok {
			break
		}
		release()
		select {
		case <-ended:
			// No user or PID namespaces here (or no flock(1)): this case
			// cannot be made.
			t.Logf("no process in another PID namespace could hold a lock (%s): that case is not checked", strings.TrimSpace(holderOut.String()))
			if err := os.RemoveAll(elsewhere); err != nil {
				t.Fatal(err)
			}
			elsewhere = ""
		default:
		}
		if elsewhere == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process in another PID namespace did not lock the profile")
		}
	}
	// A FIFO of the lock's name: the sweep must not wait for a writer.
	fifo := profile("a-fifo")
	if err := syscall.Mkfifo(filepath.Join(fifo, profileLockName), 0o600); err != nil {
		t.Fatal(err)
	}
	// No lock file: an older browsergate's, or one whose daemon stopped
	// before it locked it.
	noLock := profile("no-lock")
	linkLock := profile("link-lock")
	free := filepath.Join(t.TempDir(), "free")
	if err := os.WriteFile(free, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(free, filepath.Join(linkLock, profileLockName)); err != nil {
		t.Fatal(err)
	}
	dirLock := profile("dir-lock")
	if err := os.Mkdir(filepath.Join(dirLock, profileLockName), 0o700); err != nil {
		t.Fatal(err)
	}
	notADir := filepath.Join(real, profilePrefix+"file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	locked(target).Close()
	linkDir := filepath.Join(real, profilePrefix+"link")
	if err := os.Symlink(target, linkDir); err != nil {
		t.Fatal(err)
	}

	// Another user's (where this test may give one away: as root).
	var otherUser string
	if os.Getuid() == 0 {
		otherUser = profile("other-user")
		locked(otherUser).Close()
		if err := os.Chown(otherUser, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}

	var removed, failed []string
	swept := make(chan struct{})
	go func() { removed, failed = sweepProfiles(alias); close(swept) }()
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the sweep did not end")
	}
	if want := []string{filepath.Join(alias, filepath.Base(crashed))}; !slices.Equal(removed, want) || len(failed) > 0 {
		t.Errorf("removed %v (failed %v), want %v", removed, failed, want)
	}
	for _, gone := range []string{crashed, socketDir} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	for _, kept := range []string{live, elsewhere, fifo, noLock, linkLock, dirLock, notADir, linkDir, target, free, otherUser} {
		if _, err := os.Lstat(kept); kept != "" && err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	for _, dir := range []string{live, elsewhere} {
		if _, err := os.Stat(filepath.Join(dir, "Default", "Cookies")); dir != "" && err != nil {
			t.Errorf("a running daemon's profile lost its contents: %v", err)
		}
	}
}

// TestLockProfileHoldsItsLock: the lock file has its name only once it is
// locked, and stays locked while the daemon holds it.
func TestLockProfileHoldsItsLock(t *testing.T) {
	dir := t.TempDir()
	f, err := lockProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != profileLockName {
		t.Fatalf("the profile holds %v (%v), want only %s", entries, err, profileLockName)
	}
	// The sweep's own open of the file finds it locked.
	if release, ok := abandoned(dir); ok {
		release()
		t.Fatal("a held profile was taken for abandoned")
	}
	f.Close()
	release, ok := abandoned(dir)
	if !ok {
		t.Fatal("a profile whose lock was let go was not taken for abandoned")
	}
	release()
}

// TestSweepRemovesOnlyStaleStaging: in a download directory, a staging
// file not written for staleStagingAge is removed; a fresh one (a copy
// under way), a file the user named like one, a link of a staging name
// and a directory of one are left, as is everything else.
func TestSweepRemovesOnlyStaleStaging(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * staleStagingAge)
	file := func(name string, changed time.Time) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("part of a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, changed, changed); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stale := file(".browsergate-0123456789abcdef.part", old)
	kept := []string{
		file(".browsergate-fedcba9876543210.part", time.Now()), // a copy under way
		file(".browsergate-mine.part", old),
		file("browsergate-0123456789abcdef.part", old),
		file(".browsergate-0123456789ABCDEF.part", old),
		file("report.csv", old),
	}
	target := file("keep.txt", old)
	link := filepath.Join(dir, ".browsergate-00000000000000aa.part")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, ".browsergate-00000000000000bb.part")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(sub, old, old); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, target, link, sub)

	if got := sweepStaging(dir, time.Now()); !slices.Equal(got, []string{filepath.Base(stale)}) {
		t.Errorf("removed %q, want only %s", got, filepath.Base(stale))
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale staging file is still there (%v)", err)
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
