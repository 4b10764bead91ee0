package mask_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMaskerHasNoBrowser: the masker is a pure transformation of text. It
// links no browser (chromedp) and no part of the executor, so it can be
// read, tested and reused without either.
func TestMaskerHasNoBrowser(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/chromedp/") || dep == "github.com/browsergate/browsergate/executor" {
			t.Errorf("package mask depends on %s", dep)
		}
	}
}
