package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Debian's two Chromium binaries, as /proc/<pid>/exe names them: the full
// browser (/usr/bin/chromium is a wrapper that execs it) and
// chromium-headless-shell.
const (
	fullBrowserBinary   = "/usr/lib/chromium/chromium"
	headlessShellBinary = "/usr/lib/chromium/chromium-headless-shell"
)

// browserBinaries counts serve's descendants by the binary they run.
func browserBinaries(t *testing.T, servePID int) map[string]int {
	t.Helper()
	binaries := map[string]int{}
	for _, pid := range descendants(t, servePID) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err != nil {
			continue // the process exited meanwhile
		}
		binaries[exe]++
	}
	return binaries
}

func TestDefaultLaunchRunsTheHeadlessShell(t *testing.T) {
	t.Parallel()
	// Without chromium-headless-shell the default is the full browser,
	// and this machine tests that instead.
	want, other := headlessShellBinary, fullBrowserBinary
	if _, err := os.Stat(headlessShellBinary); err != nil {
		want, other = other, want
	}
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""))
	// The whole sign-in flow (navigate, snapshot, typing into fields by
	// ref, a click that submits, the next page) works on the browser
	// launched.
	f.login(t)
	got := browserBinaries(t, f.pid)
	if got[want] == 0 || got[other] != 0 {
		t.Fatalf("serve with no executable_path runs %v, want %s and not %s", got, want, other)
	}
}

func TestExecutablePathWinsOverTheDefault(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(headlessShellBinary); err != nil {
		t.Skip("chromium-headless-shell is not installed: the default is the full browser already")
	}
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", `executable_path = "/usr/bin/chromium"`))
	f.login(t)
	got := browserBinaries(t, f.pid)
	if got[fullBrowserBinary] == 0 || got[headlessShellBinary] != 0 {
		t.Fatalf("serve with executable_path = /usr/bin/chromium runs %v, want %s and not %s", got, fullBrowserBinary, headlessShellBinary)
	}
}
