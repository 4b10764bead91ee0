package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/browsergate/browsergate/internal/proctree"
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
	for _, pid := range proctree.Descendants(servePID) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err != nil {
			continue // the process exited meanwhile
		}
		binaries[exe]++
	}
	return binaries
}

// TestDefaultLaunchRunsChromium: a manifest without executable_path
// launches Debian's full browser, whose process layout is the one measured
// and kept (docs/performance.md, Chromium's process layout), and the whole
// sign-in flow (navigate, snapshot, typing into fields by ref, a click that
// submits, the next page) works on it.
func TestDefaultLaunchRunsChromium(t *testing.T) {
	t.Parallel()
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""))
	f.login(t)
	got := browserBinaries(t, f.pid)
	if got[fullBrowserBinary] == 0 || got[headlessShellBinary] != 0 {
		t.Fatalf("serve with no executable_path runs %v, want %s and not %s", got, fullBrowserBinary, headlessShellBinary)
	}
}

// TestExecutablePathIsWhatServeLaunches: a manifest's executable_path is
// the browser launched, here chromium-headless-shell, and the sign-in flow
// works on it too.
func TestExecutablePathIsWhatServeLaunches(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(headlessShellBinary); err != nil {
		t.Skip("chromium-headless-shell is not installed")
	}
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", `executable_path = "`+headlessShellBinary+`"`))
	f.login(t)
	got := browserBinaries(t, f.pid)
	if got[headlessShellBinary] == 0 || got[fullBrowserBinary] != 0 {
		t.Fatalf("serve with executable_path = %s runs %v, want it and not %s", headlessShellBinary, got, fullBrowserBinary)
	}
}
