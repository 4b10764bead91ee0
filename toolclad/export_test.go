package toolclad

import (
	"os"
	"testing"
)

// OwnerOnlyDir is a temporary directory of mode 0700, as
// [browser.files] state_dir must be (t.TempDir's follow the umask).
func OwnerOnlyDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}
