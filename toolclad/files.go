package toolclad

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// StateDir is the only directory save_storage_state writes and
	// load_storage_state reads signed-in state (cookies, local storage)
	// in: owner-only (no group or other permission bits), and neither
	// upload_dir nor download_dir, nor inside or around either, so that
	// upload_file cannot send a state file to a site and no download can
	// plant one.
	StateDir string
	// AutoloadState is the name of a state in StateDir the session loads
	// as it opens its first browser context (autoload_state), checked as
	// load_storage_state checks it; "" for none.
	AutoloadState string
}

// DefaultMaxDownloadBytes is max_download_bytes when a manifest gives none.
const DefaultMaxDownloadBytes = 100 << 20

// maxDownloadLimit is the largest max_download_bytes a manifest may give.
const maxDownloadLimit = 4 << 30

func decodeFiles(t *table, m *Manifest) {
	m.Browser.Files.UploadDir = filesDir(t, "upload_dir")
	m.Browser.Files.DownloadDir = filesDir(t, "download_dir")
	m.Browser.Files.StateDir = stateDir(t, m.Browser.Files)
	if t.str("autoload_state", &m.Browser.Files.AutoloadState) && !stateNamePattern.MatchString(m.Browser.Files.AutoloadState) {
		t.r.errorf(t.at("autoload_state"), "%q is not a state's name: letters, digits, '.', '_', '-', no path", m.Browser.Files.AutoloadState)
	}
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

// stateDir reads [browser.files] state_dir: a directory of its own,
// owner-only as ssh wants ~/.ssh, apart from the upload and download
// directories.
func stateDir(t *table, f Files) string {
	p := filesDir(t, "state_dir")
	if p == "" {
		return ""
	}
	if err := CheckStateDir(p); err != nil {
		t.r.errorf(t.at("state_dir"), "%v", err)
		return ""
	}
	for _, o := range []struct{ key, dir string }{{"upload_dir", f.UploadDir}, {"download_dir", f.DownloadDir}} {
		if o.dir != "" && overlap(p, o.dir) {
			t.r.errorf(t.at("state_dir"), "%s is, holds or lies inside %s %s: a state file there could be uploaded to a site or planted by a download", p, o.key, o.dir)
			return ""
		}
	}
	return p
}

// CheckStateDir reports why dir may not hold signed-in state: a group
// or others permission bit on it (the state is as sensitive as a
// password).
func CheckStateDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: a state directory must be its owner's alone (chmod 700)", dir, perm)
	}
	return nil
}

// overlap reports whether directories a and b are one, or one holds the
// other: as written, and as they resolve through symlinks (a link to the
// upload directory is the upload directory), and, for the directories
// themselves, as files (a bind mount or a second link resolves apart but
// is the same directory). An error resolving either counts as overlap
// (fail closed).
func overlap(a, b string) bool {
	if within(a, b) || within(b, a) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return true
	}
	if within(ra, rb) || within(rb, ra) {
		return true
	}
	ia, errA := os.Stat(ra)
	ib, errB := os.Stat(rb)
	return errA != nil || errB != nil || os.SameFile(ia, ib)
}

// within reports whether path is dir or lies inside it (both clean and
// absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkFiles: a command that uses files needs its directory.
func checkFiles(t *table, m *Manifest) {
	if f := t.sub("files"); m.Browser.Files.AutoloadState != "" {
		switch {
		case m.Browser.Files.StateDir == "":
			t.r.errorf(f.at("autoload_state"), "needs [browser.files] state_dir: the directory the state is loaded from")
		case m.Browser.Engine == EngineHTTP:
			t.r.errorf(f.at("autoload_state"), "engine = \"http\" keeps no browser state to load into")
		case m.Browser.Connect == "live":
			t.r.errorf(f.at("autoload_state"), "live mode keeps the user's browser's own signed-in state: no state is loaded into it")
		}
	}
	for _, name := range []string{"save_storage_state", "load_storage_state"} {
		if m.Command(name) != nil && m.Browser.Files.StateDir == "" {
			t.r.errorf(t.at("commands").child(name), "needs [browser.files] state_dir: the only directory signed-in state is saved in and loaded from")
		}
	}
	if m.Command("upload_file") != nil && m.Browser.Files.UploadDir == "" {
		t.r.errorf(t.at("commands").child("upload_file"), "needs [browser.files] upload_dir: the only directory it may attach files from")
	}
	for _, name := range []string{"download", "download_file", "save_pdf"} {
		if m.Command(name) != nil && m.Browser.Files.DownloadDir == "" {
			t.r.errorf(t.at("commands").child(name), "needs [browser.files] download_dir: the only directory downloads are saved in")
		}
	}
}
