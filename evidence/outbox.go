package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// A log's file is the outbox of a central store: a shipper reads from it,
// in batches, what the central store does not hold yet, and the central
// store keeps each log as the file has it (records, heads, the log-wide
// head, the tombstones of pruned sessions, and the blobs records name), so
// that the file's rules verify it there too. Shipped is what the shipper
// knows the central store holds; NextBatch reads what is new since.

// RawRecord is one record as the file stores it: the canonical JSON of its
// envelope, hash included.
type RawRecord struct {
	Session string
	Seq     uint64
	Hash    string
	Raw     []byte
}

// Blob is a screenshot, a configuration or a recording blob (Kind
// BlobScreenshot, BlobConfig or BlobRecording), under its SHA-256.
type Blob struct {
	Kind, SHA256 string
	Data         []byte
}

// Batch is what a log holds that Shipped does not, read from one bbolt
// read transaction. When Complete, it is all of it: the central store
// that takes it (records, heads, tombstones, log-wide head) holds the log
// exactly as the file was at that moment. Otherwise (the batch hit its
// bound) it has records only, ahead of the heads the central store holds;
// the batch that completes it brings the heads.
type Batch struct {
	LogID   string
	Records []RawRecord
	Blobs   []Blob
	// The rest is set only when Complete.
	Complete bool
	// Heads are the new heads (raw, as stored) of the sessions that
	// changed; Removed the sessions a prune removed from the file since
	// (the central store removes them too: their tombstones say so);
	// Tombstones the new tombstones (head digest → value).
	Heads      map[string][]byte
	Removed    []string
	Tombstones map[string][]byte
	// LogHead and LogSet are meta/log_head and meta/log_set.
	LogHead, LogSet []byte
}

// Shipped is what a central store holds of one log, as its shipper knows
// it: NextBatch reads what is beyond it, and Apply moves it on once the
// central store has committed a batch.
type Shipped struct {
	// Records is the last record shipped, per session, and Hashes its
	// hash.
	Records map[string]uint64
	Hashes  map[string]string
	// Heads is the head (raw) shipped, per session, and HeadSeqs its seq.
	Heads    map[string][]byte
	HeadSeqs map[string]uint64
	// Blobs are the blobs shipped, as kind + "/" + sha256.
	Blobs map[string]bool
	// Tombstones are the head digests of the pruned sessions shipped.
	Tombstones map[string]bool
	// LogHead is the log-wide head shipped (raw).
	LogHead []byte
}

// NewShipped is the state of a central store that holds nothing of a log.
func NewShipped() *Shipped {
	return &Shipped{Records: map[string]uint64{}, Hashes: map[string]string{}, Heads: map[string][]byte{}, HeadSeqs: map[string]uint64{},
		Blobs: map[string]bool{}, Tombstones: map[string]bool{}}
}

// UpToDate reports whether the central store holds session's record seq
// and a head of the session that covers it: read back from the store, the
// record is part of its session (records beyond the head are not).
func (sh *Shipped) UpToDate(session string, seq uint64) bool {
	return sh.HeadSeqs[session] >= seq
}

// Apply records that the central store committed b.
func (sh *Shipped) Apply(b *Batch) {
	for _, r := range b.Records {
		if r.Seq > sh.Records[r.Session] {
			sh.Records[r.Session], sh.Hashes[r.Session] = r.Seq, r.Hash
		}
	}
	for _, bl := range b.Blobs {
		sh.Blobs[bl.Kind+"/"+bl.SHA256] = true
	}
	if !b.Complete {
		return
	}
	for id, h := range b.Heads {
		sh.Heads[id] = h
		sh.HeadSeqs[id] = HeadSeq(h)
	}
	for _, id := range b.Removed {
		delete(sh.Heads, id)
		delete(sh.HeadSeqs, id)
		delete(sh.Records, id)
		delete(sh.Hashes, id)
	}
	for k := range b.Tombstones {
		sh.Tombstones[k] = true
	}
	sh.LogHead = b.LogHead
}

