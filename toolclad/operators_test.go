package toolclad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOperators(t *testing.T) {
	ops, err := ParseOperators("ops", []byte("# who may watch\nolga:33cca207e6ea6d20b8bfcf373524cb08\n\n  cb7600319c46155280f0b84575186ec3  \n"))
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]string{
		"33cca207e6ea6d20b8bfcf373524cb08": "olga", "cb7600319c46155280f0b84575186ec3": "operator", "olga": "", "": "", "olga:33cca207e6ea6d20b8bfcf373524cb08": "",
	} {
		if got := ops.Lookup(token); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", token, got, want)
		}
	}
	for doc, want := range map[string]string{
		"":                                  "no operator token",
		"olga:short":                        "ops:1: olga's token: want 32 or more characters without spaces; make one at random: openssl rand -hex 16",
		"bad name:0123456789abcdef01234567": `ops:1: operator name "bad name"`,
		"a:3a881e82c0c13c00ca2131d2c825b96b\nb:3a881e82c0c13c00ca2131d2c825b96b":          "ops:2: the same token as line 1",
		"olga:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":                                           "ops:1: olga's token is too easy to guess: about 9 bits as zxcvbn estimates it (it holds a repeated piece), want 80 or more; make one at random",
		"olga:33cca207e6ea6d20b8bfcf373524cb08\npat:olga-operator-token-0123456789abcdef": "ops:2: pat's token is too easy to guess",
	} {
		if _, err := ParseOperators("ops", []byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "ops")
	if err := os.WriteFile(p, []byte("olga:33cca207e6ea6d20b8bfcf373524cb08\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOperators(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token file others can read: %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := LoadOperators(p); err != nil {
		t.Errorf("mode 600: %v", err)
	}
}
