package executor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestStateFileWrittenOwnerOnlyAndWhole: a state file is written 0600
// and read back as written; a save that fails (a state over the bound)
// leaves the old file whole and no temporary file behind.
func TestStateFileWrittenOwnerOnlyAndWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := toolclad.Files{StateDir: dir}
	st := &storageState{Version: stateVersion, Cookies: []stateCookie{{Name: "sid", Value: "v1", Domain: "example.com", Path: "/", Expires: -1}},
		Origins: []stateOrigin{{Origin: "https://example.com", LocalStorage: []stateItem{{Name: "k", Value: "v"}}}}}
	ref, err := writeState(files, "alice", st, true)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "alice.json"))
	if err != nil || info.Mode().Perm() != 0o600 || info.Size() != ref.Size {
		t.Fatalf("the state file: %v, %v; want mode 0600 of %d bytes", info.Mode(), err, ref.Size)
	}
	back, ref2, err := readState(files, "alice")
	if err != nil || ref2.SHA256 != ref.SHA256 || back.Cookies[0].Value != "v1" || back.Origins[0].LocalStorage[0].Value != "v" {
		t.Fatalf("read back: %+v, %+v, %v", back, ref2, err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "alice.json"))
	big := &storageState{Version: stateVersion, Cookies: []stateCookie{{Name: "sid", Value: strings.Repeat("x", maxStateBytes), Domain: "example.com"}}}
	if _, err := writeState(files, "alice", big, true); err == nil {
		t.Fatal("a state over the bound was saved")
	}
	after, _ := os.ReadFile(filepath.Join(dir, "alice.json"))
	if string(after) != string(before) {
		t.Error("a failed save changed the old file")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("a failed save left %v", left)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := writeState(files, "alice", st, true); err == nil || !strings.Contains(err.Error(), "its owner's alone") {
		t.Errorf("a save into a directory others may read: %v", err)
	}
}

// TestStateFileCheckedAsOpened: readState judges the file it opened (its
// mode, that it is a regular file), not a name looked up before: a file
// others may read, a symlink (even to a good state file beside it) and a
// FIFO (which must not stall the read) are refused, each saying why.
func TestStateFileCheckedAsOpened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := toolclad.Files{StateDir: dir}
	st := &storageState{Version: stateVersion, Cookies: []stateCookie{}, Origins: []stateOrigin{}}
	if _, err := writeState(files, "good", st, false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeState(files, "open", st, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "open.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("good.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readState(files, "good"); err != nil {
		t.Fatalf("the good state: %v", err)
	}
	for name, want := range map[string]string{"open": "has mode 0644", "link": "not a regular file", "fifo": "not a regular file", "none": "no saved state"} {
		if _, _, err := readState(files, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state %s: %v; want an error saying %q", name, err, want)
		}
	}
}

// FuzzParseState: the state file parser never panics, and what it accepts
// has only http(s) origins and named cookies with a domain.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version": 1, "cookies": [{"name": "a", "value": "b", "domain": "x.test", "path": "/", "expires": -1, "http_only": true, "secure": false}], "origins": [{"origin": "https://x.test", "local_storage": []}]}`))
	f.Add([]byte(`{"version": 1, "cookies": [], "origins": [{"origin": "javascript:alert(1)"}]}`))
	f.Add([]byte(`{"version": 2}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := parseState(raw)
		if err != nil {
			return
		}
		for _, c := range st.Cookies {
			if c.Name == "" || strings.TrimPrefix(c.Domain, ".") == "" {
				t.Fatalf("accepted cookie %+v", c)
			}
		}
		for _, o := range st.Origins {
			if !strings.HasPrefix(o.Origin, "http://") && !strings.HasPrefix(o.Origin, "https://") {
				t.Fatalf("accepted origin %q", o.Origin)
			}
		}
	})
}
