package evidence

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Assembler writes an evidence file from a log's parts as a central store
// keeps them (Batch's parts), so that everything that reads a file —
// verify, show, export, replay — reads a central store's logs too. It
// trusts nothing it is given: Verify on the file says what is wrong.
type Assembler struct {
	tx *bolt.Tx
}

// Assemble creates the file at path (it must not exist), lets fill put the
// parts in, and commits them in one transaction. The file is an evidence
// log of this format version named logID ("" for none: a file assembled
// from several logs, to read and not to verify as one log). On error the
// file is removed.
func Assemble(path, logID string, fill func(a *Assembler) error) (err error) {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("assemble evidence %s: the file exists", path)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return fmt.Errorf("assemble evidence %s: %w", path, err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("assemble evidence %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := meta.Put(keyFormatVersion, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
		if logID != "" {
			if err := meta.Put(keyLogID, []byte(logID)); err != nil {
				return err
			}
		}
		for _, name := range [][]byte{bucketSessions, bucketHeads, bucketScreenshots, bucketConfigs, bucketPruned, bucketRecordings} {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return fill(&Assembler{tx: tx})
	})
	if err != nil {
		return fmt.Errorf("assemble evidence %s: %w", path, err)
	}
	return db.Sync()
}

// Record puts a record (its raw canonical JSON) under its session and seq.
func (a *Assembler) Record(session string, seq uint64, raw []byte) error {
	if session == "" || len(session) > MaxSessionIDLen {
		return fmt.Errorf("%w: session id of %d bytes", ErrInvalidEnvelope, len(session))
	}
	b, err := a.tx.Bucket(bucketSessions).CreateBucketIfNotExists([]byte(session))
	if err != nil {
		return err
	}
	return b.Put(seqKey(seq), raw)
}

// Head puts a session's head (raw, as the file stores it).
func (a *Assembler) Head(session string, raw []byte) error {
	return a.tx.Bucket(bucketHeads).Put([]byte(session), raw)
}

// Blob puts a screenshot, configuration or recording blob under its hash.
func (a *Assembler) Blob(kind, sha string, data []byte) error {
	bucket, err := blobBucket(kind)
	if err != nil {
		return err
	}
	return a.tx.Bucket(bucket).Put([]byte(sha), data)
}

// Tombstone puts the tombstone of a pruned session.
func (a *Assembler) Tombstone(digest string, value []byte) error {
	return a.tx.Bucket(bucketPruned).Put([]byte(digest), value)
}

// LogHead puts the log-wide head and its set state.
func (a *Assembler) LogHead(head, set []byte) error {
	meta := a.tx.Bucket(bucketMeta)
	if err := meta.Put(keyLogHead, head); err != nil {
		return err
	}
	return meta.Put(keyLogSet, set)
}
