package central

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/anchor"
)

// AnchorReport is what VerifyAnchors found.
type AnchorReport struct {
	// Checkpoint is the log's current checkpoint, verified.
	Checkpoint anchor.Checkpoint
	// Records counts the store's records; Anchored those a leaf covers,
	// with the same hash.
	Records, Anchored int
	// Unanchored counts records no leaf covers: newer than the
	// checkpoint (the anchorer is behind), or added behind the
	// anchorer's back (they still had to verify by the file's rules).
	Unanchored int
	// Pruned counts sessions whose leaves have no records because a
	// prune removed them: their tombstone is in the store.
	Pruned int
	// Problems say what is wrong, one a line.
	Problems []string
}

// OK reports whether the store's records and the log agree.
func (r *AnchorReport) OK() bool { return len(r.Problems) == 0 }

// clockSkew is how far ahead of the auditor's clock a record may be dated.
const clockSkew = 5 * time.Minute

// leafKey names a record: its log, session and seq.
type leafKey struct {
	log, session string
	seq          uint64
}

// anchoredLeaf is a leaf of the log: the record's hash and the leaf's
// index.
type anchoredLeaf struct {
	hash  string
	index uint64
}

// VerifyAnchors checks the store against the fleet's transparency log,
// read from src (the bucket's locked copy, or a directory) with the
// log's verifier alone: the checkpoint's signature, consistency with each
// kept checkpoint, the tree recomputed from every entry bundle; then every
// record the store holds must have the hash its leaf says, and every leaf
// a record, unless a prune removed its session. So a session deleted from
// the store, one rolled back to an earlier head, a rewritten record and a
// rewritten tile each show, whoever could write the database.
//
// A record no leaf covers is counted as not yet anchored while it is
// younger than grace (by its own time); older, it is a problem: anchoring
// stalled, or the record was put in the store behind the anchorer's back.
// The checkpoints the store published must verify and be consistent with
// the copy's, as each of kept must.
//
// A session's anchored records missing from the store count as pruned
// only in a log vouched for (vouched(logID): its log-wide head, which
// covers its prunes, carries a signature the auditor checked): in any
// other log the tombstone that says so is only the store's word, which
// whoever writes the database could have written.
func (s *Store) VerifyAnchors(ctx context.Context, v *anchor.Verifier, src anchor.Source, kept [][]byte, grace time.Duration, vouched func(logID string) bool) (*AnchorReport, error) {
	rep := &AnchorReport{}
	published, err := s.publishedCheckpoints(ctx, v, rep)
	if err != nil {
		return nil, err
	}
	leaves := map[leafKey]anchoredLeaf{}
	cp, err := v.Audit(ctx, src, anchor.AuditOptions{Kept: append(kept, published...), Leaf: func(index uint64, leaf []byte) error {
		var l struct {
			Hash    string `json:"hash"`
			Log     string `json:"log"`
			Seq     uint64 `json:"seq"`
			Session string `json:"session"`
		}
		if err := json.Unmarshal(leaf, &l); err != nil || l.Log == "" || l.Session == "" || l.Seq == 0 {
			return fmt.Errorf("leaf %d is not a browsergate record's leaf: %q", index, leaf)
		}
		k := leafKey{l.Log, l.Session, l.Seq}
		if _, twice := leaves[k]; !twice { // a leaf appended again after a crash
			leaves[k] = anchoredLeaf{hash: l.Hash, index: index}
		}
		return nil
	}})
	if err != nil {
		rep.Problems = append(rep.Problems, "the transparency log's copy, against the checkpoints kept and published: "+err.Error())
		return rep, nil
	}
	rep.Checkpoint = cp
	stale := map[string][]uint64{} // per log and session, the records no leaf covers that should be anchored
	var gap []uint64               // the unanchored records of the session read now
	var gapKey string
	err = s.readOnly(ctx, func(tx pgx.Tx) error {
		// The record's own bytes, as the file's rules read them: not a
		// column beside them that nothing ties to them.
		rows, _ := tx.Query(ctx, `SELECT log_id, session, seq, record FROM evidence_records ORDER BY log_id, session, seq`)
		var k leafKey
		var seq int64
		var raw []byte
		_, err := pgx.ForEachRow(rows, []any{&k.log, &k.session, &seq, &raw}, func() error {
			k.seq = uint64(seq)
			rep.Records++
			var r struct {
				Hash string    `json:"hash"`
				Time time.Time `json:"time"`
			}
			_ = json.Unmarshal(raw, &r)
			l, ok := leaves[k]
			sk := fmt.Sprintf("log %s session %s", k.log, evidence.Visible(k.session))
			if sk != gapKey {
				gap, gapKey = nil, sk
			}
			age := time.Since(r.Time)
			switch {
			case !ok && (age > grace || age < -clockSkew):
				// Old enough to be anchored, or dated ahead of the clock.
				stale[sk] = append(stale[sk], k.seq)
			case !ok:
				rep.Unanchored++
				gap = append(gap, k.seq)
			case l.hash != r.Hash:
				rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s record %d: its hash is %s, the leaf at index %d says %s: the record was rewritten",
					k.log, evidence.Visible(k.session), k.seq, r.Hash, l.index, l.hash))
			default:
				rep.Anchored++
				// Records ship and are anchored in order: one before an
				// anchored one in its session, not anchored, was put there
				// behind the anchorer's back.
				if len(gap) > 0 {
					stale[sk] = append(stale[sk], gap...)
					rep.Unanchored -= len(gap)
					gap = nil
				}
			}
			delete(leaves, k)
			return nil
		})
		if err != nil {
			return err
		}
		return s.missing(ctx, tx, leaves, rep, vouched)
	})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(stale))
	for k := range stale {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		seqs := stale[k]
		slices.Sort(seqs)
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d record(s) (seq %d to %d) are not anchored though they should be (recorded more than %s ago, dated ahead of the clock, or before an anchored record of their session): anchoring stalled, or they were put in the store behind the anchorer's back",
			k, len(seqs), seqs[0], seqs[len(seqs)-1], grace))
	}
	return rep, nil
}

