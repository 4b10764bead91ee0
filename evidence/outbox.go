package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

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

// Blob is a screenshot or a configuration blob (Kind BlobScreenshot or
// BlobConfig), under its SHA-256.
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
	// Records is the last record shipped, per session.
	Records map[string]uint64
	// Heads is the head (raw) shipped, per session.
	Heads map[string][]byte
	// Blobs are the blobs shipped, as kind + "/" + sha256.
	Blobs map[string]bool
	// Tombstones are the head digests of the pruned sessions shipped.
	Tombstones map[string]bool
	// LogHead is the log-wide head shipped (raw).
	LogHead []byte
}

// NewShipped is the state of a central store that holds nothing of a log.
func NewShipped() *Shipped {
	return &Shipped{Records: map[string]uint64{}, Heads: map[string][]byte{}, Blobs: map[string]bool{}, Tombstones: map[string]bool{}}
}

// UpToDate reports whether the central store holds every record of
// session up to seq.
func (sh *Shipped) UpToDate(session string, seq uint64) bool {
	return sh.Records[session] >= seq
}

// Apply records that the central store committed b.
func (sh *Shipped) Apply(b *Batch) {
	for _, r := range b.Records {
		sh.Records[r.Session] = max(sh.Records[r.Session], r.Seq)
	}
	for _, bl := range b.Blobs {
		sh.Blobs[bl.Kind+"/"+bl.SHA256] = true
	}
	if !b.Complete {
		return
	}
	for id, h := range b.Heads {
		sh.Heads[id] = h
	}
	for _, id := range b.Removed {
		delete(sh.Heads, id)
		delete(sh.Records, id)
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
		changed, err := changedHeads(tx, sh)
		if err != nil {
			return err
		}
		full := false
		for _, c := range changed {
			if full = s.batchRecords(tx, b, sh, c, maxRecords); full {
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
		if b.Removed, b.Tombstones, err = removedSince(tx, sh); err != nil {
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
// in byte order of their ids.
func changedHeads(tx *bolt.Tx, sh *Shipped) ([]changedHead, error) {
	var out []changedHead
	err := tx.Bucket(bucketHeads).ForEach(func(k, v []byte) error {
		if bytes.Equal(sh.Heads[string(k)], v) {
			return nil
		}
		var h head
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("%w: head of session %q: %w", ErrCorrupt, k, err)
		}
		out = append(out, changedHead{session: string(k), raw: bytes.Clone(v), seq: h.Seq})
		return nil
	})
	return out, err
}

// batchRecords adds the records of c beyond those shipped, and the blobs
// they name that were not shipped, and reports whether the batch is full.
func (s *Store) batchRecords(tx *bolt.Tx, b *Batch, sh *Shipped, c changedHead, maxRecords int) bool {
	recs := tx.Bucket(bucketSessions).Bucket([]byte(c.session))
	for seq := sh.Records[c.session] + 1; seq <= c.seq; seq++ {
		if maxRecords > 0 && len(b.Records) >= maxRecords {
			return true
		}
		var raw []byte
		if recs != nil {
			raw = recs.Get(seqKey(seq))
		}
		if raw == nil {
			// Verify names it; the central store gets the chain up to it.
			return true
		}
		var refs struct {
			Hash       string `json:"hash"`
			Screenshot string `json:"screenshot_sha256"`
			Config     string `json:"config_sha256"`
		}
		_ = json.Unmarshal(raw, &refs)
		b.Records = append(b.Records, RawRecord{Session: c.session, Seq: seq, Hash: refs.Hash, Raw: bytes.Clone(raw)})
		b.addBlob(tx, sh, BlobScreenshot, bucketScreenshots, refs.Screenshot)
		b.addBlob(tx, sh, BlobConfig, bucketConfigs, refs.Config)
	}
	return false
}

// addBlob adds the blob of a record, once, unless it was shipped.
func (b *Batch) addBlob(tx *bolt.Tx, sh *Shipped, kind string, bucket []byte, sha string) {
	if sha == "" || sh.Blobs[kind+"/"+sha] || slices.ContainsFunc(b.Blobs, func(x Blob) bool { return x.Kind == kind && x.SHA256 == sha }) {
		return
	}
	if data := tx.Bucket(bucket).Get([]byte(sha)); data != nil {
		b.Blobs = append(b.Blobs, Blob{Kind: kind, SHA256: sha, Data: bytes.Clone(data)})
	}
}

// removedSince lists the sessions shipped that a prune removed from the
// file since, and the tombstones not shipped yet.
func removedSince(tx *bolt.Tx, sh *Shipped) ([]string, map[string][]byte, error) {
	tombs := tx.Bucket(bucketPruned)
	heads := tx.Bucket(bucketHeads)
	var removed []string
	for id, raw := range sh.Heads {
		if heads.Get([]byte(id)) != nil {
			continue
		}
		var h head
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, nil, fmt.Errorf("%w: shipped head of session %q: %w", ErrCorrupt, id, err)
		}
		if tombs.Get([]byte(headDigest(id, h.Seq, h.Hash))) == nil {
			return nil, nil, fmt.Errorf("%w: session %q (%d records) was shipped, and the file no longer has it nor a tombstone of its pruning", ErrCorrupt, id, h.Seq)
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
