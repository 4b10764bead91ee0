package central

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/anchor"
)

// anchorLock is the advisory lock the fleet's anchorer holds: one replica
// at a time appends to the transparency log.
const anchorLock = 0x62675f616e63686f // "bg_ancho"

// Anchorer appends a leaf for every record of the central store to the
// fleet's transparency log (evidence/anchor), keeps each record's leaf
// index, publishes the signed checkpoints in the store and, with a Mirror,
// copies the log to an S3 bucket under Object Lock. Of the replicas that
// run one, the one holding a PostgreSQL advisory lock anchors; the others
// wait to take over. Each may have a log directory of its own: one that
// takes over with a directory behind the bucket's copy (empty, or left
// from an earlier turn) restores the log from the bucket first
// (anchor.Log.Restore), and anchors nothing when the copy does not verify
// or the directory diverges from it.
type Anchorer struct {
	Store  *Store
	Log    *anchor.Log
	Mirror *anchor.Mirror // nil: no copy
	// Restore is where the log is restored from when the directory is
	// behind it on taking over; nil means the Mirror's bucket (none
	// without a Mirror). A restore needs the Verifier.
	Restore anchor.Source
	// Verifier checks the checkpoints published in the store with the
	// log's own key: only those count (nil: none is checked, none counts).
	Verifier *anchor.Verifier
	Logger   *slog.Logger
	// Every is how often it looks for records to anchor (DefaultAnchorEvery).
	Every time.Duration
	// Batch bounds the records of one append (DefaultAnchorBatch).
	Batch int
	// RoundWait bounds one round of anchoring and copying, and a
	// takeover's copy (DefaultAnchorRoundWait; at most MaxRoundWait). A
	// replica that takes the lock waits out the previous holder's round
	// before it reads or writes the bucket (the anchorer's turn).
	RoundWait time.Duration
}

// Defaults of an Anchorer.
const (
	DefaultAnchorEvery     = time.Second
	DefaultAnchorBatch     = 5000
	DefaultAnchorRoundWait = 2 * time.Minute
	// MaxRoundWait is the longest round an anchorer may be given (the
	// anchor file's round_timeout).
	MaxRoundWait = 10 * time.Minute
)

// turnDrain is how long past a round's bound the holder's last writes may
// still land (a request the bucket had whole as the round was cut).
const turnDrain = 15 * time.Second

// Run anchors while it holds the lock, and waits for it while another
// replica does, until ctx ends.
func (a *Anchorer) Run(ctx context.Context) {
	logger := a.logger()
	every := cmp.Or(a.Every, DefaultAnchorEvery)
	wait := every
	for ctx.Err() == nil {
		err := a.whileLeader(ctx, every)
		switch {
		case err == nil:
			wait = every
		case ctx.Err() == nil:
			// A copy that does not verify stays so: each try reads it
			// whole, so the tries slow down (and another replica may
			// take the lock meanwhile).
			logger.Warn("anchoring evidence stopped; trying again", "error", err, "in", wait.String())
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if err != nil {
			wait = min(2*wait, max(every, maxRetryWait))
		}
	}
}

// maxRetryWait bounds the wait between tries of an anchorer that failed.
const maxRetryWait = time.Minute

func (a *Anchorer) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// whileLeader takes the anchorer's lock on a connection of its own (when
// no other replica holds it) and anchors until the connection or ctx
// ends; it returns at once when another replica holds the lock.
func (a *Anchorer) whileLeader(ctx context.Context, every time.Duration) error {
	conn, err := a.Store.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var held bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(anchorLock)).Scan(&held); err != nil {
		return err
	}
	if !held {
		return nil
	}
	defer func() {
		// A lock left on a pooled connection would keep every other
		// replica from anchoring: give it back, or drop the connection.
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(anchorLock)); err != nil {
			conn.Conn().Close(context.Background())
		}
	}()
	// The replica that held the lock before may be in a round still (it
	// lost the lock, not its process): it is waited out before the bucket
	// is read, or two anchorers' checkpoints would fork the copy.
	if err := a.awaitTurn(ctx, conn); err != nil {
		return err
	}
	// Whatever ends this turn, its writes end with it: the next holder
	// waits out only their drain.
	t := &turn{conn: conn, pool: a.Store.pool}
	defer t.end()
	roundWait := cmp.Or(a.RoundWait, DefaultAnchorRoundWait)
	if err := a.takeOver(ctx, t, roundWait); err != nil {
		return err
	}
	for {
		if err := a.checkLog(ctx, conn); err != nil {
			return err
		}
		if err := t.claim(ctx, roundWait); err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, roundWait)
		n, err := a.AnchorOnce(actx, conn)
		cancel()
		if err != nil {
			return err
		}
		if err := t.end(); err != nil {
			return err
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(every):
			}
		}
		// The lock is the connection's: while it answers, it is held.
		if err := conn.Ping(ctx); err != nil {
			return err
		}
	}
}

