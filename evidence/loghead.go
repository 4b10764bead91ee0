package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// logSignaturePrefix starts every log-wide head message (domain
// separation, as headSignaturePrefix: a signature over a log-wide head can
// be taken for nothing else, and a later layout gets a new prefix).
const logSignaturePrefix = "browsergate-evidence-log-v1\n"

// logHead is the value of meta/log_head: one head for the whole log, made
// anew by every append and every prune, that commits to the head of every
// session in the log and of every session pruned from it (Set, the digest
// of the set state stored in meta/log_set) and counts them. N numbers the
// log-wide heads; Prev is the digest of the message of head N-1, so that
// the heads form a chain someone holding them can check; Last is the
// append that made this head (nil after a prune that removed its session).
// Legacy is the number of sessions the first log-wide head found in a log
// written before there were any, which it covers as found.
type logHead struct {
	Key      string    `json:"key,omitempty"`
	Last     *logEvent `json:"last,omitempty"`
	Legacy   int       `json:"legacy"`
	N        uint64    `json:"n"`
	Prev     string    `json:"prev"`
	Pruned   int       `json:"pruned"`
	Records  uint64    `json:"records"`
	Sessions int       `json:"sessions"`
	Set      string    `json:"set"`
	Sig      string    `json:"sig,omitempty"`
}

// logEvent is the record an append added: its session, seq and hash.
type logEvent struct {
	Hash    string `json:"hash"`
	Seq     uint64 `json:"seq"`
	Session string `json:"session"`
}

// message returns the bytes a log-wide head's signature is over:
//
//	"browsergate-evidence-log-v1\n" + n + "\n" + prev + "\n" + set + "\n" +
//	sessions + "\n" + pruned + "\n" + records + "\n" + legacy + "\n" +
//	last.seq + "\n" + last.hash + "\n" + last.session
//
// numbers in decimal ASCII, last.seq 0 and last.hash and last.session ""
// when there is no last append. Only the session id, last, may hold a
// newline, so the message reads back as exactly one head.
func (h *logHead) message() []byte {
	var last logEvent
	if h.Last != nil {
		last = *h.Last
	}
	b := make([]byte, 0, 256+len(last.Session))
	b = append(b, logSignaturePrefix...)
	b = strconv.AppendUint(b, h.N, 10)
	b = append(append(append(b, '\n'), h.Prev...), '\n')
	b = append(append(b, h.Set...), '\n')
	for _, n := range []uint64{uint64(h.Sessions), uint64(h.Pruned), h.Records, uint64(h.Legacy), last.Seq} {
		b = append(strconv.AppendUint(b, n, 10), '\n')
	}
	b = append(append(b, last.Hash...), '\n')
	return append(b, last.Session...)
}

// encode writes h in canonical JSON.
func (h *logHead) encode() ([]byte, error) {
	num := func(n uint64) json.Number { return json.Number(strconv.FormatUint(n, 10)) }
	obj := map[string]any{
		"legacy": num(uint64(h.Legacy)), "n": num(h.N), "prev": h.Prev, "pruned": num(uint64(h.Pruned)),
		"records": num(h.Records), "sessions": num(uint64(h.Sessions)), "set": h.Set,
	}
	if h.Last != nil {
		obj["last"] = map[string]any{"hash": h.Last.Hash, "seq": num(h.Last.Seq), "session": h.Last.Session}
	}
	if h.Sig != "" {
		obj["key"], obj["sig"] = h.Key, h.Sig
	}
	return appendCanonical(nil, obj)
}

func parseLogHead(raw []byte) (*logHead, error) {
	var h logHead
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, err
	}
	if h.N == 0 || !isSHA256Hex(h.Set) || h.Sessions < 0 || h.Pruned < 0 || h.Legacy < 0 {
		return nil, fmt.Errorf("n, set, sessions, pruned or legacy out of range")
	}
	return &h, nil
}

