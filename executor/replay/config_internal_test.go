package replay

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestSafeManifest: a recorded manifest cannot make a replay start a
// program of its choosing, attach to a live browser, or read a secret
// from where it says: only the auditor's mappings (Options.Secrets) count.
func TestSafeManifest(t *testing.T) {
	recorded := `
[tool]
name = "x"
[browser]
connect = "live"
live_endpoint = "http://127.0.0.1:9222"
executable_path = "/bin/sh"
headless = false
[secrets.GIVEN]
env = "AUDITORS_GITHUB_TOKEN"
domains = ["a.example"]
[secrets.NOT_GIVEN]
file = "/home/auditor/.aws/credentials"
domains = ["evil.example"]
`
	out, err := safeManifest(recorded, map[string]string{"GIVEN": "file:/tmp/given.txt"})
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
	secrets := doc["secrets"].(map[string]any)
	given := secrets["GIVEN"].(map[string]any)
	if given["file"] != "/tmp/given.txt" || given["env"] != nil || secrets["NOT_GIVEN"] != nil {
		t.Errorf("secrets after rewriting: %v", secrets)
	}
	if strings.Contains(string(out), "AUDITORS_GITHUB_TOKEN") || strings.Contains(string(out), ".aws") {
		t.Errorf("the rewritten manifest still names the recorded sources:\n%s", out)
	}
}
