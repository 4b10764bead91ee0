package main

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// TestTheAnchorersVerifierIsItsKeys: the verifier key derived from a log's
// signing key is the one keygen wrote beside it.
func TestTheAnchorersVerifierIsItsKeys(t *testing.T) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/fleet-log")
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifierKeyOf(skey)
	if err != nil || got != vkey {
		t.Fatalf("verifier key of the signing key: %q (%v), want %q", got, err, vkey)
	}
	if _, err := verifierKeyOf(vkey); err == nil {
		t.Fatal("a verifier key taken for a signing key")
	}
}

// TestServeRefusesAVerifierKeyThatIsNotItsKeys: an anchor file whose
// verifier_key_file is another key's than key_file is refused before the
// log is opened: the anchorer would restore from, and check published
// checkpoints with, a key that is not the log's.
func TestServeRefusesAVerifierKeyThatIsNotItsKeys(t *testing.T) {
	dir := t.TempDir()
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/fleet-log")
	if err != nil {
		t.Fatal(err)
	}
	_, otherVkey, err := note.GenerateKey(rand.Reader, "example.com/fleet-log")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body+"\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("log.key", skey, 0o600)
	write("log.vkey", vkey, 0o644)
	write("other.vkey", otherVkey, 0o644)
	for vfile, want := range map[string]string{"other.vkey": "is not the verifier key of key_file", "log.vkey": ""} {
		write("anchor.toml", `dir = "log"`+"\nkey_file = \"log.key\"\nverifier_key_file = \""+vfile+`"`, 0o600)
		a, err := openAnchorer(context.Background(), filepath.Join(dir, "anchor.toml"), nil, slog.New(slog.DiscardHandler))
		if a != nil {
			a.Log.Close(context.Background())
		}
		switch {
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("verifier_key_file %s: %v, want an error saying %q", vfile, err, want)
		case want == "" && err != nil:
			t.Errorf("verifier_key_file %s, the key's own: %v", vfile, err)
		}
	}
}
