package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --secret whose variable is not set, or whose file cannot be read, is
// refused naming the flag, not a position in the recorded manifest.
func TestSecretSourcesNameTheFlagWhoseSourceIsMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-file")
	for source, want := range map[string]string{
		"env:BROWSERGATE_TEST_UNSET_VARIABLE": "--secret APP_PASSWORD=env:BROWSERGATE_TEST_UNSET_VARIABLE: the environment variable BROWSERGATE_TEST_UNSET_VARIABLE is not set",
		"file:" + missing:                     "--secret APP_PASSWORD=file:" + missing + ": the file cannot be read: ",
	} {
		err := checkSecretSources(map[string]string{"APP_PASSWORD": source})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", source, err, want)
		}
	}
}

// A --secret whose variable is set, or whose file is there, passes.
func TestSecretSourcesThatArePresentPass(t *testing.T) {
	t.Setenv("BROWSERGATE_TEST_SET_VARIABLE", "x")
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkSecretSources(map[string]string{"A": "env:BROWSERGATE_TEST_SET_VARIABLE", "B": "file:" + file}); err != nil {
		t.Error(err)
	}
}
