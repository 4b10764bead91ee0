package toolclad_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestStateDirIsApartAndOwnerOnly: [browser.files] state_dir is a load
// error when it is, holds or lies inside upload_dir or download_dir (a
// state file there could be attached by upload_file and sent to a site,
// or planted by a download), when others may read it, and when the state
// commands are declared without it; autoload_state is a plain name, and
// no state is loaded into the user's browser.
func TestStateDirIsApartAndOwnerOnly(t *testing.T) {
	t.Parallel()
	base := toolclad.OwnerOnlyDir(t)
	mk := func(name string, mode os.FileMode) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	up, down := mk("up", 0o700), mk("down", 0o700)
	state, open := mk("state", 0o700), mk("open", 0o755)
	inUp, holdsDown := mk("up/state", 0o700), mk("outer", 0o700)
	downInside := mk("outer/down", 0o700)
	tests := []struct {
		name, files, want string
	}{
		{"apart and owner-only", fmt.Sprintf("state_dir = %q\nupload_dir = %q\ndownload_dir = %q", state, up, down), ""},
		{"the upload directory", fmt.Sprintf("state_dir = %q\nupload_dir = %q", up, up), "is, holds or lies inside upload_dir"},
		{"inside the upload directory", fmt.Sprintf("state_dir = %q\nupload_dir = %q", inUp, up), "is, holds or lies inside upload_dir"},
		{"holding the download directory", fmt.Sprintf("state_dir = %q\ndownload_dir = %q", holdsDown, downInside), "is, holds or lies inside download_dir"},
		{"readable by others", fmt.Sprintf("state_dir = %q", open), "has mode 0755: a state directory must be its owner's alone (chmod 700)"},
		{"missing", fmt.Sprintf("upload_dir = %q", up), "needs [browser.files] state_dir"},
		{"autoload", fmt.Sprintf("state_dir = %q\nautoload_state = \"alice\"", state), ""},
		{"autoload with a path", fmt.Sprintf("state_dir = %q\nautoload_state = \"../alice\"", state), "is not a state's name"},
		{"autoload in live mode", fmt.Sprintf("state_dir = %q\nautoload_state = \"alice\"\n[browser]\nconnect = \"live\"", state), "live mode keeps the user's browser's own signed-in state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := "[tool]\nname = \"s\"\nmode = \"browser\"\n[browser.commands.save_storage_state]\n[browser.commands.load_storage_state]\n[browser.files]\n" + tc.files + "\n"
			_, err := toolclad.Parse("s.toml", []byte(doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Parse error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestStateDirThroughASymlinkIsNotTheUploadDir: a state_dir that is a
// symlink to upload_dir, or an upload_dir (or download_dir) that is a
// symlink into state_dir, is the same directory as far as upload_file
// and downloads go: a load error, as the paths written apart would be.
func TestStateDirThroughASymlinkIsNotTheUploadDir(t *testing.T) {
	t.Parallel()
	base := toolclad.OwnerOnlyDir(t)
	up, state := filepath.Join(base, "up"), filepath.Join(base, "state")
	for _, d := range []string{up, state, filepath.Join(state, "inner")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	toUp, intoState := filepath.Join(base, "link-up"), filepath.Join(base, "link-inner")
	if err := os.Symlink(up, toUp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(state, "inner"), intoState); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, stateDir, key, dir string }{
		{"state_dir links to upload_dir", toUp, "upload_dir", up},
		{"upload_dir links into state_dir", state, "upload_dir", intoState},
		{"download_dir links into state_dir", state, "download_dir", intoState},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := fmt.Sprintf("[tool]\nname = \"s\"\nmode = \"browser\"\n[browser.commands.save_storage_state]\n[browser.files]\nstate_dir = %q\n%s = %q\n", c.stateDir, c.key, c.dir)
			_, err := toolclad.Parse("s.toml", []byte(doc))
			if err == nil || !strings.Contains(err.Error(), c.key) {
				t.Fatalf("a state_dir that is the %s through a symlink was accepted (err %v)", c.key, err)
			}
		})
	}
}
