package evidence_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// storedHead is the heads-bucket value as docs/evidence-format.md
// specifies it.
type storedHead struct {
	Hash string `json:"hash"`
	Key  string `json:"key"`
	Seq  uint64 `json:"seq"`
	Sig  string `json:"sig"`
}

func readHead(t *testing.T, tx *bolt.Tx, session string) storedHead {
	t.Helper()
	var h storedHead
	if err := json.Unmarshal(tx.Bucket([]byte("heads")).Get([]byte(session)), &h); err != nil {
		t.Fatalf("head of %s: %v", session, err)
	}
	return h
}

func putHead(tx *bolt.Tx, session string, h storedHead) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte("heads")).Put([]byte(session), raw)
}

func TestHeadMessage(t *testing.T) {
	t.Parallel()
	got := evidence.HeadMessage("s-7f3a", 12, "91f5d5fb841a24cc9702cc2813c1a73d073eed591cefeef1c537ab58e7075cf0")
	want := "browsergate-evidence-head-v1\ns-7f3a\n12\n91f5d5fb841a24cc9702cc2813c1a73d073eed591cefeef1c537ab58e7075cf0"
	if string(got) != want {
		t.Fatalf("HeadMessage = %q, want %q", got, want)
	}
	// Seq and hash hold no newline, so a message read from its end gives
	// back its head even when the session id holds newlines: no two heads
	// share a message.
	const h = "91f5d5fb841a24cc9702cc2813c1a73d073eed591cefeef1c537ab58e7075cf0"
	for _, session := range []string{"a\n1", "a\n1\n" + h, "\n", "s"} {
		msg := strings.TrimPrefix(string(evidence.HeadMessage(session, 7, h)), "browsergate-evidence-head-v1\n")
		i := strings.LastIndexByte(msg, '\n')
		j := strings.LastIndexByte(msg[:i], '\n')
		if msg[:j] != session || msg[j+1:i] != "7" || msg[i+1:] != h {
			t.Errorf("message of session %q parses back as %q %q %q", session, msg[:j], msg[j+1:i], msg[i+1:])
		}
	}
}

func TestSignedHeadsVerify(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	pub := key.Public().(ed25519.PublicKey)
	path := tamperFixture(t, key)

	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.VerifyWithKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Signed != 2 || rep.KeyID != evidence.KeyID(pub) {
		t.Fatalf("VerifyWithKey on an intact signed log: %+v", rep)
	}
	// Without the key the heads are counted, not checked, and pass.
	if rep, err := s.Verify(); err != nil || !rep.OK() || rep.Signed != 2 || rep.KeyID != "" {
		t.Errorf("Verify on a signed log: %+v, %v", rep, err)
	}
	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range sums {
		if sum.KeyID != evidence.KeyID(pub) {
			t.Errorf("session %s: KeyID %q, want %q", sum.ID, sum.KeyID, evidence.KeyID(pub))
		}
	}

	// The signature in the file is ed25519 over HeadMessage, checkable by
	// anyone with the public key and the spec.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		h := readHead(t, tx, "s1")
		sig, _ := hex.DecodeString(h.Sig)
		if h.Seq != 5 || !ed25519.Verify(pub, evidence.HeadMessage("s1", h.Seq, h.Hash), sig) {
			t.Errorf("stored head %+v: signature does not verify over HeadMessage", h)
		}
		return nil
	})

	// Another key, or no key at all, is a problem for every session.
	if rep, err := s.VerifyWithKey(testKey(2).Public().(ed25519.PublicKey)); err != nil ||
		!hasProblem(rep, wantProblem{"s1", 0, "not by the given key"}) || !hasProblem(rep, wantProblem{"s2", 0, "not by the given key"}) {
		t.Errorf("VerifyWithKey(other key) = %q, %v", problemsOf(rep), err)
	}
	unsigned := tamperFixture(t, nil)
	u, err := evidence.Open(unsigned, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if rep, err := u.VerifyWithKey(pub); err != nil ||
		!hasProblem(rep, wantProblem{"s1", 0, "is not signed"}) || !hasProblem(rep, wantProblem{"s2", 0, "is not signed"}) {
		t.Errorf("VerifyWithKey(unsigned log) = %q, %v", problemsOf(rep), err)
	}
	if _, err := u.VerifyWithKey(pub[:10]); !errors.Is(err, evidence.ErrBadKey) {
		t.Errorf("VerifyWithKey(short key): %v, want ErrBadKey", err)
	}
}

func problemsOf(rep *evidence.Report) []evidence.Problem {
	if rep == nil {
		return nil
	}
	return rep.Problems
}

