package toolclad

import (
	"os"
	"path/filepath"
)

// Files is the [browser.files] table (browsergate extension): where
// upload_file reads the files it may attach.
type Files struct {
	// UploadDir is the only directory upload_file reads from (absolute;
	// the manifest's relative path is relative to the manifest).
	UploadDir string
}

func decodeFiles(t *table, m *Manifest) {
	var p string
	if t.str("upload_dir", &p) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(t.r.file), p)
		}
		if info, err := os.Stat(p); err != nil {
			t.r.errorf(t.at("upload_dir"), "%v", err)
		} else if !info.IsDir() {
			t.r.errorf(t.at("upload_dir"), "%s is not a directory", p)
		} else {
			m.Browser.Files.UploadDir = filepath.Clean(p)
		}
	}
	t.done()
}

// checkFiles: a command that uses files needs its directory.
func checkFiles(t *table, m *Manifest) {
	if m.Command("upload_file") != nil && m.Browser.Files.UploadDir == "" {
		t.r.errorf(t.at("commands").child("upload_file"), "needs [browser.files] upload_dir: the only directory it may attach files from")
	}
}
