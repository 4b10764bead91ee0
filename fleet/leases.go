package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Leases are the MCP sessions open across the fleet, one row of
// fleet_sessions each: its lease id, the MCP session it became, the
// replica and its evidence log, the agent, and when the lease expires
// unless renewed. Every session is opened under one advisory transaction
// lock, so that two replicas never both take the last place; expired
// leases are swept (ended.go) before the count, so a killed replica's
// sessions stop counting once their leases run out. Renewals and sweeps
// take the lock too.
//
// Store implements it; the daemon's front (daemon.Config.Leases) uses it.

// sessionsLock is the advisory lock key under which sessions are counted
// and leased.
const sessionsLock = 0x62675f7365737373 // "bg_sesss"

// Reserve takes a lease for a session agent opens, unless the fleet has
// perAgent sessions of agent open, or most in all: then it takes none and
// returns "" with the counts. Expired leases are swept first (Sweep), and
// ended, leases of sessions this replica saw end, dropped, in the same
// transaction. total and mine are the fleet's open sessions, in all and
// of agent, before this one.
func (s *Store) Reserve(ctx context.Context, agent string, most, perAgent int, ended []string) (lease string, total, mine int, err error) {
	lease = newLeaseID()
	b := &pgx.Batch{}
	// One round trip, one implicit transaction: the lock is held until
	// its end.
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(sweepSQL, s.replica)
	b.Queue(dropSQL, nonNil(ended))
	b.Queue(`SELECT count(*), count(*) FILTER (WHERE agent = $1) FROM fleet_sessions`, agent)
	b.Queue(`INSERT INTO fleet_sessions (lease, replica, agent, log_id, expires)
		SELECT $1, $2, $3, $7, clock_timestamp() + $4 * interval '1 microsecond'
		WHERE (SELECT count(*) FROM fleet_sessions) < $5
		  AND (SELECT count(*) FROM fleet_sessions WHERE agent = $3) < $6`,
		lease, s.replica, agent, s.leaseFor.Microseconds(), most, perAgent, s.nullLogID())
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return "", 0, 0, storeErr("lock the session leases", err)
	}
	if _, err := br.Exec(); err != nil {
		return "", 0, 0, storeErr("record the end of the sessions of expired leases", err)
	}
	if _, err := br.Exec(); err != nil {
		return "", 0, 0, storeErr("drop ended session leases", err)
	}
	if err := br.QueryRow().Scan(&total, &mine); err != nil {
		return "", 0, 0, storeErr("count the session leases", err)
	}
	tag, err := br.Exec()
	if err != nil {
		return "", 0, 0, storeErr("take a session lease", err)
	}
	if err := br.Close(); err != nil {
		return "", 0, 0, storeErr("take a session lease", err)
	}
	if tag.RowsAffected() != 1 {
		return "", total, mine, nil
	}
	return lease, total, mine, nil
}

// Bind notes the MCP session a lease became, for operators reading the
// table.
func (s *Store) Bind(ctx context.Context, lease, session string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE fleet_sessions SET session = $2 WHERE lease = $1`, lease, session); err != nil {
		return storeErr("note a lease's session", err)
	}
	return nil
}

// Renew extends the leases of live (lease id -> agent) by LeaseFor from
// now, taking again one that expired meanwhile (its session is open, so it
// counts), and drops the leases of ended. A lease taken again after a
// sweep recorded its session's end (Sweep) gets its session back from
// that record, which is deleted: the session went on, its replica being
// alive, and its own records tell how (ended.go).
func (s *Store) Renew(ctx context.Context, live map[string]string, ended []string) error {
	ids := slices.Sorted(maps.Keys(live))
	agents := make([]string, len(ids))
	for i, id := range ids {
		agents[i] = live[id]
	}
	b := &pgx.Batch{}
	// Under the lock a sweep holds: a sweep that ends one of these leases
	// commits before the lease is taken again, so its record is seen and
	// deleted here, or after, finding the lease renewed.
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(dropSQL, nonNil(ended))
	b.Queue(`WITH back AS (DELETE FROM fleet_ended WHERE lease = ANY($1) RETURNING lease, session, evidence)
		INSERT INTO fleet_sessions (lease, session, replica, agent, log_id, expires, evidence)
		SELECT u.l, back.session, $2, u.a, $5, clock_timestamp() + $4 * interval '1 microsecond', coalesce(back.evidence, '{}')
		FROM unnest($1::text[], $3::text[]) AS u(l, a) LEFT JOIN back ON back.lease = u.l
		ON CONFLICT (lease) DO UPDATE SET expires = EXCLUDED.expires,
			session = coalesce(fleet_sessions.session, EXCLUDED.session)`,
		ids, s.replica, agents, s.leaseFor.Microseconds(), s.nullLogID())
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return storeErr("renew the session leases", err)
	}
	return nil
}

// Drop deletes leases (sessions that ended, or were never opened), and
// any record of their sessions' end a sweep made while their replica was
// cut off from the store.
func (s *Store) Drop(ctx context.Context, leases []string) error {
	if len(leases) == 0 {
		return nil
	}
	// Under the sessions lock, as a sweep runs: a drop that ran beside a
	// sweep taking the same lease would find the lease gone and leave the
	// sweep's record of an end its live replica made itself.
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(dropSQL, leases)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return storeErr("drop session leases", err)
	}
	return nil
}

// dropSQL deletes the leases $1 and the sweeps' records of them: their
// replica, alive, ended their sessions itself (a prepared statement takes
// one command: the records' delete rides in a CTE).
const dropSQL = `WITH marks AS (DELETE FROM fleet_ended WHERE lease = ANY($1))
	DELETE FROM fleet_sessions WHERE lease = ANY($1)`

// Sessions counts the sessions the fleet's leases hold, in all, now.
func (s *Store) Sessions(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM fleet_sessions WHERE expires >= clock_timestamp()`).Scan(&n); err != nil {
		return 0, storeErr("count the session leases", err)
	}
	return n, nil
}

// newLeaseID is a lease's random id.
func newLeaseID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// nullLogID is the log id leases carry: NULL when none was given.
func (s *Store) nullLogID() *string {
	if s.logID == "" {
		return nil
	}
	return &s.logID
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Note notes that the MCP session of lease opened session evidence of the
// replica's log (one per manifest it calls), so that the record of its
// end, if its lease expires (Sweep), names the log's sessions it ends.
// A lease already swept has its record noted instead.
func (s *Store) Note(ctx context.Context, lease, evidence string) error {
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(`UPDATE fleet_sessions SET evidence = array_append(evidence, $2) WHERE lease = $1 AND NOT $2 = ANY(evidence)`, lease, evidence)
	b.Queue(`UPDATE fleet_ended SET evidence = array_append(evidence, $2) WHERE lease = $1 AND NOT $2 = ANY(evidence)`, lease, evidence)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return storeErr("note a session's evidence", err)
	}
	return nil
}
