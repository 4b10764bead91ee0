package toolclad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOperators(t *testing.T) {
	ops, err := ParseOperators("ops", []byte("# who may watch\nolga:olga-token-0123456789abc\n\n  a-bare-token-0123456789abc  \n"))
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]string{
		"olga-token-0123456789abc": "olga", "a-bare-token-0123456789abc": "operator", "olga": "", "": "", "olga:olga-token-0123456789abc": "",
	} {
		if got := ops.Lookup(token); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", token, got, want)
		}
	}
	for doc, want := range map[string]string{
		"":                                  "no operator token",
		"olga:short":                        "ops:1: olga's token: want 24 or more",
		"bad name:0123456789abcdef01234567": `ops:1: operator name "bad name"`,
		"a:q7Rk2mWx9LpT4vHc8NzB3jYf\nb:q7Rk2mWx9LpT4vHc8NzB3jYf":       "ops:2: the same token as line 1",
		"olga:aaaaaaaaaaaaaaaaaaaaaaaaaaaa":                            "ops:1: olga's token is too easy to guess: about 5 bits",
		"olga:olga-token-0123456789abc\npat:0123456789012345678901234": "ops:2: pat's token is too easy to guess",
	} {
		if _, err := ParseOperators("ops", []byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "ops")
	if err := os.WriteFile(p, []byte("olga:olga-token-0123456789abc\n"), 0o644); err != nil {
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
