package executor

import "os"

// The browsers a launch chooses between when the manifest names none
// (executable_path).
const (
	// fullBrowser is Debian's chromium: the browser with a window, and
	// the only one of the two that can launch headed.
	fullBrowser = "/usr/bin/chromium"
	// headlessShell is Debian's chromium-headless-shell: the same
	// Chromium build, as the old headless implementation, with no window
	// system or browser UI, and so smaller processes for the same pages.
	// The binary itself, not /usr/bin's wrapper: that is a shell script
	// which runs the browser as its child without exec, so the process
	// the daemon started and stops would be the shell, not the browser.
	headlessShell = "/usr/lib/chromium/chromium-headless-shell"
)

// launchExecutable is the browser a launch runs: the manifest's
// executable_path when it names one; otherwise, for a headless launch,
// chromium-headless-shell when it is installed (installed reports whether
// a path is an executable file), and the full browser in every other
// case.
func launchExecutable(manifestPath string, headless bool, installed func(string) bool) string {
	switch {
	case manifestPath != "":
		return manifestPath
	case headless && installed(headlessShell):
		return headlessShell
	}
	return fullBrowser
}

// isExecutableFile reports whether path is a regular file someone may
// execute.
func isExecutableFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
