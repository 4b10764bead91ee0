package toolclad

import (
	"os"
	"path/filepath"
)

// Files is the [browser.files] table (browsergate extension): where
// upload_file reads the files it may attach, and where downloads are saved.
type Files struct {
	// UploadDir is the only directory upload_file reads from (absolute;
	// the manifest's relative path is relative to the manifest).
	UploadDir string
	// DownloadDir is the only directory downloads are saved in (absolute,
	// like UploadDir).
	DownloadDir string
	// MaxDownloadBytes bounds one download: a larger one is cancelled and
	// nothing of it is kept. 0 in a manifest is DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
}

// DefaultMaxDownloadBytes is max_download_bytes when a manifest gives none.
const DefaultMaxDownloadBytes = 100 << 20

// maxDownloadLimit is the largest max_download_bytes a manifest may give.
const maxDownloadLimit = 4 << 30

func decodeFiles(t *table, m *Manifest) {
	m.Browser.Files.UploadDir = filesDir(t, "upload_dir")
	m.Browser.Files.DownloadDir = filesDir(t, "download_dir")
	m.Browser.Files.MaxDownloadBytes = DefaultMaxDownloadBytes
	var n int64
	if t.integer("max_download_bytes", &n) {
		if n < 1 || n > maxDownloadLimit {
			t.r.errorf(t.at("max_download_bytes"), "must be between 1 and %d bytes, got %d", int64(maxDownloadLimit), n)
		} else {
			m.Browser.Files.MaxDownloadBytes = n
		}
	}
	t.done()
}

// filesDir reads a directory of [browser.files]: it must exist; a relative
// path is relative to the manifest.
func filesDir(t *table, key string) string {
	var p string
	if !t.str(key, &p) {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(t.r.file), p)
	}
	if info, err := os.Stat(p); err != nil {
		t.r.errorf(t.at(key), "%v", err)
	} else if !info.IsDir() {
		t.r.errorf(t.at(key), "%s is not a directory", p)
	} else {
		return filepath.Clean(p)
	}
	return ""
}

// checkFiles: a command that uses files needs its directory.
func checkFiles(t *table, m *Manifest) {
	if m.Command("upload_file") != nil && m.Browser.Files.UploadDir == "" {
		t.r.errorf(t.at("commands").child("upload_file"), "needs [browser.files] upload_dir: the only directory it may attach files from")
	}
	for _, name := range []string{"download", "download_file", "save_pdf"} {
		if m.Command(name) != nil && m.Browser.Files.DownloadDir == "" {
			t.r.errorf(t.at("commands").child(name), "needs [browser.files] download_dir: the only directory downloads are saved in")
		}
	}
}