// publishedCheckpoints are the checkpoints the anchorer published in the
// store that verify with the log's key: the current one must be
// consistent with each. One that does not verify is a problem: the table
// was written by other hands.
func (s *Store) publishedCheckpoints(ctx context.Context, v *anchor.Verifier, rep *AnchorReport) ([][]byte, error) {
	rows, _ := s.pool.Query(ctx, `SELECT size, checkpoint FROM evidence_checkpoints ORDER BY size`)
	var out [][]byte
	var size int64
	var raw []byte
	_, err := pgx.ForEachRow(rows, []any{&size, &raw}, func() error {
		cp, err := v.Checkpoint(raw)
		if err != nil || cp.Size != uint64(size) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("the store's published checkpoint of size %d does not verify with the log's key: the evidence_checkpoints table was written by other hands", size))
			return nil
		}
		out = append(out, bytes.Clone(raw))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the checkpoints the store published: %w", err)
	}
	return out, nil
}

// missing reports the leaves left without a record: per session, pruned
// (the store holds the tombstone of the session's last anchored head, in
// a log vouched for) or missing.
func (s *Store) missing(ctx context.Context, tx pgx.Tx, leaves map[leafKey]anchoredLeaf, rep *AnchorReport, vouched func(string) bool) error {
	type sessionKey struct{ log, session string }
	gone := map[sessionKey][]uint64{}
	for k := range leaves {
		sk := sessionKey{k.log, k.session}
		gone[sk] = append(gone[sk], k.seq)
	}
	keys := make([]sessionKey, 0, len(gone))
	for k := range gone {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b sessionKey) int {
		return cmp.Or(cmp.Compare(a.log, b.log), cmp.Compare(a.session, b.session))
	})
	for _, sk := range keys {
		seqs := gone[sk]
		slices.Sort(seqs)
		last := seqs[len(seqs)-1]
		l := leaves[leafKey{sk.log, sk.session, last}]
		var pruned bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM evidence_tombstones WHERE log_id = $1 AND digest = $2)`,
			sk.log, evidence.HeadDigest(sk.session, last, l.hash)).Scan(&pruned); err != nil {
			return err
		}
		var left int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM evidence_records WHERE log_id = $1 AND session = $2`, sk.log, sk.session).Scan(&left); err != nil {
			return err
		}
		if pruned && left == 0 && vouched != nil && vouched(sk.log) {
			rep.Pruned++
			continue
		}
		if pruned && left == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s: %d anchored record(s) (seq %d to %d) are not in the store, and only the store's tombstone says the session was pruned: the log's log-wide head is unsigned, or its signature was not checked (--pubkey), so whoever writes the database could have deleted the session and written the tombstone; sign the fleet's logs (serve --signing-key) and verify with --pubkey",
				sk.log, evidence.Visible(sk.session), len(seqs), seqs[0], last))
			continue
		}
		if pruned {
			rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s: recorded as pruned after record %d, but %d of its records are still in the store: the session was rolled back, and the prune forged",
				sk.log, evidence.Visible(sk.session), last, left))
			continue
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s: %d anchored record(s) (seq %d to %d) are not in the store: the session was deleted or rolled back",
			sk.log, evidence.Visible(sk.session), len(seqs), seqs[0], last))
	}
	return nil
}