// TestSignedHeadsDetectRewrittenTail: someone who can write the file but
// does not hold the key cuts off or extends a chain and rewrites the head
// to match. The chain is then self-consistent, so Verify passes (which
// shows the attack is well made); VerifyWithKey must name the session.
func TestSignedHeadsDetectRewrittenTail(t *testing.T) {
	t.Parallel()
	signer := testKey(1)
	pub := signer.Public().(ed25519.PublicKey)
	// appendForged adds n forged records to s1, properly chained.
	appendForged := func(t *testing.T, tx *bolt.Tx, n int) *evidence.Envelope {
		last := recordsOf(tx, "s1")[5]
		for range n {
			forged := envelope("s1", "https://evil.example.net/")
			forged.Version, forged.Seq, forged.PrevHash, forged.Time = 1, last.Seq+1, last.Hash, last.Time
			forged.OutputSHA256 = last.OutputSHA256
			h, err := evidence.Hash(forged)
			if err != nil {
				t.Fatal(err)
			}
			forged.Hash = h
			if err := chain(tx, "s1").Put(key(forged.Seq), storedForm(t, forged)); err != nil {
				t.Fatal(err)
			}
			last = forged
		}
		return last
	}
	tests := []struct {
		name string
		edit func(t *testing.T, tx *bolt.Tx) error
		want wantProblem
	}{
		{
			name: "tail cut, head rewritten, old signature kept",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				recs, h := recordsOf(tx, "s1"), readHead(t, tx, "s1")
				for seq := uint64(4); seq <= 5; seq++ {
					if err := chain(tx, "s1").Delete(key(seq)); err != nil {
						return err
					}
				}
				h.Seq, h.Hash = 3, recs[3].Hash
				return putHead(tx, "s1", h)
			},
			want: wantProblem{"s1", 0, "head signature does not verify for seq 3"},
		},
		{
			name: "tail cut, head rewritten unsigned",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				recs := recordsOf(tx, "s1")
				if err := chain(tx, "s1").Delete(key(5)); err != nil {
					return err
				}
				return putHead(tx, "s1", storedHead{Seq: 4, Hash: recs[4].Hash})
			},
			want: wantProblem{"s1", 0, "head (seq 4) is not signed"},
		},
		{
			name: "records appended, head updated, old signature kept",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				last := appendForged(t, tx, 2)
				h := readHead(t, tx, "s1")
				h.Seq, h.Hash = last.Seq, last.Hash
				return putHead(tx, "s1", h)
			},
			want: wantProblem{"s1", 6, "records 6..7 were added after the last signed head (seq 5)"},
		},
		{
			name: "records appended, head updated, signed with another key",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				last := appendForged(t, tx, 1)
				other := testKey(9)
				sig := ed25519.Sign(other, evidence.HeadMessage("s1", last.Seq, last.Hash))
				return putHead(tx, "s1", storedHead{Seq: last.Seq, Hash: last.Hash,
					Key: evidence.KeyID(other.Public().(ed25519.PublicKey)), Sig: hex.EncodeToString(sig)})
			},
			want: wantProblem{"s1", 0, "not by the given key"},
		},
		{
			name: "records appended, head updated, signed with another key under our key id",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				last := appendForged(t, tx, 1)
				sig := ed25519.Sign(testKey(9), evidence.HeadMessage("s1", last.Seq, last.Hash))
				return putHead(tx, "s1", storedHead{Seq: last.Seq, Hash: last.Hash,
					Key: evidence.KeyID(pub), Sig: hex.EncodeToString(sig)})
			},
			want: wantProblem{"s1", 0, "head signature does not verify for seq 6"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tamperFixture(t, signer)
			tamper(t, path, func(tx *bolt.Tx) error {
				if err := tt.edit(t, tx); err != nil {
					return err
				}
				relog(t, tx) // as the editor would: only the key can tell
				return nil
			})
			s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if rep, err := s.Verify(); err != nil || !rep.OK() {
				t.Fatalf("the edit is not self-consistent (Verify: %q, %v): the test proves nothing", problemsOf(rep), err)
			}
			rep, err := s.VerifyWithKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			if !hasProblem(rep, tt.want) {
				t.Errorf("VerifyWithKey: no problem session %s record %d: …%s…; got %q", tt.want.session, tt.want.seq, tt.want.reason, rep.Problems)
			}
			for _, p := range rep.Problems {
				if p.Session != "s1" && !strings.HasPrefix(p.Reason, "log-wide head #7: its signature does not verify") {
					t.Errorf("problem outside the edited session and the rewritten log-wide head: %s", p)
				}
			}
		})
	}
}

