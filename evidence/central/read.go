package central

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/browsergate/browsergate/evidence"
)

// LogInfo describes one log the store holds: one daemon's evidence file.
type LogInfo struct {
	ID, Replica       string
	Sessions, Records int
	Updated           time.Time
}

// Logs lists the logs the store holds, by replica and id.
func (s *Store) Logs(ctx context.Context) ([]LogInfo, error) {
	rows, _ := s.pool.Query(ctx, `SELECT l.log_id, l.replica, l.updated,
			(SELECT count(*) FROM evidence_heads h WHERE h.log_id = l.log_id),
			(SELECT count(*) FROM evidence_records r WHERE r.log_id = l.log_id)
		FROM evidence_logs l ORDER BY l.replica, l.log_id`)
	var out []LogInfo
	var l LogInfo
	_, err := pgx.ForEachRow(rows, []any{&l.ID, &l.Replica, &l.Updated, &l.Sessions, &l.Records}, func() error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the central store's logs: %w", err)
	}
	return out, nil
}

// Assembled says what an assembled file left out.
type Assembled struct {
	// Ahead counts records the store holds beyond their session's head:
	// a shipper's batch in progress, whose head comes with its last batch
	// (they are left out, as the file had them not yet when the head was
	// shipped).
	Ahead int
}

// AssembleLog writes log logID into a new evidence file at path, as the
// daemon's file was when its shipper last completed a batch: every
// session's records up to its head, the heads, the tombstones, the
// log-wide head and the blobs the records name. Verify on the file then
// checks the log by the file's rules.
func (s *Store) AssembleLog(ctx context.Context, logID, path string) (Assembled, error) {
	var out Assembled
	err := s.readOnly(ctx, func(tx pgx.Tx) error {
		var head, set []byte
		if err := tx.QueryRow(ctx, `SELECT log_head, log_set FROM evidence_logs WHERE log_id = $1`, logID).Scan(&head, &set); err != nil {
			return fmt.Errorf("log %s: %w", logID, err)
		}
		return evidence.Assemble(path, logID, func(a *evidence.Assembler) error {
			if head != nil {
				if err := a.LogHead(head, set); err != nil {
					return err
				}
			}
			rows, _ := tx.Query(ctx, `SELECT digest, value FROM evidence_tombstones WHERE log_id = $1`, logID)
			var digest string
			var value []byte
			if _, err := pgx.ForEachRow(rows, []any{&digest, &value}, func() error { return a.Tombstone(digest, value) }); err != nil {
				return err
			}
			n, err := assembleSessions(ctx, tx, a, logID)
			out.Ahead = n
			return err
		})
	})
	return out, err
}

func (s *Store) readOnly(ctx context.Context, fn func(pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	if err != nil {
		return fmt.Errorf("read the central store: %w", err)
	}
	return nil
}

// assembleSessions puts the heads and records of the sessions of log
// logID, then the blobs they name, and counts the records left out beyond
// their head.
func assembleSessions(ctx context.Context, tx pgx.Tx, a *evidence.Assembler, logID string) (int, error) {
	rows, _ := tx.Query(ctx, `SELECT session, head FROM evidence_heads WHERE log_id = $1 ORDER BY session`, logID)
	heads := map[string]uint64{}
	var id string
	var raw []byte
	if _, err := pgx.ForEachRow(rows, []any{&id, &raw}, func() error {
		var h struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return fmt.Errorf("head of session %s: %w", id, err)
		}
		heads[id] = h.Seq
		return a.Head(id, raw)
	}); err != nil {
		return 0, err
	}
	ahead := 0
	blobs := map[[2]string]bool{}
	rows, _ = tx.Query(ctx, `SELECT session, seq, record FROM evidence_records WHERE log_id = $1 ORDER BY session, seq`, logID)
	var seq int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &seq, &raw}, func() error {
		if top, ok := heads[id]; !ok || uint64(seq) > top {
			ahead++
			return nil
		}
		for _, b := range evidence.BlobsOf(raw) {
			blobs[[2]string{b.Kind, b.SHA256}] = true
		}
		return a.Record(id, uint64(seq), raw)
	}); err != nil {
		return 0, err
	}
	var kinds, shas []string
	for k := range blobs {
		kinds, shas = append(kinds, k[0]), append(shas, k[1])
	}
	rows, _ = tx.Query(ctx, `SELECT b.kind, b.sha256, b.data FROM evidence_blobs b
		JOIN unnest($1::text[], $2::text[]) AS w(kind, sha256) ON w.kind = b.kind AND w.sha256 = b.sha256`, kinds, shas)
	var kind, sha string
	_, err := pgx.ForEachRow(rows, []any{&kind, &sha, &raw}, func() error { return a.Blob(kind, sha, raw) })
	return ahead, err
}

// LogOf is the id of the log that holds session ("" when none does); a
// session id in two logs is an error, not a guess.
func (s *Store) LogOf(ctx context.Context, session string) (string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT DISTINCT log_id FROM evidence_heads WHERE session = $1 ORDER BY log_id LIMIT 2`, session)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("find the log of session %s: %w", session, err)
	}
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("session %s is in more than one log of the central store (%s, %s): two files made the same session id", session, ids[0], ids[1])
}

// Holdings is what the store holds of log logID beyond what Shipped says,
// for a check that it holds sessions whole: the number of records of each
// session, and which of blobs (kind + "/" + sha256) it has.
func (s *Store) Holdings(ctx context.Context, logID string, blobs []string) (counts map[string]int64, have map[string]bool, err error) {
	counts, have = map[string]int64{}, map[string]bool{}
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT session, count(*) FROM evidence_records WHERE log_id = $1 GROUP BY session`, logID)
		var id string
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { counts[id] = n; return nil }); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT kind || '/' || sha256 FROM evidence_blobs WHERE kind || '/' || sha256 = ANY($1)`, nonNilStrings(blobs))
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error { have[id] = true; return nil })
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read what the central store holds of log %s: %w", logID, err)
	}
	return counts, have, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
