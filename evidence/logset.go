package evidence

import (
	"crypto/sha3"
	"encoding/binary"
)

// The log-wide head commits to the set of every session's head through a
// homomorphic set hash, so that an append updates it in constant time
// (take the session's old head out, put its new one in) however many
// sessions the log holds. It is LtHash (Bellare and Micciancio, "A New
// Paradigm for Collision-free Hashing", 1997) with the parameters of Lewi
// et al., "Securing Update Propagation with Homomorphic Hashing" (2019):
// 1024 lanes of 16 bits, added lane by lane modulo 2^16, each element
// expanded to 2048 bytes with SHAKE128. A sum of 256-bit hashes (or their
// XOR) would be as cheap, but lets whoever can choose enough elements hit
// any sum (Wagner's generalized birthday; Gaussian elimination for XOR);
// finding LtHash collisions is as hard as a lattice problem (SIS).
const (
	setLanes = 1024
	setBytes = 2 * setLanes
	// setLeafPrefix separates the domain of a set element and versions it.
	setLeafPrefix = "browsergate-evidence-set-v1\n"
	leafLive      = "live"
	leafPruned    = "pruned"
)

// setState is the sum of the leaves of every session's head, lane by lane.
type setState [setLanes]uint16

// setLeaf returns the element of a head in the set: kind is leafLive for a
// session in the log, leafPruned for one removed by Prune; digest is
// headDigest of the head.
func setLeaf(kind, digest string) *setState {
	in := make([]byte, 0, len(setLeafPrefix)+len(kind)+1+len(digest))
	in = append(append(append(append(in, setLeafPrefix...), kind...), '\n'), digest...)
	out := sha3.SumSHAKE128(in, setBytes)
	var l setState
	for i := range l {
		l[i] = binary.LittleEndian.Uint16(out[2*i:])
	}
	return &l
}

// headDigest is the lowercase hex SHA-256 of a head's message: what the
// set hashes for a session, and the key a pruned session is recorded
// under (it names no session id).
func headDigest(session string, seq uint64, hash string) string {
	return sha256Hex(HeadMessage(session, seq, hash))
}

// HeadDigest is the digest a session's head is known by in the log-wide
// head's set, and the key of its tombstone once pruned: what an auditor
// matches the last anchored record of a session gone from a store
// against.
func HeadDigest(session string, seq uint64, hash string) string {
	return headDigest(session, seq, hash)
}

func (s *setState) add(l *setState) {
	for i := range s {
		s[i] += l[i]
	}
}

func (s *setState) sub(l *setState) {
	for i := range s {
		s[i] -= l[i]
	}
}

// bytes is the stored form: each lane little-endian, in order.
func (s *setState) bytes() []byte {
	b := make([]byte, setBytes)
	for i, v := range s {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

// digest is the lowercase hex SHA-256 of the stored form: the "set" member
// of the log-wide head.
func (s *setState) digest() string { return sha256Hex(s.bytes()) }

// parseSetState reads the stored form; false when it has the wrong length.
func parseSetState(b []byte) (*setState, bool) {
	if len(b) != setBytes {
		return nil, false
	}
	var s setState
	for i := range s {
		s[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return &s, true
}
