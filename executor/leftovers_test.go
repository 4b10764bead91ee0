package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSweepRemovesOnlyAbandonedProfiles: a profile whose browser's lock
// names a process that is gone, or one with no lock, no process and no
// change for staleProfileAge, is removed with its singleton socket's
// directory; a profile whose browser runs, one of another host, one just
// made, one a process still names, and anything but a directory of that
// name are left.
func TestSweepRemovesOnlyAbandonedProfiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // singletonDir takes socket directories right in it
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleProfileAge)
	profile := func(name, lock string, changed time.Time) string {
		dir := filepath.Join(tmp, profilePrefix+name)
		if err := os.MkdirAll(filepath.Join(dir, "Default"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "Default", "Cookies"), []byte("session=1"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lock != "" {
			if err := os.Symlink(lock, filepath.Join(dir, "SingletonLock")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, changed, changed); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// A process that ran and is gone, and ones that run with a profile.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	running := func(dir string) int {
		cmd := exec.Command("sh", "-c", "sleep 60; :", "browser", "--user-data-dir="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	deadLock := host + "-" + strconv.Itoa(gone.ProcessState.Pid())

	crashed := profile("crashed", deadLock, time.Now())
	socketDir := filepath.Join(tmp, "org.chromium.Chromium.abc")
	if err := os.Mkdir(socketDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(socketDir, "SingletonSocket"), filepath.Join(crashed, "SingletonSocket")); err != nil {
		t.Fatal(err)
	}
	neverStarted := profile("never-started", "", old)

	live := filepath.Join(tmp, profilePrefix+"live")
	liveLock := host + "-" + strconv.Itoa(running(live))
	profile("live", liveLock, old)
	otherHost := profile("other-host", "not-"+host+"-"+strconv.Itoa(gone.ProcessState.Pid()), old)
	justMade := profile("just-made", "", time.Now())
	named := filepath.Join(tmp, profilePrefix+"named")
	running(named)
	profile("named", "", old)
	garbled := profile("garbled-lock", "no pid here", old)
	notADir := filepath.Join(tmp, profilePrefix+"file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(notADir, old, old); err != nil {
		t.Fatal(err)
	}
	// A link of that name to a directory elsewhere, abandoned as it looks.
	elsewhere := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(elsewhere, old, old); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, profilePrefix+"link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}

	removed := sweepProfiles(tmp, time.Now())
	slices.Sort(removed)
	if want := []string{crashed, neverStarted}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, gone := range []string{crashed, neverStarted, socketDir} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	for _, kept := range []string{live, otherHost, justMade, named, garbled, notADir, link, elsewhere} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
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
