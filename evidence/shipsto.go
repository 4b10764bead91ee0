package evidence

import (
	bolt "go.etcd.io/bbolt"
)

// keyShipsTo (meta, revision 16) names the central store a file's writer
// ships it to (its URL, never with a password): a file that holds it is a
// fleet's outbox, whose sessions must not be pruned before they ship
// (evidence prune checks them against the store). It is not hashed.
var keyShipsTo = []byte("ships_to")

// SetShipsTo notes that the log is shipped to the central store at where
// ("" forgets it).
func (s *Store) SetShipsTo(where string) error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if where == "" {
			return meta.Delete(keyShipsTo)
		}
		return meta.Put(keyShipsTo, []byte(where))
	})
}

// ShipsTo is the central store the log is shipped to ("" none).
func (s *Store) ShipsTo() string {
	var where string
	_ = s.db.View(func(tx *bolt.Tx) error {
		where = string(tx.Bucket(bucketMeta).Get(keyShipsTo))
		return nil
	})
	return where
}