// signedBy reports whether h carries pub's signature over its message.
func (h *logHead) signedBy(pub ed25519.PublicKey) bool {
	sig, err := hex.DecodeString(h.Sig)
	return err == nil && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, h.message(), sig)
}

// logState is the log-wide head a writer extends: the head as stored (raw,
// nil when the log has none yet), parsed, and the set state it commits to.
type logState struct {
	raw  []byte
	head logHead
	set  *setState
}

// loadLog reads the log-wide head of a file opened for writing and checks
// that this store may extend it: its set state must hash to its set and,
// when the store signs, it must carry this key's valid signature (a key
// cannot vouch for a set it did not sign: someone who removed a session
// could have recomputed it). A log without one must be one written before
// log-wide heads: no pruned session, no record numbered by a log-wide
// head. Any other state is ErrCorrupt, and nothing is written.
func (s *Store) loadLog(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	raw := meta.Get(keyLogHead)
	if raw == nil {
		if k, _ := tx.Bucket(bucketPruned).Cursor().First(); k != nil {
			return fmt.Errorf("%w: the log records pruned sessions but has no log-wide head: it was removed", ErrCorrupt)
		}
		if id, n := newestLogN(tx); n > 0 {
			return fmt.Errorf("%w: session %q has records made under log-wide head #%d, but the log has none: it was removed", ErrCorrupt, id, n)
		}
		s.log = logState{}
		s.signed = anySessionSigned(tx)
		return nil
	}
	h, err := parseLogHead(raw)
	if err != nil {
		return fmt.Errorf("%w: unreadable log-wide head: %w", ErrCorrupt, err)
	}
	set, ok := parseSetState(meta.Get(keyLogSet))
	if !ok || set.digest() != h.Set {
		return fmt.Errorf("%w: the log-wide set state does not hash to the log-wide head's set: it was altered", ErrCorrupt)
	}
	if key := s.opts.SigningKey; key != nil {
		switch {
		case h.Sig == "":
			return fmt.Errorf("%w: log-wide head #%d is not signed, and a signing key cannot vouch for what was written without one: sign a new evidence file", ErrCorrupt, h.N)
		case h.Key != s.keyID:
			return fmt.Errorf("%w: log-wide head #%d is signed by key %s, not by the signing key %s: a log is signed by one key (use a new evidence file for a new key)", ErrCorrupt, h.N, h.Key, s.keyID)
		case !h.signedBy(key.Public().(ed25519.PublicKey)):
			return fmt.Errorf("%w: the signature of log-wide head #%d does not verify: it was rewritten without the signing key", ErrCorrupt, h.N)
		}
	}
	s.log = logState{raw: bytes.Clone(raw), head: *h, set: set}
	s.signed = h.Sig != "" || anySessionSigned(tx)
	return nil
}

// errStop ends a ForEach early.
var errStop = errors.New("stop")

// anySessionSigned reports whether a session's head is signed.
func anySessionSigned(tx *bolt.Tx) bool {
	signed := false
	_ = tx.Bucket(bucketHeads).ForEach(func(_, v []byte) error {
		var sh head
		if json.Unmarshal(v, &sh) == nil && sh.Sig != "" {
			signed = true
			return errStop
		}
		return nil
	})
	return signed
}

// newestLogN returns the largest log_n among the last records of the
// sessions, and its session (0 when none has one).
func newestLogN(tx *bolt.Tx) (string, uint64) {
	var id string
	var max uint64
	all := tx.Bucket(bucketSessions)
	_ = all.ForEachBucket(func(k []byte) error {
		_, v := all.Bucket(k).Cursor().Last()
		var r struct {
			LogN uint64 `json:"log_n"`
		}
		if v != nil && json.Unmarshal(v, &r) == nil && r.LogN > max {
			id, max = string(k), r.LogN
		}
		return nil
	})
	return id, max
}

// logWriter is a change to the log-wide head, made inside a write
// transaction and kept by the store once that transaction commits.
type logWriter struct {
	next logState
}

