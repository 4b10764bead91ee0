// Package evidencetest recomputes the log-wide head of an evidence file as
// docs/evidence-format.md specifies it, independently of package evidence:
// tests use it to check the stored head against the specification, and to
// edit a log as someone who can write the file but does not hold the
// signing key would (recomputing what needs no key).
package evidencetest

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// Set is the set state of the specification: 1024 lanes of 16 bits.
type Set [1024]uint16

// Add adds the leaf of a head digest of kind "live" or "pruned".
func (s *Set) Add(kind, digest string) {
	out := sha3.SumSHAKE128([]byte("browsergate-evidence-set-v1\n"+kind+"\n"+digest), 2048)
	for i := range s {
		s[i] += binary.LittleEndian.Uint16(out[2*i:])
	}
}

// Bytes is the stored form (meta/log_set): each lane little-endian.
func (s *Set) Bytes() []byte {
	b := make([]byte, 0, 2048)
	for _, v := range s {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// LogHead is a log-wide head (meta/log_head) as the specification's JSON
// has it.
type LogHead struct {
	Key      string `json:"key,omitempty"`
	Last     *Last  `json:"last,omitempty"`
	Legacy   uint64 `json:"legacy"`
	N        uint64 `json:"n"`
	Prev     string `json:"prev"`
	Pruned   uint64 `json:"pruned"`
	Records  uint64 `json:"records"`
	Sessions uint64 `json:"sessions"`
	Set      string `json:"set"`
	Sig      string `json:"sig,omitempty"`
}

// Last is the append that made a log-wide head.
type Last struct {
	Hash    string `json:"hash"`
	Seq     uint64 `json:"seq"`
	Session string `json:"session"`
}

// Message is the signed message of the specification.
func (h *LogHead) Message() []byte {
	var last Last
	if h.Last != nil {
		last = *h.Last
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	return fmt.Appendf(nil, "browsergate-evidence-log-v1\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s",
		u(h.N), h.Prev, h.Set, u(h.Sessions), u(h.Pruned), u(h.Records), u(h.Legacy), u(last.Seq), last.Hash, last.Session)
}

// ReadLogHead reads meta/log_head.
func ReadLogHead(tx *bolt.Tx) (*LogHead, error) {
	raw := tx.Bucket([]byte("meta")).Get([]byte("log_head"))
	if raw == nil {
		return nil, errors.New("no meta/log_head")
	}
	var h LogHead
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("meta/log_head: %w", err)
	}
	return &h, nil
}

// SetOf computes the set state of the sessions' heads and the pruned
// sessions' tombstones in tx, and counts them (records: the sum of the
// heads' seq).
func SetOf(tx *bolt.Tx) (set *Set, sessions, pruned, records uint64, err error) {
	set = &Set{}
	err = tx.Bucket([]byte("heads")).ForEach(func(id, v []byte) error {
		var h struct {
			Hash string `json:"hash"`
			Seq  uint64 `json:"seq"`
		}
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("head of %s: %w", id, err)
		}
		set.Add("live", SHA256Hex(evidence.HeadMessage(string(id), h.Seq, h.Hash)))
		sessions++
		records += h.Seq
		return nil
	})
	if b := tx.Bucket([]byte("pruned")); b != nil && err == nil {
		err = b.ForEach(func(k, _ []byte) error {
			set.Add("pruned", string(k))
			pruned++
			return nil
		})
	}
	return set, sessions, pruned, records, err
}

// Relog rewrites the log-wide head to cover the sessions now in tx, as
// someone without the key would after removing or rewriting some: counts,
// set and last append recomputed, the old signature members kept (so that
// only a check with the key can tell).
func Relog(tx *bolt.Tx) error {
	h, err := ReadLogHead(tx)
	if err != nil {
		return err
	}
	set, sessions, pruned, records, err := SetOf(tx)
	if err != nil {
		return err
	}
	h.Sessions, h.Pruned, h.Records, h.Set = sessions, pruned, records, SHA256Hex(set.Bytes())
	if h.Last != nil {
		if raw := tx.Bucket([]byte("heads")).Get([]byte(h.Last.Session)); raw != nil {
			var sh Last
			if err := json.Unmarshal(raw, &sh); err != nil {
				return err
			}
			h.Last.Seq, h.Last.Hash = sh.Seq, sh.Hash
		} else {
			h.Last = nil
		}
	}
	return PutLogHead(tx, h, set.Bytes())
}

// PutLogHead stores h and the set state beside it.
func PutLogHead(tx *bolt.Tx, h *LogHead, state []byte) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return err
	}
	meta := tx.Bucket([]byte("meta"))
	if err := meta.Put([]byte("log_set"), state); err != nil {
		return err
	}
	return meta.Put([]byte("log_head"), bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// SHA256Hex is the lowercase hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
