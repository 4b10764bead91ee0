package main

import (
	"bytes"
	be "encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence/evidencetest"
)

// keygen runs `evidence keygen` and returns the key and public key paths.
func keygen(t *testing.T, prefix string) (string, string) {
	t.Helper()
	out, code := runBinary(t, "evidence", "keygen", "--out", prefix)
	if code != 0 {
		t.Fatalf("keygen: exit %d\n%s", code, out)
	}
	return prefix + ".key", prefix + ".pub"
}

func TestKeygenWritesPrivateAndPublicPEM(t *testing.T) {
	t.Parallel()
	prefix := filepath.Join(t.TempDir(), "audit")
	out, code := runBinary(t, "evidence", "keygen", "--out", prefix)
	if code != 0 || !strings.Contains(out, "key id ") {
		t.Fatalf("keygen: exit %d\n%s", code, out)
	}
	for _, f := range []struct {
		path, pemType string
		mode          os.FileMode
	}{
		{prefix + ".key", "PRIVATE KEY", 0o600},
		{prefix + ".pub", "PUBLIC KEY", 0o644},
	} {
		info, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		// The umask can only take permissions away; the key must never
		// have more than 0600.
		if info.Mode().Perm()&^f.mode != 0 || (f.mode == 0o600 && info.Mode().Perm() != 0o600) {
			t.Errorf("%s: mode %v, want %v", f.path, info.Mode().Perm(), f.mode)
		}
		data, _ := os.ReadFile(f.path)
		if b, _ := pem.Decode(data); b == nil || b.Type != f.pemType {
			t.Errorf("%s is not a %q PEM block:\n%s", f.path, f.pemType, data)
		}
	}
	// A second keygen to the same prefix must not replace the key.
	before, _ := os.ReadFile(prefix + ".key")
	if out, code := runBinary(t, "evidence", "keygen", "--out", prefix); code == 0 {
		t.Errorf("keygen over an existing key succeeded:\n%s", out)
	}
	if after, _ := os.ReadFile(prefix + ".key"); !bytes.Equal(before, after) {
		t.Error("keygen replaced an existing private key")
	}
	if out, code := runBinary(t, "evidence", "keygen"); code != 2 || !strings.Contains(out, "run `browsergate help evidence keygen` for its flags") {
		t.Errorf("keygen without --out: exit %d, want 2\n%s", code, out)
	}
}

// rewriteHead edits the evidence file as someone without the key would:
// it runs edit on the first session's records and stores the head it
// returns (keeping the old signature members), and recomputes the
// log-wide head to match (keeping its old signature too).
func rewriteHead(t *testing.T, path string, edit func(b *bolt.Bucket, head map[string]any) (uint64, string)) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var session string
	err = db.Update(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket([]byte("sessions")).Cursor().First()
		if k == nil {
			return fmt.Errorf("no session")
		}
		session = string(k)
		heads := tx.Bucket([]byte("heads"))
		head := map[string]any{}
		if err := json.Unmarshal(heads.Get(k), &head); err != nil {
			return err
		}
		head["seq"], head["hash"] = edit(tx.Bucket([]byte("sessions")).Bucket(k), head)
		raw, err := json.Marshal(head)
		if err != nil {
			return err
		}
		if err := heads.Put(k, raw); err != nil {
			return err
		}
		return evidencetest.Relog(tx) // what needs no key
	})
	if err != nil {
		t.Fatal(err)
	}
	return session
}

// TestSignedHeadsEndToEnd: serve --signing-key signs every head; verify
// --pubkey checks them, refuses another key, and catches a tail cut off
// with the head rewritten to match, which verify without the key cannot
// see; serve without the key refuses to start on the signed log (its
// records would be unsigned, or, refused, missing).
func TestSignedHeadsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, filepath.Join(dir, "signer"))
	_, otherPub := keygen(t, filepath.Join(dir, "other"))
	f := recordedLog(t, fmt.Sprintf(e2eManifest, "launch", ""), "--signing-key", keyPath)

	out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence, "--pubkey", pubPath)
	if code != 0 || !strings.Contains(out, "head signature(s) verified with key") {
		t.Fatalf("verify --pubkey on a signed log: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if code != 0 || !strings.Contains(out, "pass --pubkey") {
		t.Errorf("verify without a key on a signed log: exit %d, want 0 and a note on the signatures\n%s", code, out)
	}
	manifest := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(manifest, []byte(fmt.Sprintf(e2eManifest, "launch", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runBinary(t, "serve", "--manifest", manifest, "--policies", repoPath("policies"), "--evidence", f.evidence)
	if code != 1 || !strings.Contains(out, "is a signed evidence log: start serve with its --signing-key") {
		t.Errorf("serve on a signed log without its key: exit %d, want 1 asking for the key\n%s", code, out)
	}
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence, "--pubkey", otherPub)
	if code != 1 || !strings.Contains(out, "not by the given key") {
		t.Errorf("verify with another key: exit %d, want 1\n%s", code, out)
	}
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence, "--pubkey", keyPath)
	if code != 1 || !strings.Contains(out, "PUBLIC KEY") {
		t.Errorf("verify with the private key file as --pubkey: exit %d, want 1 naming the PEM type\n%s", code, out)
	}

	// Cut off the last two records and point the head at the new last one:
	// a self-consistent chain, so only the signature can tell.
	session := rewriteHead(t, f.evidence, func(b *bolt.Bucket, _ map[string]any) (uint64, string) {
		k, _ := b.Cursor().Last()
		last := be.BigEndian.Uint64(k)
		b.Delete(k)
		b.Delete(be.BigEndian.AppendUint64(nil, last-1))
		var rec struct{ Hash string }
		json.Unmarshal(b.Get(be.BigEndian.AppendUint64(nil, last-2)), &rec)
		return last - 2, rec.Hash
	})
	if out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence); code != 0 {
		t.Fatalf("the truncation is not self-consistent (verify without key fails), so the test proves nothing:\n%s", out)
	}
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence, "--pubkey", pubPath)
	if code != 1 || !strings.Contains(out, "session "+session+": head signature does not verify") {
		t.Errorf("verify --pubkey after the tail was cut: exit %d, want 1 naming session %s\n%s", code, session, out)
	}
}

func TestServeRefusesABadSigningKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, pubPath := keygen(t, filepath.Join(dir, "k"))
	manifest := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(manifest, []byte(fmt.Sprintf(e2eManifest, "launch", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{pubPath, filepath.Join(dir, "absent.key")} {
		out, code := runBinary(t, "serve", "--manifest", manifest, "--policies", repoPath("policies"),
			"--evidence", filepath.Join(dir, "e.db"), "--signing-key", key)
		if code != 1 || !strings.Contains(out, "signing key") {
			t.Errorf("serve --signing-key %s: exit %d, want 1 naming the signing key\n%s", key, code, out)
		}
	}
}
