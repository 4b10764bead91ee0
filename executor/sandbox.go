package executor

import (
	"log/slog"
	"sync"
)

// noSandboxWarned makes the warning that Chromium runs without its
// sandbox once per process: running as root is a fact of the process, not
// of a launch, and a daemon that launches a browser per manifest, or again
// after an idle one stopped, repeated it until the operator stopped
// reading its warnings.
var noSandboxWarned sync.Once

// warnNoSandbox warns, the first time a browser is launched without its
// sandbox in this process, that it was and why.
func warnNoSandbox(logger *slog.Logger) {
	noSandboxWarned.Do(func() {
		logger.Warn("Chromium is launched without its sandbox: browsergate runs as root, where Chromium refuses it; run serve as a dedicated user (examples/browsergate.service); said once, for every browser this daemon launches")
	})
}