// beginLog starts the next log-wide head in tx. The stored head must be
// the one this store last wrote or checked: one changed behind its back
// is ErrCorrupt. A log without one gets its first, covering the sessions
// present as found (Legacy).
func (s *Store) beginLog(tx *bolt.Tx) (*logWriter, error) {
	meta := tx.Bucket(bucketMeta)
	raw := meta.Get(keyLogHead)
	if !bytes.Equal(raw, s.log.raw) || (raw == nil) != (s.log.raw == nil) {
		return nil, fmt.Errorf("%w: the log-wide head was changed behind the writer's back", ErrCorrupt)
	}
	if s.signed && s.opts.SigningKey == nil {
		// An unsigned head after a signed one would make the log fail
		// VerifyWithKey from here on: a writer without the key refuses
		// rather than downgrade the log.
		return nil, fmt.Errorf("%w: a store without the signing key cannot extend it (nothing was written)", ErrNeedKey)
	}
	w := &logWriter{}
	if raw != nil {
		set := *s.log.set
		w.next = logState{head: s.log.head, set: &set}
		w.next.head.Prev = sha256Hex(s.log.head.message())
		w.next.head.N++
		return w, nil
	}
	set := &setState{}
	var h logHead
	err := tx.Bucket(bucketHeads).ForEach(func(id, v []byte) error {
		var sh head
		if err := json.Unmarshal(v, &sh); err != nil {
			return fmt.Errorf("%w: head of session %q: %w", ErrCorrupt, id, err)
		}
		set.add(setLeaf(leafLive, headDigest(string(id), sh.Seq, sh.Hash)))
		h.Sessions++
		h.Records += sh.Seq
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.Legacy, h.N = h.Sessions, 1
	w.next = logState{head: h, set: set}
	return w, nil
}

// appended accounts for the append of record seq (hash) to session, whose
// head was old (nil: a new session).
func (w *logWriter) appended(session string, old *head, seq uint64, hash string) {
	h := &w.next.head
	if old != nil {
		w.next.set.sub(setLeaf(leafLive, headDigest(session, old.Seq, old.Hash)))
	} else {
		h.Sessions++
	}
	w.next.set.add(setLeaf(leafLive, headDigest(session, seq, hash)))
	h.Records++
	h.Last = &logEvent{Session: session, Seq: seq, Hash: hash}
}

// pruned accounts for a session removed by Prune, whose head was h, and
// returns the key its tombstone goes under.
func (w *logWriter) pruned(session string, h head) string {
	d := headDigest(session, h.Seq, h.Hash)
	w.next.set.sub(setLeaf(leafLive, d))
	w.next.set.add(setLeaf(leafPruned, d))
	w.next.head.Sessions--
	w.next.head.Pruned++
	w.next.head.Records -= h.Seq
	if l := w.next.head.Last; l != nil && l.Session == session {
		w.next.head.Last = nil
	}
	return d
}

// write stores the new log-wide head (signed with key when set) and its
// set state in tx.
func (w *logWriter) write(tx *bolt.Tx, key ed25519.PrivateKey, keyID string) error {
	raw, state, err := w.seal(key, keyID)
	if err != nil {
		return err
	}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keyLogSet, state); err != nil {
		return err
	}
	return meta.Put(keyLogHead, raw)
}

// seal computes the new log-wide head's set digest and signature, and
// returns its stored form and that of its set state.
func (w *logWriter) seal(key ed25519.PrivateKey, keyID string) (raw, state []byte, err error) {
	h := &w.next.head
	state = w.next.set.bytes()
	h.Set = sha256Hex(state)
	h.Key, h.Sig = "", ""
	if key != nil {
		h.Key = keyID
		h.Sig = hex.EncodeToString(ed25519.Sign(key, h.message()))
	}
	if raw, err = h.encode(); err != nil {
		return nil, nil, err
	}
	w.next.raw = raw
	return raw, state, nil
}