func TestOpenRefusesBadSigningKey(t *testing.T) {
	t.Parallel()
	_, err := evidence.Open(filepath.Join(t.TempDir(), "e.db"), &evidence.Options{SigningKey: ed25519.PrivateKey("short")})
	if !errors.Is(err, evidence.ErrBadKey) {
		t.Fatalf("Open with a short key: %v, want ErrBadKey", err)
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	t.Parallel()
	privPEM, pubPEM, err := evidence.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := evidence.ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := evidence.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(priv.Public()) {
		t.Fatal("the public key is not the private key's")
	}
	if b, _ := pem.Decode(privPEM); b == nil || b.Type != "PRIVATE KEY" {
		t.Errorf("private key PEM: %q", privPEM)
	}
	if b, _ := pem.Decode(pubPEM); b == nil || b.Type != "PUBLIC KEY" {
		t.Errorf("public key PEM: %q", pubPEM)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	ecPubDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	bad := []struct {
		name  string
		parse func([]byte) error
		data  []byte
	}{
		{"public key given as private", func(b []byte) error { _, err := evidence.ParsePrivateKey(b); return err }, pubPEM},
		{"private key given as public", func(b []byte) error { _, err := evidence.ParsePublicKey(b); return err }, privPEM},
		{"not PEM", func(b []byte) error { _, err := evidence.ParsePrivateKey(b); return err }, []byte("hello")},
		{"ECDSA private key", func(b []byte) error { _, err := evidence.ParsePrivateKey(b); return err },
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})},
		{"ECDSA public key", func(b []byte) error { _, err := evidence.ParsePublicKey(b); return err },
			pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecPubDER})},
	}
	for _, tt := range bad {
		if err := tt.parse(tt.data); !errors.Is(err, evidence.ErrBadKey) {
			t.Errorf("%s: %v, want ErrBadKey", tt.name, err)
		}
	}
}

// TestOpenSSLInterop checks the claims of docs/evidence-format.md: keys
// made by openssl sign heads that openssl verifies, and the key id is the
// SHA-256 of the DER public key openssl writes.
func TestOpenSSLInterop(t *testing.T) {
	t.Parallel()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(openssl, args...).Output()
		if err != nil {
			t.Fatalf("openssl %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	keyPath, pubPath := filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub")
	run("genpkey", "-algorithm", "ed25519", "-out", keyPath)
	run("pkey", "-in", keyPath, "-pubout", "-out", pubPath)
	privPEM, _ := os.ReadFile(keyPath)
	pubPEM, _ := os.ReadFile(pubPath)
	priv, err := evidence.ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := evidence.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	der := run("pkey", "-pubin", "-in", pubPath, "-outform", "DER")
	if id := evidence.KeyID(pub); id != sha256hex(der) {
		t.Errorf("KeyID = %s, SHA-256 of openssl's DER = %s", id, sha256hex(der))
	}

	s, path := openStore(t, &evidence.Options{SigningKey: priv})
	e := envelope("s1", "https://a.example.com/")
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var h storedHead
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error { h = readHead(t, tx, "s1"); return nil })
	db.Close()
	sig, _ := hex.DecodeString(h.Sig)
	msgPath, sigPath := filepath.Join(dir, "msg"), filepath.Join(dir, "sig")
	if err := os.WriteFile(msgPath, evidence.HeadMessage("s1", h.Seq, h.Hash), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigPath, sig, 0o600); err != nil {
		t.Fatal(err)
	}
	out := run("pkeyutl", "-verify", "-pubin", "-inkey", pubPath, "-rawin", "-in", msgPath, "-sigfile", sigPath)
	if !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Errorf("openssl did not verify the head signature: %s", out)
	}
}

// TestDocumentedHeadSignatureIsTrue keeps the signed head example of
// docs/evidence-format.md honest: its signature verifies with its public
// key over HeadMessage, and its key id is that key's.
func TestDocumentedHeadSignatureIsTrue(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/evidence-format.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "### Signed head example")
	if i < 0 {
		t.Fatal("docs/evidence-format.md has no signed head example")
	}
	text = text[i:]
	session := regexp.MustCompile("The head of session `([^`]+)`").FindStringSubmatch(text)
	pubPEM := regexp.MustCompile(`(?s)-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----`).FindString(text)
	headJSON := regexp.MustCompile(`(?m)^\{"hash":.*"sig":.*\}$`).FindString(text)
	if session == nil || pubPEM == "" || headJSON == "" {
		t.Fatalf("example incomplete: session %v, key %q, head %q", session, pubPEM, headJSON)
	}
	pub, err := evidence.ParsePublicKey([]byte(pubPEM))
	if err != nil {
		t.Fatal(err)
	}
	var h storedHead
	if err := json.Unmarshal([]byte(headJSON), &h); err != nil {
		t.Fatal(err)
	}
	sig, _ := hex.DecodeString(h.Sig)
	if !ed25519.Verify(pub, evidence.HeadMessage(session[1], h.Seq, h.Hash), sig) {
		t.Error("the documented signature does not verify")
	}
	if h.Key != evidence.KeyID(pub) {
		t.Errorf("documented key id %s, the key's is %s", h.Key, evidence.KeyID(pub))
	}
	if !strings.Contains(text, evidence.KeyID(pub)+"  -") {
		t.Error("the documented sha256sum output is not the key id")
	}
}