// A turn is the lock holder's claim on the bucket: until its end, by the
// store's clock, the holder may still write there, and the next holder
// waits it out (awaitTurn). Only the lock's holder claims, once the turn
// of the holder before it is over and what it did before is over too.
// Ending a turn touches only the end it claimed: a holder whose
// connection died (its lock with it, as when it is stopped in the middle
// of a query) ends its own claim over another connection, and never
// shortens the claim of a holder after it.
type turn struct {
	conn  *pgxpool.Conn
	pool  *pgxpool.Pool
	until time.Time // the end it claimed last; zero before a claim
}

// claim sets the turn to end d (and turnDrain) from now: the bound of
// what the holder does next.
func (t *turn) claim(ctx context.Context, d time.Duration) error {
	if err := t.conn.QueryRow(ctx, `INSERT INTO evidence_anchor_turn (one, until) VALUES (true, clock_timestamp() + $1 * interval '1 millisecond')
		ON CONFLICT (one) DO UPDATE SET until = EXCLUDED.until RETURNING until`, (d + turnDrain).Milliseconds()).Scan(&t.until); err != nil {
		return fmt.Errorf("claim the anchorer's turn: %w", err)
	}
	return nil
}

// end ends the turn once what the holder wrote is done: the next holder
// waits out only turnDrain.
func (t *turn) end() error {
	if t.until.IsZero() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var q querier = t.conn
	if t.conn.Conn().IsClosed() {
		q = t.pool
	}
	if _, err := q.Exec(ctx, `UPDATE evidence_anchor_turn SET until = least(until, clock_timestamp() + $1 * interval '1 millisecond') WHERE until = $2`, turnDrain.Milliseconds(), t.until); err != nil {
		return fmt.Errorf("end the anchorer's turn: %w", err)
	}
	t.until = time.Time{}
	return nil
}

// awaitTurn waits, by the store's clock, until the last holder's turn is
// over: until then it may still write to the bucket. No honest holder
// claims more than MaxRoundWait and turnDrain ahead: a turn further off
// was written by other hands, and is waited only that long.
func (a *Anchorer) awaitTurn(ctx context.Context, q querier) error {
	var ms float64
	if err := q.QueryRow(ctx, `SELECT extract(epoch FROM least(coalesce(max(until), clock_timestamp()), clock_timestamp() + interval '1 day') - clock_timestamp()) * 1000 FROM evidence_anchor_turn`).Scan(&ms); err != nil {
		return fmt.Errorf("read the anchorer's turn: %w", err)
	}
	if ms <= 0 {
		return nil
	}
	if most := MaxRoundWait + turnDrain; ms > float64(most.Milliseconds()) {
		a.logger().Error("the anchorer's turn in the store ends further off than any anchorer claims: written by other hands; waiting the longest turn instead", "until_ms", ms)
		ms = float64(most.Milliseconds())
	}
	wait := time.Duration(ms) * time.Millisecond
	a.logger().Info("took the anchorer's lock; waiting out the previous holder's turn before touching the transparency log's copy", "wait", wait.Round(time.Millisecond).String())
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// takeOver readies the log for the anchorer that just took the lock:
// restores it from its copy when the directory is behind the copy, checks
// it against the fleet's published checkpoints, lets go of the leaf
// indexes of records the log does not hold (appended by an earlier
// anchorer after its last copy, lost with its directory: they are
// anchored again) and copies to the bucket what the directory holds
// beyond it, refusing a directory that does not extend the bucket's copy.
func (a *Anchorer) takeOver(ctx context.Context, t *turn, roundWait time.Duration) error {
	q := t.conn
	logger := a.logger()
	src := a.Restore
	if a.Mirror != nil {
		// Another anchorer may have copied since this one last did.
		a.Mirror.Forget()
		if src == nil {
			src = a.Mirror.Source()
		}
	}
	if src != nil {
		if a.Verifier == nil {
			return errors.New("restoring the transparency log from its copy needs the log's verifier: not anchoring")
		}
		start := time.Now()
		stats, err := a.Log.Restore(ctx, src, a.Verifier)
		if err != nil {
			logger.Error("the transparency log is not restored from its copy: the copy does not verify, or the log's directory diverges from it; not anchoring", "dir", a.Log.Dir(), "error", err)
			return fmt.Errorf("restore the transparency log in %s from its copy: %w", a.Log.Dir(), err)
		}
		if stats.Restored {
			logger.Info("restored the transparency log from its copy", "dir", a.Log.Dir(), "leaves", stats.To, "had", stats.From,
				"bundles", stats.Bundles, "tiles", stats.Tiles, "bytes", stats.Bytes, "took", time.Since(start), "moved_aside", stats.MovedAside, "removed_aside", stats.RemovedAside)
		}
	}
	if err := a.checkLog(ctx, q); err != nil {
		return err
	}
	size, err := a.Log.Size(ctx)
	if err != nil {
		return fmt.Errorf("the transparency log's size: %w", err)
	}
	if err := a.reanchor(ctx, q, size); err != nil {
		return err
	}
	if a.Mirror != nil {
		// The only write of a takeover: in a turn, as a round's are.
		if err := t.claim(ctx, roundWait); err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, roundWait)
		defer cancel()
		if _, err := a.Mirror.Sync(sctx, a.Log.Source()); err != nil {
			return fmt.Errorf("copy the log to its bucket: %w", err)
		}
	}
	return nil
}

