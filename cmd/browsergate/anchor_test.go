package main

import (
	"crypto/rand"
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
