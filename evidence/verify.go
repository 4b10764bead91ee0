package evidence

import (
	"cmp"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Report is the outcome of Verify: what was checked and every problem
// found, ordered by session id then sequence number (problems about no
// session last).
type Report struct {
	Sessions int
	Records  int
	// Signed is the number of heads that carry a signature. Verify counts
	// them without checking them; VerifyWithKey checks every head.
	Signed int
	// KeyID is the KeyID of the public key VerifyWithKey checked the
	// signatures with; "" after Verify.
	KeyID string
	// LogHead is what the log-wide head says; nil when the log has none
	// (it was written before log-wide heads, spec revision 9, and Verify
	// cannot tell whether whole sessions were removed from it).
	LogHead  *LogHeadInfo
	Problems []Problem
}

// LogHeadInfo is what a log-wide head covers: its number, the live and
// pruned sessions and the records it commits to, the sessions it took as
// found in a log written before log-wide heads (Legacy), and whether it
// is signed (checked by VerifyWithKey only).
type LogHeadInfo struct {
	N        uint64
	Sessions int
	Pruned   int
	Records  uint64
	Legacy   int
	Signed   bool
}

// OK reports whether the log verified without a single problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// FirstBad returns the first problem in report order, or false when the log
// is intact; it is what a one-line "verify failed" message should name.
func (r *Report) FirstBad() (Problem, bool) {
	if len(r.Problems) == 0 {
		return Problem{}, false
	}
	return r.Problems[0], true
}

// Problem is one thing Verify found wrong. Seq is the record concerned (0
// when the problem is about the session as a whole or about no session);
// Key is the bbolt key concerned in hex (a record key) or the hash of the
// blob concerned, when there is one; Blob says which kind of blob Key
// names ("screenshot", "config" or "recording"; "" for a record key).
type Problem struct {
	Session string
	Seq     uint64
	Key     string
	Blob    string
	Reason  string
}

// Blob kinds of Problem.Blob.
const (
	BlobScreenshot = "screenshot"
	BlobConfig     = "config"
)

// String renders p as "session S record 7: reason", "session S: reason",
// "screenshot K: reason" or "config K: reason", for a terminal: what the
// reason quotes of the file (a head's hash or key, a tombstone) is the
// file's, which anyone who can write it chooses, so its hidden characters
// are escapes (Visible).
func (p Problem) String() string {
	p.Reason, p.Key = Visible(p.Reason), Visible(p.Key)
	switch {
	case p.Session != "" && p.Seq > 0:
		return fmt.Sprintf("session %s record %d: %s", quoteIfNeeded(p.Session), p.Seq, p.Reason)
	case p.Session != "":
		return fmt.Sprintf("session %s: %s", quoteIfNeeded(p.Session), p.Reason)
	case p.Key != "" && (p.Blob == BlobConfig || p.Blob == BlobRecording):
		return fmt.Sprintf("%s %s: %s", p.Blob, p.Key, p.Reason)
	case p.Key != "":
		return fmt.Sprintf("screenshot %s: %s", p.Key, p.Reason)
	}
	return p.Reason
}

// quoteIfNeeded leaves plain ids readable and quotes ones that could forge
// or hide output on a terminal.
func quoteIfNeeded(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s && !containsSpace(s) {
		return s
	}
	return q
}

func containsSpace(s string) bool {
	for _, r := range s {
		if r == ' ' {
			return true
		}
	}
	return false
}

// recordFields are the members of a stored record Verify checks beyond its
// hash. Pointers tell a missing member from a zero one.
type recordFields struct {
	Version    *int
	Session    *string
	Seq        *uint64
	PrevHash   *string
	Screenshot string
	Config     string
	Recording  []string // the hashes of its recording's blobs (rev. 17)
	LogN       uint64   // 0 when absent
}

// fieldsOf reads recordFields from a parsed record without parsing it
// again; a member of the wrong type is an error.
func fieldsOf(obj map[string]any) (recordFields, error) {
	var f recordFields
	str := func(name string) (*string, error) {
		v, ok := obj[name]
		if !ok {
			return nil, nil
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a string", name)
		}
		return &s, nil
	}
	num := func(name string) (*uint64, error) {
		v, ok := obj[name]
		if !ok {
			return nil, nil
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s is not a number", name)
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not an unsigned integer", name)
		}
		return &u, nil
	}
	var err error
	var v *uint64
	if v, err = num("v"); err != nil {
		return f, err
	}
	if v != nil {
		n := int(min(*v, 1<<31))
		f.Version = &n
	}
	if f.Seq, err = num("seq"); err != nil {
		return f, err
	}
	if v, err = num("log_n"); err != nil {
		return f, err
	}
	if v != nil {
		f.LogN = *v
	}
	if f.Session, err = str("session"); err != nil {
		return f, err
	}
	if f.PrevHash, err = str("prev_hash"); err != nil {
		return f, err
	}
	shot, err := str("screenshot_sha256")
	if err != nil {
		return f, err
	}
	if shot != nil {
		f.Screenshot = *shot
	}
	config, err := str("config_sha256")
	if err != nil {
		return f, err
	}
	if config != nil {
		f.Config = *config
	}
	f.Recording, err = recordingOf(obj)
	return f, err
}

// blobRef is a record that refers to a screenshot or config blob.
type blobRef struct {
	session string
	seq     uint64
}

// verifier accumulates problems over one read transaction.
type verifier struct {
	tx         *bolt.Tx
	report     Report
	shotRefs   map[string][]blobRef
	configRefs map[string][]blobRef
	recRefs    map[string][]blobRef // recording blobs
	pub        ed25519.PublicKey    // nil: signatures are counted, not checked
	// sigStatus says, per session, what is known of its head's signature
	// (for the HTML report).
	sigStatus map[string]string
	// logN is, per session, its first record numbered above the largest
	// log_n seen so far, when Verify meets it: the largest log_n of the log.
	maxLogN       uint64
	maxLogSession string
	maxLogSeq     uint64
}

func (v *verifier) add(p Problem) { v.report.Problems = append(v.report.Problems, p) }

// Verify checks every chain, head, screenshot and config blob in one
// consistent read transaction and reports all problems found; it returns
// an error only when the file cannot be read at all. It detects altered
// records (hash mismatch, or bytes not in canonical form), records stored
// under a key other than their seq, gaps (removed records), reordered or
// inserted records (prev_hash mismatch), heads that do not match the last
// record (tail removed or appended), heads without records and records
// without a head, screenshots and config blobs that are missing or whose
// bytes do not match their hash, orphaned screenshots, and sessions the
// log-wide head covers that are missing (or that it does not cover). It
// does not check signatures (VerifyWithKey does), so it cannot detect a
// tail cut off or extended by someone who also rewrote the head, nor a
// session removed by someone who also recomputed the log-wide head.
func (s *Store) Verify() (*Report, error) {
	return s.verify(nil)
}

// VerifyWithKey is Verify plus a check of every session's head signature
// against pub: a head without a signature, signed by another key, or whose
// signature is not over its (session, seq, hash) is a problem naming the
// session. With the key, a tail truncated or extended by someone who
// rewrote the head to match (but does not hold the private key) is
// detected, and when the signature is over an earlier record of the chain
// the records after it are named as added. The log-wide head's signature
// is checked too, so a session removed (or rolled back to an earlier
// signed head) shows even when the log-wide head was recomputed. It still
// cannot detect the whole file put back to an earlier state of itself.
func (s *Store) VerifyWithKey(pub ed25519.PublicKey) (*Report, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("verify evidence: %w: public key has %d bytes, want %d", ErrBadKey, len(pub), ed25519.PublicKeySize)
	}
	return s.verify(pub)
}

