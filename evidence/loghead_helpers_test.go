package evidence_test

import (
	"bytes"
	"crypto/sha3"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// This file recomputes the log-wide head as docs/evidence-format.md
// specifies it, independently of the package: the tests use it to check
// the stored head against the specification, and to edit a log as someone
// who can write the file but does not hold the key would.

// logSet is the set state of the specification: 1024 lanes of 16 bits.
type logSet [1024]uint16

func (s *logSet) add(kind, digest string) {
	out := sha3.SumSHAKE128([]byte("browsergate-evidence-set-v1\n"+kind+"\n"+digest), 2048)
	for i := range s {
		s[i] += binary.LittleEndian.Uint16(out[2*i:])
	}
}

func (s *logSet) bytes() []byte {
	b := make([]byte, 0, 2048)
	for _, v := range s {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// specLog is a log-wide head as the specification's JSON has it.
type specLog struct {
	Key  string `json:"key,omitempty"`
	Last *struct {
		Hash    string `json:"hash"`
		Seq     uint64 `json:"seq"`
		Session string `json:"session"`
	} `json:"last,omitempty"`
	Legacy   uint64 `json:"legacy"`
	N        uint64 `json:"n"`
	Prev     string `json:"prev"`
	Pruned   uint64 `json:"pruned"`
	Records  uint64 `json:"records"`
	Sessions uint64 `json:"sessions"`
	Set      string `json:"set"`
	Sig      string `json:"sig,omitempty"`
}

// message is the signed message of the specification.
func (h *specLog) message() []byte {
	var seq uint64
	var hash, session string
	if h.Last != nil {
		seq, hash, session = h.Last.Seq, h.Last.Hash, h.Last.Session
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return fmt.Appendf(nil, "browsergate-evidence-log-v1\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s",
		u(h.N), h.Prev, h.Set, u(h.Sessions), u(h.Pruned), u(h.Records), u(h.Legacy), u(seq), hash, session)
}

func readLog(t *testing.T, tx *bolt.Tx) *specLog {
	t.Helper()
	raw := tx.Bucket([]byte("meta")).Get([]byte("log_head"))
	if raw == nil {
		t.Fatal("no meta/log_head")
	}
	var h specLog
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("meta/log_head: %v", err)
	}
	return &h
}

// setOf computes the set state of the sessions' heads and the pruned
// sessions' tombstones in tx, and counts them.
func setOf(t *testing.T, tx *bolt.Tx) (set *logSet, sessions, pruned, records uint64) {
	t.Helper()
	set = &logSet{}
	_ = tx.Bucket([]byte("heads")).ForEach(func(id, v []byte) error {
		var h storedHead
		if err := json.Unmarshal(v, &h); err != nil {
			t.Fatalf("head of %s: %v", id, err)
		}
		set.add("live", sha256hex(evidence.HeadMessage(string(id), h.Seq, h.Hash)))
		sessions++
		records += h.Seq
		return nil
	})
	if b := tx.Bucket([]byte("pruned")); b != nil {
		_ = b.ForEach(func(k, _ []byte) error {
			set.add("pruned", string(k))
			pruned++
			return nil
		})
	}
	return set, sessions, pruned, records
}

// relog rewrites the log-wide head to cover the sessions now in tx, as
// someone without the key would after removing or rewriting some: counts,
// set and last append recomputed, the old signature members kept (so
// that only a check with the key can tell).
func relog(t *testing.T, tx *bolt.Tx) {
	t.Helper()
	h := readLog(t, tx)
	set, sessions, pruned, records := setOf(t, tx)
	h.Sessions, h.Pruned, h.Records, h.Set = sessions, pruned, records, sha256hex(set.bytes())
	if h.Last != nil {
		if raw := tx.Bucket([]byte("heads")).Get([]byte(h.Last.Session)); raw != nil {
			var sh storedHead
			_ = json.Unmarshal(raw, &sh)
			h.Last.Seq, h.Last.Hash = sh.Seq, sh.Hash
		} else {
			h.Last = nil
		}
	}
	putLog(t, tx, h, set.bytes())
}

func putLog(t *testing.T, tx *bolt.Tx, h *specLog, state []byte) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		t.Fatal(err)
	}
	meta := tx.Bucket([]byte("meta"))
	if err := meta.Put([]byte("log_set"), state); err != nil {
		t.Fatal(err)
	}
	if err := meta.Put([]byte("log_head"), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the closed evidence file at path to a new temporary
// file, so that each edit of a test starts from the same log.
func copyFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
