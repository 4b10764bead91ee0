package evidence

import (
	"crypto/ed25519"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PruneReport lists what Prune removed.
type PruneReport struct {
	// Sessions are the sessions removed (with their records, head and
	// head signature), ordered by the time of their first record.
	Sessions []SessionSummary
	// Records is the number of records removed.
	Records int
	// Screenshots, Configs and Recordings are the hashes of the blobs
	// removed because no remaining record refers to them, in byte order.
	Screenshots []string
	Configs     []string
	Recordings  []string
	// Kept is the number of sessions left.
	Kept int
}

// Prune removes every session whose last record is before the given time:
// its records, its head and the head's signature, whole (a session is
// never cut in two). Then it removes the screenshots, config blobs and
// recording blobs that no remaining record refers to. Everything happens in one bbolt
// transaction, so a failure or a crash removes nothing.
//
// Prune first verifies the whole log, as Verify does (as VerifyWithKey
// does with the public half of Options.SigningKey, when the store has
// one), and removes nothing (ErrNotIntact) if there is any problem:
// removing sessions from a damaged log could remove the records that show
// the damage. Each removed session leaves a tombstone in the pruned bucket
// (the digest of its last head, which names no session), and the next
// log-wide head moves it from the set of live sessions to that of pruned
// ones, so that what remains verifies and a session removed by anyone else
// still shows. A signed log (its log-wide head, or, in a log written
// before those, any session head, is signed) is pruned only by a store
// holding the signing key (ErrNeedKey otherwise), which signs that head.
// bbolt keeps the freed pages, with their old bytes, for reuse: Compact the
// file afterwards to leave nothing of the removed sessions in it (evidence
// prune does).
func (s *Store) Prune(before time.Time) (PruneReport, error) {
	return s.prune(before, nil)
}

// PruneWithKey is Prune, but the verification that precedes it is
// VerifyWithKey's with pub: a log whose signatures do not check out
// against pub is not pruned.
func (s *Store) PruneWithKey(before time.Time, pub ed25519.PublicKey) (PruneReport, error) {
	if len(pub) != ed25519.PublicKeySize {
		return PruneReport{}, fmt.Errorf("prune evidence: %w: public key has %d bytes, want %d", ErrBadKey, len(pub), ed25519.PublicKeySize)
	}
	return s.prune(before, pub)
}

func (s *Store) prune(before time.Time, pub ed25519.PublicKey) (PruneReport, error) {
	if s.opts.ReadOnly {
		return PruneReport{}, ErrReadOnly
	}
	if pub == nil && s.opts.SigningKey != nil {
		pub = s.opts.SigningKey.Public().(ed25519.PublicKey)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var rep PruneReport
	var lw *logWriter
	err := s.db.Update(func(tx *bolt.Tx) error {
		rep, lw = PruneReport{}, nil // a retried closure starts afresh
		v, err := verifyTx(tx, pub)
		if err != nil {
			return err
		}
		if first, bad := v.report.FirstBad(); bad {
			return fmt.Errorf("%w: %d problem(s), the first: %s (nothing was removed)", ErrNotIntact, len(v.report.Problems), first)
		}
		removed := map[string]bool{}
		sessions, heads, tombs := tx.Bucket(bucketSessions), tx.Bucket(bucketHeads), tx.Bucket(bucketPruned)
		for _, sum := range sessionsTx(tx) {
			if !sum.Last.Before(before) {
				rep.Kept++
				continue
			}
			if lw == nil {
				if signed := v.report.LogHead != nil && v.report.LogHead.Signed || v.report.LogHead == nil && v.report.Signed > 0; signed && s.opts.SigningKey == nil {
					return fmt.Errorf("%w: removing sessions makes a new log-wide head, which must be signed (nothing was removed)", ErrNeedKey)
				}
				if lw, err = s.beginLog(tx); err != nil {
					return err
				}
			}
			tomb := lw.pruned(sum.ID, head{Hash: sum.Head, Seq: sum.HeadSeq})
			if err := tombs.Put([]byte(tomb), fmt.Appendf(nil, `{"n":%d}`, lw.next.head.N)); err != nil {
				return fmt.Errorf("record session %q as pruned: %w", sum.ID, err)
			}
			if err := sessions.DeleteBucket([]byte(sum.ID)); err != nil {
				return fmt.Errorf("remove session %q: %w", sum.ID, err)
			}
			if err := heads.Delete([]byte(sum.ID)); err != nil {
				return fmt.Errorf("remove head of session %q: %w", sum.ID, err)
			}
			if err := tx.Bucket(bucketOpen).Delete([]byte(sum.ID)); err != nil {
				return fmt.Errorf("remove session %q: %w", sum.ID, err)
			}
			removed[sum.ID] = true
			rep.Sessions = append(rep.Sessions, sum)
			rep.Records += sum.Records
		}
		if rep.Screenshots, err = dropUnreferenced(tx.Bucket(bucketScreenshots), v.shotRefs, removed); err != nil {
			return err
		}
		if rep.Configs, err = dropUnreferenced(tx.Bucket(bucketConfigs), v.configRefs, removed); err != nil {
			return err
		}
		if rep.Recordings, err = dropUnreferenced(tx.Bucket(bucketRecordings), v.recRefs, removed); err != nil {
			return err
		}
		if lw == nil {
			return nil
		}
		return lw.write(tx, s.opts.SigningKey, s.keyID)
	})
	if err != nil {
		return PruneReport{}, fmt.Errorf("prune evidence: %w", err)
	}
	if lw != nil {
		s.log = lw.next
	}
	s.changedNow()
	return rep, nil
}

// dropUnreferenced deletes from b (nil: nothing to do) every blob that no
// record outside the removed sessions refers to, and returns their keys.
func dropUnreferenced(b *bolt.Bucket, refs map[string][]blobRef, removed map[string]bool) ([]string, error) {
	if b == nil {
		return nil, nil
	}
	var drop []string
	_ = b.ForEach(func(k, _ []byte) error {
		kept := slices.ContainsFunc(refs[string(k)], func(r blobRef) bool { return !removed[r.session] })
		if !kept {
			drop = append(drop, string(k))
		}
		return nil
	})
	for _, k := range drop { // bbolt forbids deleting inside ForEach
		if err := b.Delete([]byte(k)); err != nil {
			return nil, fmt.Errorf("remove blob %s: %w", k, err)
		}
	}
	return drop, nil
}
