package central

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

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
func (s *Store) VerifyAnchors(ctx context.Context, v *anchor.Verifier, src anchor.Source, kept [][]byte) (*AnchorReport, error) {
	rep := &AnchorReport{}
	leaves := map[leafKey]anchoredLeaf{}
	cp, err := v.Audit(ctx, src, anchor.AuditOptions{Kept: kept, Leaf: func(index uint64, leaf []byte) error {
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
		rep.Problems = append(rep.Problems, "the transparency log's copy: "+err.Error())
		return rep, nil
	}
	rep.Checkpoint = cp
	err = s.readOnly(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT log_id, session, seq, hash FROM evidence_records ORDER BY log_id, session, seq`)
		var k leafKey
		var seq int64
		var hash string
		_, err := pgx.ForEachRow(rows, []any{&k.log, &k.session, &seq, &hash}, func() error {
			k.seq = uint64(seq)
			rep.Records++
			l, ok := leaves[k]
			switch {
			case !ok:
				rep.Unanchored++
			case l.hash != hash:
				rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s record %d: its hash is %s, the leaf at index %d says %s: the record was rewritten",
					k.log, evidence.Visible(k.session), k.seq, hash, l.index, l.hash))
			default:
				rep.Anchored++
			}
			delete(leaves, k)
			return nil
		})
		if err != nil {
			return err
		}
		return s.missing(ctx, tx, leaves, rep)
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// missing reports the leaves left without a record: per session, pruned
// (the store holds the tombstone of the session's last anchored head) or
// missing.
func (s *Store) missing(ctx context.Context, tx pgx.Tx, leaves map[leafKey]anchoredLeaf, rep *AnchorReport) error {
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
		if pruned {
			rep.Pruned++
			continue
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("log %s session %s: %d anchored record(s) (seq %d to %d) are not in the store: the session was deleted or rolled back",
			sk.log, evidence.Visible(sk.session), len(seqs), seqs[0], last))
	}
	return nil
}
