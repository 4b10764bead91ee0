package central

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/browsergate/browsergate/evidence"
)

// Ship commits batch b of a log, written by replica, in one transaction:
// its records (a record already held is skipped when it is the same
// bytes, and refused with ErrConflict when not), its blobs, and, when the
// batch is complete, the sessions' heads, the removals and tombstones of
// pruned sessions and the log-wide head.
func (s *Store) Ship(ctx context.Context, replica string, b *evidence.Batch) error {
	if b.LogID == "" {
		return fmt.Errorf("ship evidence: the file has no log id (it is opened read-only?)")
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO evidence_logs (log_id, replica) VALUES ($1, $2)
			ON CONFLICT (log_id) DO UPDATE SET replica = EXCLUDED.replica`, b.LogID, replica); err != nil {
			return err
		}
		if err := shipRecords(ctx, tx, b); err != nil {
			return err
		}
		if err := shipBlobs(ctx, tx, b); err != nil {
			return err
		}
		if !b.Complete {
			return nil
		}
		return shipState(ctx, tx, b)
	})
	if err != nil {
		return fmt.Errorf("ship evidence of log %s: %w", b.LogID, err)
	}
	return nil
}

// shipRecords inserts the records; one that is there already must be the
// same bytes.
func shipRecords(ctx context.Context, tx pgx.Tx, b *evidence.Batch) error {
	var q pgx.Batch
	for _, r := range b.Records {
		var t struct {
			Time time.Time `json:"time"`
		}
		_ = json.Unmarshal(r.Raw, &t)
		var recorded *time.Time
		if !t.Time.IsZero() {
			recorded = &t.Time
		}
		q.Queue(`WITH ins AS (
				INSERT INTO evidence_records (log_id, session, seq, hash, record, recorded) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (log_id, session, seq) DO NOTHING RETURNING 1)
			SELECT EXISTS (SELECT 1 FROM ins), (SELECT record FROM evidence_records WHERE log_id = $1 AND session = $2 AND seq = $3)`,
			b.LogID, r.Session, int64(r.Seq), r.Hash, r.Raw, recorded)
	}
	res := tx.SendBatch(ctx, &q)
	defer res.Close()
	for _, r := range b.Records {
		var inserted bool
		var held []byte
		if err := res.QueryRow().Scan(&inserted, &held); err != nil {
			return fmt.Errorf("session %s record %d: %w", r.Session, r.Seq, err)
		}
		if !inserted && !bytes.Equal(held, r.Raw) {
			return fmt.Errorf("session %s record %d: %w (a record with hash %s is there)", r.Session, r.Seq, ErrConflict, hashOf(held))
		}
	}
	return res.Close()
}

// hashOf is a stored record's hash member, for messages.
func hashOf(raw []byte) string {
	var r struct {
		Hash string `json:"hash"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Hash
}

// shipBlobs inserts the blobs the store does not hold (content-addressed:
// the same key is the same bytes).
func shipBlobs(ctx context.Context, tx pgx.Tx, b *evidence.Batch) error {
	for _, bl := range b.Blobs {
		if _, err := tx.Exec(ctx, `INSERT INTO evidence_blobs (kind, sha256, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			bl.Kind, bl.SHA256, bl.Data); err != nil {
			return fmt.Errorf("%s %s: %w", bl.Kind, bl.SHA256, err)
		}
	}
	return nil
}

// shipState brings the heads, removals, tombstones and log-wide head of a
// complete batch.
func shipState(ctx context.Context, tx pgx.Tx, b *evidence.Batch) error {
	for id, h := range b.Heads {
		// Forward only: a head is replaced by one further on, never by an
		// earlier or another one of the same seq (a file put back, or two
		// files of one log).
		tag, err := tx.Exec(ctx, `INSERT INTO evidence_heads (log_id, session, head, head_seq) VALUES ($1, $2, $3, $4)
			ON CONFLICT (log_id, session) DO UPDATE SET head = EXCLUDED.head, head_seq = EXCLUDED.head_seq
			WHERE evidence_heads.head_seq < EXCLUDED.head_seq OR evidence_heads.head = EXCLUDED.head`, b.LogID, id, h, int64(evidence.HeadSeq(h)))
		if err != nil {
			return fmt.Errorf("head of session %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("head of session %s at record %d: %w (its head there is as far or further, and another)", id, evidence.HeadSeq(h), ErrConflict)
		}
	}
	for _, id := range b.Removed {
		if _, err := tx.Exec(ctx, `DELETE FROM evidence_records WHERE log_id = $1 AND session = $2`, b.LogID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM evidence_heads WHERE log_id = $1 AND session = $2`, b.LogID, id); err != nil {
			return err
		}
	}
	for k, v := range b.Tombstones {
		if _, err := tx.Exec(ctx, `INSERT INTO evidence_tombstones (log_id, digest, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			b.LogID, k, v); err != nil {
			return err
		}
	}
	n := evidence.LogHeadN(b.LogHead)
	tag, err := tx.Exec(ctx, `UPDATE evidence_logs SET log_head = $2, log_set = $3, log_n = $4, updated = now()
		WHERE log_id = $1 AND (log_n < $4 OR log_head IS NOT DISTINCT FROM $2)`, b.LogID, b.LogHead, b.LogSet, int64(n))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("log-wide head #%d: %w (it holds a later one, or another #%d)", n, ErrConflict, n)
	}
	return nil
}
