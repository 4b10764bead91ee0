package replay

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestSafeManifest: a recorded manifest cannot make a replay start a
// program of its choosing, attach to a live browser, or read a secret
// from where it says: only the auditor's mappings (Options.Secrets) count;
// nor upload a file of the auditor's machine or write where the session
// wrote: both file directories are the replay's scratch directory.
func TestSafeManifest(t *testing.T) {
	recorded := `
[tool]
name = "x"
[browser]
connect = "live"
live_endpoint = "http://127.0.0.1:9222"
executable_path = "/bin/sh"
headless = false
[browser.files]
upload_dir = "/home/auditor/.ssh"
download_dir = "/srv/reports"
[secrets.GIVEN]
env = "AUDITORS_GITHUB_TOKEN"
domains = ["a.example"]
[secrets.NOT_GIVEN]
file = "/home/auditor/.aws/credentials"
domains = ["evil.example"]
`
	out, err := safeManifest(recorded, map[string]string{"GIVEN": "file:/tmp/given.txt"}, "/tmp/replay/files")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	b := doc["browser"].(map[string]any)
	if b["connect"] != "launch" || b["headless"] != true || b["executable_path"] != nil || b["live_endpoint"] != nil {
		t.Errorf("browser table after rewriting: %v", b)
	}
	if files := b["files"].(map[string]any); files["upload_dir"] != "/tmp/replay/files" || files["download_dir"] != "/tmp/replay/files" {
		t.Errorf("file directories after rewriting: %v", files)
	}
	secrets := doc["secrets"].(map[string]any)
	given := secrets["GIVEN"].(map[string]any)
	if given["file"] != "/tmp/given.txt" || given["env"] != nil || secrets["NOT_GIVEN"] != nil {
		t.Errorf("secrets after rewriting: %v", secrets)
	}
	if strings.Contains(string(out), "AUDITORS_GITHUB_TOKEN") || strings.Contains(string(out), ".aws") {
		t.Errorf("the rewritten manifest still names the recorded sources:\n%s", out)
	}
}
