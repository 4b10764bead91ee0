package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A replica that dies and never starts again (its disk lost) cannot record
// that its sessions ended: its evidence log, shipped to the store, ends
// with their last records. Its leases know when it stopped: each expires
// a --session-lease after its last renewal. A sweep (Sweep, and every
// Reserve) deletes the expired leases and, in the same statement, records
// for each one bound to an MCP session of a known log that the session
// ended, a row of fleet_ended keyed by log and session: exactly once,
// whichever replica sweeps first (sweeps run under the sessions lock, and
// a row already there is kept).
//
// The row is the fleet's statement, not a record of the log: it is in no
// hash chain, and the readers (evidence show and verify --store) show it
// beside the log's records as such. A replica that was only cut off from
// the store and renews the lease again deletes the row as it takes the
// lease back (Renew), as it does when it drops the lease of a session it
// ended (Drop): it is alive, and its own records, shipped once the store
// answers, tell how the session went on. A replica that starts again on
// its file records its own end of the sessions (evidence.RuleDaemonDied)
// under new leases: the row stays, and both are shown.

// EndedReason is the reason a sweep records, with the replica's name.
const EndedReason = "its replica %s stopped renewing its lease: killed, or cut off from the store; what its browser did after the last record the store holds is not known"

// sweepSQL deletes the expired leases and records the end of the MCP
// sessions of those that carry a log ($1: the sweeping replica).
const sweepSQL = `WITH gone AS (
		DELETE FROM fleet_sessions WHERE expires < clock_timestamp()
		RETURNING lease, session, replica, agent, log_id, expires, evidence)
	INSERT INTO fleet_ended (log_id, session, lease, replica, agent, expired, swept_by, reason, evidence)
	SELECT log_id, session, lease, replica, agent, expires, $1, format('` + EndedReason + `', replica), evidence
	FROM gone WHERE session IS NOT NULL AND log_id IS NOT NULL
	ON CONFLICT DO NOTHING`

// Sweep deletes the leases that expired and records the end of their
// sessions, returning how many it recorded. The front calls it on every
// renewal round, so that a dead replica's sessions are recorded as ended
// without any session being opened. An error changes nothing: the next
// round sweeps again.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(sweepSQL, s.replica)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return 0, storeErr("lock the session leases", err)
	}
	tag, err := br.Exec()
	if err != nil {
		return 0, storeErr("record the end of the sessions of expired leases", err)
	}
	if err := br.Close(); err != nil {
		return 0, storeErr("record the end of the sessions of expired leases", err)
	}
	return int(tag.RowsAffected()), nil
}

// Ended is the fleet's record that an MCP session of a log ended when its
// lease expired.
type Ended struct {
	LogID, Session, Lease, Replica, Agent string
	// Expired is when the lease expired: its replica's last renewal
	// plus the lease's term.
	Expired time.Time
	// Swept is when a replica (SweptBy) recorded it.
	Swept   time.Time
	SweptBy string
	Reason  string
	// Evidence are the sessions of the log the MCP session opened (one
	// per manifest it called), as its replica noted them (Note): the log's
	// sessions this record ends.
	Evidence []string
}

// ReadEnded lists the fleet's records of the sessions of log logID that
// ended as their leases expired, by expiry. A store without them (no
// replica with fleet tables of version 2 or later used it) has none.
// pool may be a reader's that may only SELECT.
func ReadEnded(ctx context.Context, pool *pgxpool.Pool, logID string) ([]Ended, error) {
	var there bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('fleet_ended') IS NOT NULL`).Scan(&there); err != nil {
		return nil, fmt.Errorf("read the fleet's records of ended sessions: %w", err)
	}
	if !there {
		return nil, nil
	}
	rows, _ := pool.Query(ctx, `SELECT log_id, session, lease, replica, agent, expired, swept, swept_by, reason, evidence
		FROM fleet_ended WHERE log_id = $1 ORDER BY expired, session`, logID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Ended])
	if err != nil {
		return nil, fmt.Errorf("read the fleet's records of ended sessions of log %s: %w", logID, err)
	}
	return out, nil
}
