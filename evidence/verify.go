package evidence

import (
	"cmp"
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
	Problems []Problem
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
// Key is the bbolt key concerned in hex (a record key) or the screenshot
// hash, when there is one.
type Problem struct {
	Session string
	Seq     uint64
	Key     string
	Reason  string
}

// String renders p as "session S record 7: reason", "session S: reason" or
// "screenshot K: reason".
func (p Problem) String() string {
	switch {
	case p.Session != "" && p.Seq > 0:
		return fmt.Sprintf("session %s record %d: %s", quoteIfNeeded(p.Session), p.Seq, p.Reason)
	case p.Session != "":
		return fmt.Sprintf("session %s: %s", quoteIfNeeded(p.Session), p.Reason)
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
	if f.Session, err = str("session"); err != nil {
		return f, err
	}
	if f.PrevHash, err = str("prev_hash"); err != nil {
		return f, err
	}
	shot, err := str("screenshot_sha256")
	if shot != nil {
		f.Screenshot = *shot
	}
	return f, err
}

type shotRef struct {
	session string
	seq     uint64
}

// verifier accumulates problems over one read transaction.
type verifier struct {
	tx       *bolt.Tx
	report   Report
	shotRefs map[string][]shotRef
}

func (v *verifier) add(p Problem) { v.report.Problems = append(v.report.Problems, p) }

// Verify checks every chain, head and screenshot in one consistent read
// transaction and reports all problems found; it returns an error only when
// the file cannot be read at all. It detects altered records (hash
// mismatch, or bytes not in canonical form), records stored under a key
// other than their seq, gaps (removed records), reordered or inserted
// records (prev_hash mismatch), heads that do not match the last record
// (tail removed or appended), heads without records and records without a
// head, and screenshots that are missing or whose bytes do not match
// their hash. It cannot detect the removal of a whole session together with
// its head.
func (s *Store) Verify() (*Report, error) {
	var v verifier
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := checkFormat(tx); err != nil {
			return err
		}
		v = verifier{tx: tx, shotRefs: map[string][]shotRef{}}
		sessions, heads, shots := tx.Bucket(bucketSessions), tx.Bucket(bucketHeads), tx.Bucket(bucketScreenshots)
		if sessions == nil || heads == nil || shots == nil {
			return fmt.Errorf("%w: missing buckets", ErrNotEvidence)
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
			return err
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
			return err
		}
		return v.screenshots(shots)
	})
	if err != nil {
		return nil, fmt.Errorf("verify evidence: %w", err)
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
	return &v.report, nil
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
			v.shotRefs[f.Screenshot] = append(v.shotRefs[f.Screenshot], shotRef{id, seq})
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

// screenshots checks that every referenced image is present and that every
// stored image's bytes hash to its key.
func (v *verifier) screenshots(shots *bolt.Bucket) error {
	seen := map[string]bool{}
	err := shots.ForEach(func(k, val []byte) error {
		key := string(k)
		seen[key] = true
		refs := v.shotRefs[key]
		if sum := sha256Hex(val); sum != key {
			reason := fmt.Sprintf("screenshot %s bytes do not match their hash (computed %s)", key, sum)
			for _, r := range refs {
				v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Reason: reason})
			}
			if len(refs) == 0 {
				v.add(Problem{Key: key, Reason: fmt.Sprintf("bytes do not match their hash (computed %s)", sum)})
			}
		}
		if len(refs) == 0 {
			v.add(Problem{Key: key, Reason: "not referenced by any record (its record or session was removed?)"})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for key, refs := range v.shotRefs {
		if seen[key] {
			continue
		}
		for _, r := range refs {
			v.add(Problem{Session: r.session, Seq: r.seq, Key: key, Reason: fmt.Sprintf("screenshot %s missing", key)})
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