// reanchor appends again the records anchored in leaves the log does not
// hold (size and beyond: appended after the last copy, by an anchorer
// whose directory was lost), in the order that anchorer gave them, as
// long as they run on without a gap from size (it kept an index for every
// leaf it copied): the log then grows as that anchorer's did, so that what
// it may still have been copying as it lost the lock is the same tree.
// The rest (past a gap, a leaf twice, a row no evidence file writes, more
// than reanchorMost) are let go, to be anchored again in the store's
// order (AnchorOnce sets aside what cannot be).
func (a *Anchorer) reanchor(ctx context.Context, q querier, size uint64) error {
	rows, _ := q.Query(ctx, `SELECT log_id, session, seq, hash, leaf FROM evidence_records WHERE leaf >= $1 ORDER BY leaf, n LIMIT $2`, int64(size), reanchorMost)
	type lost struct { // in the query's column order
		Log, Session string
		Seq          int64
		Hash         string
		Leaf         int64
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[lost])
	if err != nil {
		return fmt.Errorf("read the records anchored beyond the log: %w", err)
	}
	var run []lost
	var leaves [][]byte
	for _, r := range all {
		leaf := evidence.AnchorLeaf(r.Log, r.Session, uint64(r.Seq), r.Hash)
		if r.Leaf != int64(size)+int64(len(run)) || !anchorable(r.Session, r.Hash, leaf) {
			break
		}
		run, leaves = append(run, r), append(leaves, leaf)
	}
	batch := cmp.Or(a.Batch, DefaultAnchorBatch)
	for from := 0; from < len(run); from += batch {
		to := min(from+batch, len(run))
		idx, err := a.Log.Append(ctx, leaves[from:to])
		if err != nil {
			return fmt.Errorf("append again the records anchored beyond the log: %w", err)
		}
		var b pgx.Batch
		for i, r := range run[from:to] {
			b.Queue(`UPDATE evidence_records SET leaf = $4 WHERE log_id = $1 AND session = $2 AND seq = $3`, r.Log, r.Session, r.Seq, int64(idx[i]))
		}
		if err := q.SendBatch(ctx, &b).Close(); err != nil {
			return fmt.Errorf("keep the leaf indexes of the records anchored again: %w", err)
		}
	}
	tag, err := q.Exec(ctx, `UPDATE evidence_records SET leaf = NULL WHERE leaf >= $1`, int64(size)+int64(len(run)))
	if err != nil {
		return fmt.Errorf("let go of leaf indexes beyond the log: %w", err)
	}
	if len(run) > 0 || tag.RowsAffected() > 0 {
		a.logger().Warn("records anchored in leaves the transparency log did not hold (appended after its last copy, by an anchorer whose directory was lost) are anchored again: in the same order where they ran on from the log, else in the store's",
			"log_size", size, "same_order", len(run), "store_order", tag.RowsAffected())
	}
	return nil
}

// reanchorMost bounds the records a takeover appends again in the lost
// anchorer's order; the rest are anchored again in the store's.
const reanchorMost = 100_000

// anchorable reports whether a record's leaf can be anchored: no evidence
// file writes one that cannot (it was put in the store by other hands).
func anchorable(session, hash string, leaf []byte) bool {
	return len(session) <= evidence.MaxSessionIDLen && len(hash) == 64 && len(leaf) <= anchor.MaxLeaf
}