// NextBatch reads what the file holds beyond sh, at most maxRecords
// records (0: no bound). An empty Complete batch (no records, heads,
// removals or tombstones, the same log-wide head) says there is nothing
// to ship. A session the central store holds that is gone from the file
// without a tombstone is ErrCorrupt: the file lost records it had shipped.
func (s *Store) NextBatch(sh *Shipped, maxRecords int) (*Batch, error) {
	b := &Batch{LogID: s.logID}
	err := s.db.View(func(tx *bolt.Tx) error {
		changed, present, err := changedHeads(tx, sh)
		if err != nil {
			return err
		}
		full := false
		for _, c := range changed {
			if full, err = s.batchRecords(tx, b, sh, c, maxRecords); err != nil {
				return err
			}
			if full {
				break
			}
		}
		if full {
			return nil
		}
		b.Complete = true
		b.Heads = map[string][]byte{}
		for _, c := range changed {
			b.Heads[c.session] = c.raw
		}
		if b.Removed, b.Tombstones, err = removedSince(tx, sh, present); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		b.LogHead, b.LogSet = bytes.Clone(meta.Get(keyLogHead)), bytes.Clone(meta.Get(keyLogSet))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read evidence to ship: %w", err)
	}
	return b, nil
}

// Empty reports whether b has nothing the central store lacks.
func (b *Batch) Empty(sh *Shipped) bool {
	return b.Complete && len(b.Records) == 0 && len(b.Heads) == 0 && len(b.Removed) == 0 &&
		len(b.Tombstones) == 0 && bytes.Equal(b.LogHead, sh.LogHead)
}

// changedHead is a session whose head in the file is not the one shipped.
type changedHead struct {
	session string
	raw     []byte
	seq     uint64
}

// changedHeads lists the sessions whose head differs from the one shipped,
// in byte order of their ids, and counts the shipped sessions the file
// still holds.
func changedHeads(tx *bolt.Tx, sh *Shipped) (out []changedHead, present int, err error) {
	err = tx.Bucket(bucketHeads).ForEach(func(k, v []byte) error {
		shipped, ok := sh.Heads[string(k)]
		if ok {
			present++
		}
		if bytes.Equal(shipped, v) {
			return nil
		}
		var h head
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("%w: head of session %s: %w", ErrCorrupt, shortID(string(k)), err)
		}
		out = append(out, changedHead{session: string(k), raw: bytes.Clone(v), seq: h.Seq})
		return nil
	})
	return out, present, err
}

// batchRecords adds the records of c beyond those shipped, and the blobs
// they name that were not shipped, and reports whether the batch is full.
// A record missing below the head is ErrCorrupt.
func (s *Store) batchRecords(tx *bolt.Tx, b *Batch, sh *Shipped, c changedHead, maxRecords int) (bool, error) {
	recs := tx.Bucket(bucketSessions).Bucket([]byte(c.session))
	for seq := sh.Records[c.session] + 1; seq <= c.seq; seq++ {
		if maxRecords > 0 && len(b.Records) >= maxRecords {
			return true, nil
		}
		var raw []byte
		if recs != nil {
			raw = recs.Get(seqKey(seq))
		}
		if raw == nil {
			return false, fmt.Errorf("%w: session %s has no record %d below its head %d (evidence verify names what is wrong): nothing of the session beyond it can ship", ErrCorrupt, shortID(c.session), seq, c.seq)
		}
		var refs struct {
			Hash string `json:"hash"`
		}
		_ = json.Unmarshal(raw, &refs)
		b.Records = append(b.Records, RawRecord{Session: c.session, Seq: seq, Hash: refs.Hash, Raw: bytes.Clone(raw)})
		for _, blob := range BlobsOf(raw) {
			b.addBlob(tx, sh, blob.Kind, blob.SHA256)
		}
	}
	return false, nil
}

// addBlob adds the blob of a record, once, unless it was shipped.
func (b *Batch) addBlob(tx *bolt.Tx, sh *Shipped, kind string, sha string) {
	bucket, err := blobBucket(kind)
	if err != nil || sha == "" || sh.Blobs[kind+"/"+sha] || slices.ContainsFunc(b.Blobs, func(x Blob) bool { return x.Kind == kind && x.SHA256 == sha }) {
		return
	}
	if bb := tx.Bucket(bucket); bb == nil {
		return
	} else if data := bb.Get([]byte(sha)); data != nil {
		b.Blobs = append(b.Blobs, Blob{Kind: kind, SHA256: sha, Data: bytes.Clone(data)})
	}
}

// removedSince lists the sessions shipped that a prune removed from the
// file since, and the tombstones not shipped yet. present is how many of
// the sessions shipped the file holds (changedHeads counts them while it
// reads every head): when it is all of them, none was removed, and the
// sessions are not looked up one by one, which in every batch would cost
// more the more sessions the file holds.
func removedSince(tx *bolt.Tx, sh *Shipped, present int) ([]string, map[string][]byte, error) {
	tombs := tx.Bucket(bucketPruned)
	heads := tx.Bucket(bucketHeads)
	var removed []string
	for id, raw := range sh.Heads {
		if present == len(sh.Heads) {
			break // none removed
		}
		if heads.Get([]byte(id)) != nil {
			continue
		}
		var h head
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, nil, fmt.Errorf("%w: shipped head of session %s: %w", ErrCorrupt, shortID(id), err)
		}
		if tombs.Get([]byte(headDigest(id, h.Seq, h.Hash))) == nil {
			return nil, nil, fmt.Errorf("%w: session %s (%d records) was shipped, and the file no longer has it nor a tombstone of its pruning", ErrCorrupt, shortID(id), h.Seq)
		}
		removed = append(removed, id)
	}
	slices.Sort(removed)
	added := map[string][]byte{}
	err := tombs.ForEach(func(k, v []byte) error {
		if !sh.Tombstones[string(k)] {
			added[string(k)] = bytes.Clone(v)
		}
		return nil
	})
	return removed, added, err
}