func (s *Store) verify(pub ed25519.PublicKey) (*Report, error) {
	var v *verifier
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = verifyTx(tx, pub)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("verify evidence: %w", err)
	}
	return &v.report, nil
}

// verifyTx runs the checks of Verify (and, with pub, VerifyWithKey) inside
// a transaction of the caller's.
func verifyTx(tx *bolt.Tx, pub ed25519.PublicKey) (*verifier, error) {
	if err := checkFormat(tx); err != nil {
		return nil, err
	}
	v := &verifier{tx: tx, shotRefs: map[string][]blobRef{}, configRefs: map[string][]blobRef{}, recRefs: map[string][]blobRef{},
		pub: pub, sigStatus: map[string]string{}}
	if pub != nil {
		v.report.KeyID = KeyID(pub)
	}
	sessions, heads, shots := tx.Bucket(bucketSessions), tx.Bucket(bucketHeads), tx.Bucket(bucketScreenshots)
	if sessions == nil || heads == nil || shots == nil {
		return nil, fmt.Errorf("%w: missing buckets", ErrNotEvidence)
	}
	err := sessions.ForEach(func(id, val []byte) error {
		if val != nil {
			v.add(Problem{Session: string(id), Reason: "stored as a value, not a bucket of records"})
			return nil
		}
		v.report.Sessions++
		v.session(string(id), sessions.Bucket(id), heads.Get(id))
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = heads.ForEach(func(id, val []byte) error {
		if sessions.Bucket(id) == nil {
			var h head
			_ = json.Unmarshal(val, &h)
			v.add(Problem{Session: string(id), Seq: h.Seq, Reason: "head without records: the session's records were removed"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.logHead(tx)
	if err := v.blobs(shots, BlobScreenshot, v.shotRefs); err != nil {
		return nil, err
	}
	// Files written before revision 17 have no recordings bucket.
	if err := v.blobs(tx.Bucket(bucketRecordings), BlobRecording, v.recRefs); err != nil {
		return nil, err
	}
	// Files written before config blobs existed have no configs bucket.
	if err := v.configs(tx.Bucket(bucketConfigs)); err != nil {
		return nil, err
	}
	slices.SortStableFunc(v.report.Problems, func(a, b Problem) int {
		if (a.Session == "") != (b.Session == "") {
			if a.Session == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(a.Seq, b.Seq))
	})
	return v, nil
}

// session checks one chain and its head.
func (v *verifier) session(id string, b *bolt.Bucket, rawHead []byte) {
	var (
		expect    uint64 = 1  // next seq
		prevHash         = "" // hash of the previous record, as stored
		prevKnown        = true
		count     int
		lastSeq   uint64
		lastHash  string
		chain     []chainLink // with a key: every record's key seq and stored hash
	)
	_ = b.ForEach(func(k, val []byte) error {
		keyHex := hex.EncodeToString(k)
		if val == nil {
			v.add(Problem{Session: id, Key: keyHex, Reason: "unexpected nested bucket among records"})
			return nil
		}
		count++
		v.report.Records++
		if len(k) != 8 {
			v.add(Problem{Session: id, Seq: lastSeq + 1, Key: keyHex, Reason: "key is not an 8-byte sequence number"})
			prevKnown = false
			return nil
		}
		seq := binary.BigEndian.Uint64(k)
		bad := func(format string, args ...any) {
			v.add(Problem{Session: id, Seq: seq, Key: keyHex, Reason: fmt.Sprintf(format, args...)})
		}
		if seq != expect {
			if seq > expect {
				bad("gap in sequence: expected %d, found %d (records removed)", expect, seq)
			} else {
				bad("sequence number %d out of order", seq)
			}
		}
		expect, lastSeq = seq+1, seq
		p, err := hashRecord(val)
		var f recordFields
		if err == nil {
			f, err = fieldsOf(p.obj)
		}
		if err != nil {
			bad("unreadable record: %v", err)
			prevKnown, lastHash = false, ""
			return nil
		}
		if !p.canonical {
			bad("record is not in canonical form (altered)")
		}
		if p.stored != p.computed {
			bad("hash mismatch (stored %s, computed %s)", orNone(p.stored), p.computed)
		}
		switch {
		case f.Version == nil:
			bad("no format version")
		case *f.Version != FormatVersion:
			bad("format version %d, expected %d", *f.Version, FormatVersion)
		}
		if f.Session == nil || *f.Session != id {
			bad("record names session %s, not the bucket it is stored in", describe(f.Session, strconv.Quote))
		}
		if f.Seq == nil || *f.Seq != seq {
			bad("stored under seq %d but its seq is %s (moved)", seq, describe(f.Seq, func(n uint64) string { return strconv.FormatUint(n, 10) }))
		}
		switch {
		case f.PrevHash == nil:
			bad("no prev_hash")
		case prevKnown && *f.PrevHash != prevHash:
			bad("prev_hash mismatch (stored %s, previous record's hash %s): records removed, inserted or reordered",
				orNone(*f.PrevHash), orNone(prevHash))
		}
		if f.Screenshot != "" {
			v.shotRefs[f.Screenshot] = append(v.shotRefs[f.Screenshot], blobRef{id, seq})
		}
		if f.Config != "" {
			v.configRefs[f.Config] = append(v.configRefs[f.Config], blobRef{id, seq})
		}
		for _, sum := range f.Recording {
			if refs := v.recRefs[sum]; len(refs) == 0 || refs[len(refs)-1] != (blobRef{id, seq}) {
				v.recRefs[sum] = append(refs, blobRef{id, seq})
			}
		}
		if f.LogN > v.maxLogN {
			v.maxLogN, v.maxLogSession, v.maxLogSeq = f.LogN, id, seq
		}
		if v.pub != nil {
			chain = append(chain, chainLink{seq, p.stored})
		}
		prevHash, prevKnown, lastHash = p.stored, true, p.stored
		return nil
	})

	if rawHead == nil {
		if count == 0 {
			v.add(Problem{Session: id, Reason: "empty session bucket without head"})
		} else {
			v.add(Problem{Session: id, Seq: lastSeq, Reason: "records without head"})
		}
		return
	}
	var h head
	if err := json.Unmarshal(rawHead, &h); err != nil {
		v.add(Problem{Session: id, Reason: fmt.Sprintf("unreadable head: %v", err)})
		return
	}
	if h.Sig != "" {
		v.report.Signed++
		v.sigStatus[id] = "signed by key " + orNone(h.Key) + "; not checked (no public key given)"
	} else {
		v.sigStatus[id] = "unsigned"
	}
	if v.pub != nil {
		v.signature(id, h, lastSeq, chain)
	}
	if count == 0 {
		v.add(Problem{Session: id, Seq: h.Seq, Reason: "head without records: the session's records were removed"})
		return
	}
	if h.Seq != lastSeq || h.Hash != lastHash {
		reason := "head does not match the last record"
		switch {
		case h.Seq > lastSeq:
			reason = "head is ahead of the last record: records removed from the tail"
		case h.Seq < lastSeq:
			reason = "records after the head: records appended without updating the head"
		}
		v.add(Problem{Session: id, Seq: max(h.Seq, lastSeq), Reason: fmt.Sprintf(
			"%s (head seq %d hash %s, last record seq %d hash %s)", reason, h.Seq, orNone(h.Hash), lastSeq, orNone(lastHash))})
	}
}

// chainLink is one record of a chain as a signature may name it.
type chainLink struct {
	seq  uint64
	hash string
}

// signature checks a session's head signature against v.pub. When it does
// not verify it looks for the record of the chain it does verify for: the
// head was then moved past that record by someone without the key, and
// the records after it are the ones added.
func (v *verifier) signature(id string, h head, lastSeq uint64, chain []chainLink) {
	keyID := v.report.KeyID
	bad := func(seq uint64, status, format string, args ...any) {
		v.sigStatus[id] = "INVALID: " + status
		v.add(Problem{Session: id, Seq: seq, Reason: fmt.Sprintf(format, args...)})
	}
	switch {
	case h.Sig == "":
		bad(0, "unsigned", "head (seq %d) is not signed, but a public key was given: it was written without the signing key", h.Seq)
		return
	case h.Key != "" && h.Key != keyID:
		bad(0, "signed by another key", "head signed by key %s, not by the given key %s", h.Key, keyID)
		return
	case headSigned(v.pub, id, h.Seq, h.Hash, h.Sig):
		v.sigStatus[id] = "valid (key " + keyID + ")"
		return
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		if l.seq == h.Seq && l.hash == h.Hash {
			continue // that is the claim that failed
		}
		if headSigned(v.pub, id, l.seq, l.hash, h.Sig) {
			if l.seq < lastSeq {
				bad(l.seq+1, "records added after the signed head", "records %d..%d were added after the last signed head (seq %d) and the head rewritten without the signing key",
					l.seq+1, lastSeq, l.seq)
			} else {
				bad(0, "head rewritten", "head (seq %d hash %s) rewritten without the signing key; its signature is over record %d", h.Seq, orNone(h.Hash), l.seq)
			}
			return
		}
	}
	bad(0, "bad signature", "head signature does not verify for seq %d hash %s nor for any record of the chain: the head was rewritten without the signing key (records removed from the tail?)",
		h.Seq, orNone(h.Hash))
}

// blobs checks that every image or recording blob of kind that a record
// refers to (refs) is present in bucket (nil: the file has none), and that
// every stored one's bytes hash to its key. One no record refers to is an
// orphan: its record or session was removed.
func (v *verifier) blobs(bucket *bolt.Bucket, kind string, refs map[string][]blobRef) error {
	seen := map[string]bool{}
	if bucket != nil {
		err := bucket.ForEach(func(k, val []byte) error {
			key := string(k)
			seen[key] = true
			refs := refs[key]
			if sum := sha256Hex(val); sum != key {
				reason := fmt.Sprintf("%s %s bytes do not match their hash (computed %s)", kind, key, sum)
				for _, r := range refs {
					v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Blob: kind, Reason: reason})
				}
				if len(refs) == 0 {
					v.add(Problem{Key: key, Blob: kind, Reason: fmt.Sprintf("bytes do not match their hash (computed %s)", sum)})
				}
			}
			if len(refs) == 0 {
				v.add(Problem{Key: key, Blob: kind, Reason: "not referenced by any record (its record or session was removed?)"})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for key, refs := range refs {
		if seen[key] {
			continue
		}
		for _, r := range refs {
			v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Blob: kind, Reason: fmt.Sprintf("%s %s missing", kind, key)})
		}
	}
	return nil
}

// configs checks that every config blob a record names is present and that
// every stored blob's bytes hash to its key. Unlike a screenshot, a blob no
// record names is no sign of removal: a daemon stores the configuration
// when a session starts, before its first call.
func (v *verifier) configs(configs *bolt.Bucket) error {
	if configs != nil {
		err := configs.ForEach(func(k, val []byte) error {
			key := string(k)
			if sum := sha256Hex(val); sum != key {
				refs := v.configRefs[key]
				for _, r := range refs {
					v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Blob: BlobConfig,
						Reason: fmt.Sprintf("config blob %s bytes do not match their hash (computed %s)", key, sum)})
				}
				if len(refs) == 0 {
					v.add(Problem{Key: key, Blob: BlobConfig, Reason: fmt.Sprintf("bytes do not match their hash (computed %s)", sum)})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for key, refs := range v.configRefs {
		if configs != nil && configs.Get([]byte(key)) != nil {
			continue
		}
		for _, r := range refs {
			v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Blob: BlobConfig, Reason: fmt.Sprintf("config blob %s missing", key)})
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func describe[T any](p *T, format func(T) string) string {
	if p == nil {
		return "missing"
	}
	return format(*p)
}
