package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSaysWhichPermissionsAreGranted: check names each grant of a
// valid manifest and says every other permission is denied; a manifest
// with a wrong grant is refused with the problem at its line.
func TestCheckSaysWhichPermissionsAreGranted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := func(name, grants string) string {
		p := filepath.Join(dir, name)
		doc := "[tool]\nname = \"p\"\n[browser.scope]\nallowed_domains = [\"maps.example.test\"]\n[browser.permissions]\n" + grants + "\n[browser.commands.navigate]\n"
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, code := runBinary(t, "check", "--manifest", manifest("good.toml", `geolocation = ["https://maps.example.test"]`), "--policies", repoPath("policies"))
	if code != 0 || !strings.Contains(out, "permissions: geolocation to https://maps.example.test; every other one a page asks for is denied without a prompt") {
		t.Errorf("check on a grant: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, "check", "--manifest", manifest("none.toml", ""), "--policies", repoPath("policies"))
	if code != 0 || !strings.Contains(out, "permissions: none granted") {
		t.Errorf("check without a grant: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, "check", "--manifest", manifest("bad.toml", `geolocation = ["https://evil.example.test"]`+"\n"+`webcam = ["https://maps.example.test"]`), "--policies", repoPath("policies"))
	if code != 1 || !strings.Contains(out, "bad.toml:6:") || !strings.Contains(out, "is outside [browser.scope]") ||
		!strings.Contains(out, "bad.toml:7:") || !strings.Contains(out, `unknown permission "webcam"`) {
		t.Errorf("check on wrong grants: exit %d, want 1 with both problems at their lines\n%s", code, out)
	}
}
