//go:build !demo

package main

import (
	"strings"
	"testing"
)

// TestReleaseDemoSaysMakeDemo: the release binary's usage lists demo, and
// its demo command, having no demo in it, tells the reader what does:
// make demo in the repository, and fails.
func TestReleaseDemoSaysMakeDemo(t *testing.T) {
	t.Parallel()
	out, code := runBinary(t, "demo")
	if code == 0 || !strings.Contains(out, "built without the demo: run make demo in the repository") {
		t.Errorf("browsergate demo in the release binary: exit %d\n%s", code, out)
	}
}
