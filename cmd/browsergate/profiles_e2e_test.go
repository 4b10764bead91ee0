package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAbandonedProfileIsRemovedByTheNextDaemon: a daemon stopped with
// SIGKILL cannot remove its browser's profile, which holds what the
// session's pages stored; the next daemon that launches a browser removes
// it, and what is left of that browser's processes, and keeps its own and
// that of a daemon still running, which named the same directory another
// way.
func TestAbandonedProfileIsRemovedByTheNextDaemon(t *testing.T) {
	// A short name: Chromium's singleton socket goes in it, and a socket's
	// path has at most 107 bytes.
	tmp, err := os.MkdirTemp("", "bgp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp) // the daemons', and so their browsers' profiles
	profiles := func() []string {
		dirs, _ := filepath.Glob(filepath.Join(tmp, "browsergate-chromium-*"))
		return dirs
	}

	first := startWith(t, launchManifest())
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": first.siteURL + "/docs"})
	left := profiles()
	if len(left) != 1 {
		t.Fatalf("profiles while the first daemon runs: %v, want one", left)
	}
	old := left[0]
	// A daemon that goes on running, its temporary directory spelled
	// another way.
	t.Setenv("TMPDIR", tmp+"//")
	running := startWith(t, launchManifest())
	running.mustAllow(t, "e2e.navigate", map[string]any{"url": running.siteURL + "/docs"})
	t.Setenv("TMPDIR", tmp)
	var kept string
	for _, p := range profiles() {
		if p != old {
			kept = p
		}
	}
	keptBefore, err := os.Stat(filepath.Join(kept, "Default"))
	if err != nil {
		t.Fatalf("the running daemon's profile: %v", err)
	}
	lock, err := os.Readlink(filepath.Join(old, "SingletonLock"))
	if err != nil {
		t.Fatalf("the browser's lock: %v", err)
	}
	browserPID, _ := strconv.Atoi(lock[strings.LastIndexByte(lock, '-')+1:])
	if err := syscall.Kill(first.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The browser process dies with its daemon; wait for that, so that the
	// next daemon finds the profile abandoned, not in use.
	for deadline := time.Now().Add(10 * time.Second); ; {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(browserPID), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), old) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed daemon's browser (pid %d) still runs", browserPID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(old, "Default")); err != nil {
		t.Fatalf("the killed daemon's profile is gone before the next daemon started (%v): the test shows nothing", err)
	}

	second := startWith(t, launchManifest())
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": second.siteURL + "/docs"})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Lstat(old); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed daemon's profile %s is still there with the next daemon running", old)
		}
		time.Sleep(50 * time.Millisecond)
	}
	now := profiles()
	if len(now) != 2 || !slices.Contains(now, kept) || slices.Contains(now, old) {
		t.Fatalf("profiles with the second daemon running: %v, want its own and %s", now, kept)
	}
	if after, err := os.Stat(filepath.Join(kept, "Default")); err != nil || !os.SameFile(keptBefore, after) {
		t.Fatalf("the running daemon's profile was touched: %v", err)
	}
	second.mustAllow(t, "e2e.snapshot", nil)
	running.mustAllow(t, "e2e.snapshot", nil)
	// Nothing of the first browser runs any more (helpers outlive a killed
	// browser process, and keep writing into its profile).
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if cmdline, err := os.ReadFile(p); err == nil && strings.Contains(string(cmdline), old) {
			t.Errorf("a process of the killed daemon's browser still runs: %s: %q", p, cmdline)
		}
	}
}
