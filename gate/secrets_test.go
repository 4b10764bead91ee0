package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestSecretDomains: a secret goes only into a named element whose page is
// on one of its domains, matched on the canonical host.
func TestSecretDomains(t *testing.T) {
	ss, err := NewSecrets(testkit.SecretManifest(t, "hunter2hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url   string
		named bool
		ok    bool
	}{
		{"https://login.example.com/form", true, true},
		{"https://LOGIN.Example.COM./form", true, true},
		{"https://a.auth.example.com/", true, true},
		{"https://auth.example.com/", true, false},
		{"https://login.example.com.evil.test/", true, false},
		{"https://evil.test/?login.example.com", true, false},
		{"about:blank", true, false},
		{"https://login.example.com/form", false, false},
	} {
		err := ss.check("pw: <PW>", tc.url, tc.named)
		if (err == nil) != tc.ok {
			t.Errorf("check on %s (named %v) = %v, want ok=%v", tc.url, tc.named, err, tc.ok)
		}
	}
	if err := ss.check("no placeholder here", "https://evil.test/", false); err != nil {
		t.Errorf("text without a placeholder: %v", err)
	}
	if got := ss.Fill("a <PW> b <PW>"); got != "a hunter2hunter2 b hunter2hunter2" {
		t.Errorf("fill = %q", got)
	}
}

// TestSecretHeldInFile: a file holds a secret's value anywhere, across
// the scanner's chunks too (at the 1 MiB boundary); a file with only a
// part of it does not.
func TestSecretHeldInFile(t *testing.T) {
	const value = `k& 9<Q!x&a 7>z`
	ss, err := NewSecrets(testkit.SecretManifest(t, value))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"plain", "password=" + value + "\n", true},
		{"across chunks", strings.Repeat("a", 1<<20-5) + value + "tail", true},
		{"at the end", strings.Repeat("b", 3<<20) + value, true},
		{"a part", "password=" + value[:len(value)-1], false},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ss.HeldIn(p)
		if err != nil || (len(got) == 1) != tc.want {
			t.Errorf("%s: HeldIn = %v, %v; want held %v", tc.name, got, err, tc.want)
		}
	}
}