// HeadSeq is the seq of a head as the file stores it (0 when unreadable).
func HeadSeq(raw []byte) uint64 { return rawHead(raw).Seq }

// rawHead is a head as the file stores it (zero when unreadable).
func rawHead(raw []byte) head {
	var h head
	_ = json.Unmarshal(raw, &h)
	return h
}

// CheckShipped refuses (ErrCorrupt) to ship a file that is behind what
// the central store holds of its log: a file put back from a backup, or a
// copy of it that another daemon went on writing. Shipping from it would
// roll the store's heads back and take acknowledgements from records the
// store holds other bytes for. Each session the store holds must be in
// the file with the same record at the store's last seq and a head at
// least as far, or pruned from the file (its tombstone is there).
func (s *Store) CheckShipped(sh *Shipped) error {
	return s.db.View(func(tx *bolt.Tx) error {
		heads, tombs, sessions := tx.Bucket(bucketHeads), tx.Bucket(bucketPruned), tx.Bucket(bucketSessions)
		for id, seq := range sh.Records {
			raw := heads.Get([]byte(id))
			if raw == nil {
				if h, ok := sh.Heads[id]; ok && tombs.Get([]byte(headDigest(id, rawHead(h).Seq, rawHead(h).Hash))) != nil {
					continue // pruned since it shipped
				}
				return fmt.Errorf("%w: the central store holds session %s of this log (%d records), the file does not: it is older than the store, or not this log's file", ErrCorrupt, shortID(id), seq)
			}
			var rec []byte
			if b := sessions.Bucket([]byte(id)); b != nil {
				rec = b.Get(seqKey(seq))
			}
			var got struct {
				Hash string `json:"hash"`
			}
			_ = json.Unmarshal(rec, &got)
			if rec == nil || got.Hash != sh.Hashes[id] {
				return fmt.Errorf("%w: session %s record %d is not the one the central store holds of this log: the file is older than the store (put back from a backup?), or another daemon wrote a copy of it", ErrCorrupt, shortID(id), seq)
			}
			if HeadSeq(raw) < sh.HeadSeqs[id] {
				return fmt.Errorf("%w: session %s ends at record %d in the file, at %d in the central store: the file is older than the store", ErrCorrupt, shortID(id), HeadSeq(raw), sh.HeadSeqs[id])
			}
		}
		return nil
	})
}

// LogHeadN is the n of a log-wide head as the file stores it (0 when
// there is none or it is unreadable): a central store takes a log-wide
// head only forward.
func LogHeadN(raw []byte) uint64 {
	if h, err := parseLogHead(raw); err == nil {
		return h.N
	}
	return 0
}

// shortID is a session id for a message: quoted, escaped, and cut at 80
// characters (a store's rows can hold ids no file writes).
func shortID(id string) string {
	if r := []rune(id); len(r) > 80 {
		id = string(r[:80]) + "…"
	}
	return strconv.Quote(id)
}

// Whole is what a central store must hold of a session to hold it as the
// file does: its head's very bytes, as many records as the head counts
// with the last one the head names, and every blob its records name (as
// kind + "/" + sha256).
type Whole struct {
	Head  []byte
	Seq   uint64
	Hash  string
	Blobs []string
}

// WholeOf is what the file holds of session id, for a check that a
// central store holds it whole (before a prune removes it from the file).
func (s *Store) WholeOf(id string) (*Whole, error) {
	w := &Whole{}
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketHeads).Get([]byte(id))
		if raw == nil {
			return fmt.Errorf("%w: session %s has no head", ErrCorrupt, shortID(id))
		}
		h := rawHead(raw)
		w.Head, w.Seq, w.Hash = bytes.Clone(raw), h.Seq, h.Hash
		recs := tx.Bucket(bucketSessions).Bucket([]byte(id))
		if recs == nil {
			return fmt.Errorf("%w: session %s has a head and no records", ErrCorrupt, shortID(id))
		}
		return recs.ForEach(func(_, rec []byte) error {
			for _, blob := range BlobsOf(rec) {
				if key := blob.Kind + "/" + blob.SHA256; !slices.Contains(w.Blobs, key) {
					w.Blobs = append(w.Blobs, key)
				}
			}
			return nil
		})
	})
	return w, err
}
