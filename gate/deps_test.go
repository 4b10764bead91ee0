package gate_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestNoBrowserDependency: the decision never touches a browser. No
// package gate depends on, directly or through another, is the CDP
// client's (github.com/chromedp/chromedp, cdproto and the rest of
// github.com/chromedp), as the go command lists them.
func TestNoBrowserDependency(t *testing.T) {
	t.Parallel()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goTool, "list", "-deps", ".")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list -deps: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/browsergate/browsergate/gate") {
		t.Fatalf("go list -deps did not list package gate itself: %q", deps)
	}
	for _, dep := range deps {
		if dep == "github.com/chromedp" || strings.HasPrefix(dep, "github.com/chromedp/") {
			t.Errorf("package gate depends on %s", dep)
		}
	}
}
