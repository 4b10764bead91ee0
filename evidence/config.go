package evidence

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// PutConfig stores data (a session's manifest and policies, serialised by
// the caller) in the configs bucket under its lowercase hex SHA-256 and
// returns that hash, for the caller to put in Envelope.ConfigSHA256. The
// blob is content-addressed: storing the same bytes again stores nothing
// new and returns the same hash. Like Append it returns once the blob is
// committed and fsynced, so a record can never name a blob that a crash
// lost.
func (s *Store) PutConfig(data []byte) (string, error) {
	if s.opts.ReadOnly {
		return "", ErrReadOnly
	}
	sum := sha256Hex(data)
	err := s.db.Update(func(tx *bolt.Tx) error {
		configs := tx.Bucket(bucketConfigs)
		if old := configs.Get([]byte(sum)); old != nil {
			if bytes.Equal(old, data) {
				return nil
			}
			// Someone altered the stored blob: refuse to paper over it
			// (Verify names it) rather than silently repair the evidence.
			return fmt.Errorf("%w: config blob %s does not match its hash", ErrCorrupt, sum)
		}
		return configs.Put([]byte(sum), data)
	})
	if err != nil {
		return "", fmt.Errorf("store config: %w", err)
	}
	return sum, nil
}

// Config returns the blob stored under its lowercase hex SHA-256 by
// PutConfig, or ErrNoConfig. It does not check the bytes against the hash:
// Verify does.
func (s *Store) Config(sha256hex string) ([]byte, error) {
	if !isSHA256Hex(sha256hex) {
		return nil, fmt.Errorf("%w: %q is not a lowercase hex SHA-256", ErrNoConfig, sha256hex)
	}
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucketConfigs); b != nil { // absent in files from before config blobs
			v = b.Get([]byte(sha256hex))
		}
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNoConfig, sha256hex)
		}
		out = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return out, nil
}