// checkLog refuses to anchor into a log directory behind the fleet's
// published checkpoints: not the fleet's log (a directory that is not
// shared, or was lost), whose leaves would make a second log under the
// same key.
func (a *Anchorer) checkLog(ctx context.Context, q querier) error {
	if a.Verifier == nil {
		return nil
	}
	// The largest published checkpoint that verifies with the log's key
	// counts: rows written by other hands, however many and however
	// large, neither stop the anchoring nor hide a lost directory.
	rows, err := q.Query(ctx, `SELECT size, checkpoint FROM evidence_checkpoints ORDER BY size DESC`)
	if err != nil {
		return fmt.Errorf("read the fleet's published checkpoints: %w", err)
	}
	var published uint64
	forged := 0
	for rows.Next() {
		var size int64
		var raw []byte
		if err := rows.Scan(&size, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("read the fleet's published checkpoints: %w", err)
		}
		if cp, err := a.Verifier.Checkpoint(raw); err == nil && cp.Size == uint64(size) {
			published = cp.Size
			break
		}
		forged++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the fleet's published checkpoints: %w", err)
	}
	if forged > 0 {
		a.logger().Error("checkpoints in the store's evidence_checkpoints do not verify with the log's key: written by other hands, ignored", "rows", forged)
	}
	cp, err := a.Log.Signed(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if cp.Size < published {
		return fmt.Errorf("the transparency log in %s holds %d leaves, the fleet published a checkpoint of size %d: it is not the fleet's log (and no copy of the log restored it); not anchoring", a.Log.Dir(), cp.Size, published)
	}
	return nil
}

// AnchorOnce anchors the records without a leaf (at most Batch of them,
// oldest first), stores their leaf indexes, waits for a checkpoint that
// covers them, publishes it in the store and mirrors the log; it returns
// how many it anchored. conn must hold the anchorer's lock (nil: the
// caller takes care that nobody else anchors, as tests do).
func (a *Anchorer) AnchorOnce(ctx context.Context, conn *pgxpool.Conn) (int, error) {
	q := querier(a.Store.pool)
	if conn != nil {
		q = conn
	}
	rows, _ := q.Query(ctx, `SELECT log_id, session, seq, hash FROM evidence_records WHERE leaf IS NULL ORDER BY n LIMIT $1`, cmp.Or(a.Batch, DefaultAnchorBatch))
	type key struct {
		log, session string
		seq          int64
	}
	var keys, bad []key
	var leaves [][]byte
	var k key
	var hash string
	if _, err := pgx.ForEachRow(rows, []any{&k.log, &k.session, &k.seq, &hash}, func() error {
		leaf := evidence.AnchorLeaf(k.log, k.session, uint64(k.seq), hash)
		if !anchorable(k.session, hash, leaf) {
			// No file writes such a record: one put in the store by
			// other hands. It must not stall the fleet's anchoring; it
			// stays unanchored, which the auditor sees.
			bad = append(bad, k)
			return nil
		}
		keys = append(keys, k)
		leaves = append(leaves, leaf)
		return nil
	}); err != nil {
		return 0, fmt.Errorf("read the records to anchor: %w", err)
	}
	for _, k := range bad {
		a.logger().Error("a record in the central store cannot be anchored (no evidence file writes one like it): left unanchored", "log", k.log, "seq", k.seq)
		if _, err := q.Exec(ctx, `UPDATE evidence_records SET leaf = -1 WHERE log_id = $1 AND session = $2 AND seq = $3`, k.log, k.session, k.seq); err != nil {
			return 0, fmt.Errorf("set aside a record that cannot be anchored: %w", err)
		}
	}
	if len(leaves) > 0 {
		idx, err := a.Log.Append(ctx, leaves)
		if err != nil {
			return 0, fmt.Errorf("append to the transparency log: %w", err)
		}
		var b pgx.Batch
		for i, k := range keys {
			b.Queue(`UPDATE evidence_records SET leaf = $4 WHERE log_id = $1 AND session = $2 AND seq = $3`, k.log, k.session, k.seq, int64(idx[i]))
		}
		if err := q.SendBatch(ctx, &b).Close(); err != nil {
			// The leaves are in the log; a record whose index was not
			// kept is anchored again (a leaf twice is harmless).
			return 0, fmt.Errorf("keep the leaf indexes: %w", err)
		}
	}
	if err := a.publish(ctx, q); err != nil {
		return 0, err
	}
	return len(leaves), nil
}

// publish mirrors the log and then stores the checkpoint covering
// everything appended, when it is new.
func (a *Anchorer) publish(ctx context.Context, q querier) error {
	cp, err := a.Log.Signed(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// The copy first: a checkpoint the store publishes is one the bucket
	// has, so an auditor never finds the store ahead of the copy.
	if a.Mirror != nil {
		if _, err := a.Mirror.Sync(ctx, a.Log.Source()); err != nil {
			return fmt.Errorf("copy the log to its bucket: %w", err)
		}
	}
	if _, err := q.Exec(ctx, `INSERT INTO evidence_checkpoints (size, checkpoint) VALUES ($1, $2) ON CONFLICT DO NOTHING`, int64(cp.Size), cp.Raw); err != nil {
		return fmt.Errorf("publish checkpoint of size %d: %w", cp.Size, err)
	}
	return nil
}

// querier is what AnchorOnce needs of a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}
