package snapshot_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoBrowser: the package and its test helpers are pure: they depend
// on no browser connection (chromedp, only the plain data types of
// cdproto) and on no other package of browsergate, so that a saved
// capture is all a rendering reads.
func TestNoBrowser(t *testing.T) {
	t.Parallel()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command where the test runs:", err)
	}
	out, err := exec.Command(gocmd, "list", "-deps", ".", "./snapshottest").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		switch {
		case dep == "github.com/chromedp/chromedp" || strings.HasPrefix(dep, "github.com/chromedp/chromedp/"):
			t.Errorf("package snapshot depends on %s: it must not drive a browser", dep)
		case strings.HasPrefix(dep, "github.com/browsergate/browsergate/") && !strings.HasPrefix(dep, "github.com/browsergate/browsergate/executor/snapshot"):
			t.Errorf("package snapshot depends on %s: it must depend on nothing of browsergate's", dep)
		}
	}
}
