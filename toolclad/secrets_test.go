package toolclad_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestSecretsLoad: a secret comes from the environment or from a file
// beside the manifest, and printing the manifest never shows its value.
func TestSecretsLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token.txt"), []byte("file-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSERGATE_TEST_APP_PASSWORD", "env-secret-value")
	path := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(path, []byte(`
[tool]
name = "s"
[browser.scope]
allowed_domains = ["*.example.com"]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_TEST_APP_PASSWORD"
domains = ["login.example.com"]
[secrets.API_TOKEN]
file = "token.txt"
domains = ["*.example.com", "api.example.net"]
[browser.commands.type_text]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := toolclad.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*toolclad.Secret{}
	for _, s := range m.Secrets {
		got[s.Name] = s
	}
	if s := got["APP_PASSWORD"]; s == nil || s.Value() != "env-secret-value" || s.Placeholder() != "<APP_PASSWORD>" || strings.Join(s.Domains, ",") != "login.example.com" {
		t.Errorf("APP_PASSWORD = %v", s)
	}
	if s := got["API_TOKEN"]; s == nil || s.Value() != "file-secret-value" || len(s.Domains) != 2 {
		t.Errorf("API_TOKEN = %v", s)
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, m)
		if strings.Contains(out, "secret-value") {
			t.Errorf("fmt %s of the manifest shows a secret value: %s", format, out)
		}
	}
}
