package evidence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// workedExample is the envelope of docs/evidence-format.md's worked
// example: a navigate call the scope refused, as Append stores it (seq 2,
// so it carries the hash of record 1).
func workedExample() *evidence.Envelope {
	return &evidence.Envelope{
		Version:   evidence.FormatVersion,
		Session:   "s-7f3a",
		Seq:       2,
		Time:      time.Date(2026, 11, 22, 10, 0, 1, 123456789, time.UTC),
		Principal: "alice",
		Tool:      "chrome_live",
		Command:   "navigate",
		Args:      map[string]any{"url": "http://127.0.0.2/admin?a=1&b=<2>"},
		Decision: evidence.Decision{
			Allowed: false,
			Stage:   "scope",
			Rule:    "allowed_domains",
			Scope:   "deny: host 127.0.0.2 not in allowed_domains",
			Reasons: []string{"host 127.0.0.2 not in allowed_domains"},
		},
		Before:           map[string]any{"title": "Café – Home", "url": "https://docs.example.com/", "tab_count": 1},
		Output:           "",
		OutputSHA256:     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		InteractionCount: 2,
		DurationMicros:   87,
		PrevHash:         "5d1f4b0b5a3fd4f0e9b9f3c1a8c2e6d7b4a3f2e1d0c9b8a7f6e5d4c3b2a19080",
	}
}

// CanonicalJSON gives the exact bytes that are hashed: sorted keys, no
// whitespace, no HTML escaping, nine fractional digits of UTC time, and no
// "hash" member.
func ExampleCanonicalJSON() {
	e := workedExample()
	b, err := evidence.CanonicalJSON(e)
	if err != nil {
		panic(err)
	}
	h, _ := evidence.Hash(e)
	fmt.Printf("%s\n%s\n", b, h)
	// Output:
	// {"args":{"url":"http://127.0.0.2/admin?a=1&b=<2>"},"command":"navigate","decision":{"allowed":false,"reasons":["host 127.0.0.2 not in allowed_domains"],"rule":"allowed_domains","scope":"deny: host 127.0.0.2 not in allowed_domains","stage":"scope"},"duration_us":87,"interaction_count":2,"output":"","output_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","prev_hash":"5d1f4b0b5a3fd4f0e9b9f3c1a8c2e6d7b4a3f2e1d0c9b8a7f6e5d4c3b2a19080","principal":"alice","seq":2,"session":"s-7f3a","state_before":{"tab_count":1,"title":"Café – Home","url":"https://docs.example.com/"},"time":"2026-11-22T10:00:01.123456789Z","tool":"chrome_live","v":1}
	// 91f5d5fb841a24cc9702cc2813c1a73d073eed591cefeef1c537ab58e7075cf0
}

// A daemon opens the log once, appends one envelope per tool call, and an
// auditor verifies it later.
func ExampleStore_Verify() {
	dir, _ := os.MkdirTemp("", "evidence")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "evidence.db")

	s, err := evidence.Open(path, nil)
	if err != nil {
		panic(err)
	}
	e := &evidence.Envelope{
		Session: "s-1", Principal: "alice", Tool: "chrome_live", Command: "navigate",
		Args:     map[string]any{"url": "https://docs.example.com/"},
		Decision: evidence.Decision{Allowed: true, Stage: "act", Cedar: "allow"},
	}
	if err := s.Append(e, nil); err != nil { // durable when it returns
		panic(err)
	}
	s.Close()

	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer ro.Close()
	rep, err := ro.Verify()
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.OK(), rep.Sessions, rep.Records)
	// Output: true 1 1
}

// With a signing key the daemon signs every session's head; an auditor
// who holds only the public key checks the signatures too.
func ExampleStore_VerifyWithKey() {
	dir, _ := os.MkdirTemp("", "evidence")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "evidence.db")

	privPEM, pubPEM, err := evidence.GenerateKey(nil) // evidence keygen writes these two
	if err != nil {
		panic(err)
	}
	key, _ := evidence.ParsePrivateKey(privPEM)
	s, err := evidence.Open(path, &evidence.Options{SigningKey: key})
	if err != nil {
		panic(err)
	}
	e := &evidence.Envelope{Session: "s-1", Principal: "alice", Tool: "chrome_live", Command: "snapshot",
		Decision: evidence.Decision{Allowed: true, Stage: "gate", Cedar: "allow"}}
	if err := s.Append(e, nil); err != nil {
		panic(err)
	}
	s.Close()

	pub, _ := evidence.ParsePublicKey(pubPEM)
	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer ro.Close()
	rep, err := ro.VerifyWithKey(pub)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.OK(), rep.Signed, rep.KeyID == evidence.KeyID(pub))
	// Output: true 1 true
}
