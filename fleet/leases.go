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
// replica and agent, and when the lease expires unless renewed. Every
// session is opened under one advisory transaction lock, so that two
// replicas never both take the last place; an expired lease is deleted
// before the count, so a killed replica's sessions stop counting once
// their leases run out.
//
// Store implements it; the daemon's front (daemon.Config.Leases) uses it.

// sessionsLock is the advisory lock key under which sessions are counted
// and leased.
const sessionsLock = 0x62675f7365737373 // "bg_sesss"

// Reserve takes a lease for a session agent opens, unless the fleet has
// perAgent sessions of agent open, or most in all: then it takes none and
// returns "" with the counts. ended are leases of sessions this replica
// saw end: they are dropped first, in the same transaction. total and
// mine are the fleet's open sessions, in all and of agent, before this
// one.
func (s *Store) Reserve(ctx context.Context, agent string, most, perAgent int, ended []string) (lease string, total, mine int, err error) {
	lease = newLeaseID()
	b := &pgx.Batch{}
	// One round trip, one implicit transaction: the lock is held until
	// its end.
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock))
	b.Queue(`DELETE FROM fleet_sessions WHERE expires < clock_timestamp() OR lease = ANY($1)`, nonNil(ended))
	b.Queue(`SELECT count(*), count(*) FILTER (WHERE agent = $1) FROM fleet_sessions`, agent)
	b.Queue(`INSERT INTO fleet_sessions (lease, replica, agent, expires)
		SELECT $1, $2, $3, clock_timestamp() + $4 * interval '1 microsecond'
		WHERE (SELECT count(*) FROM fleet_sessions) < $5
		  AND (SELECT count(*) FROM fleet_sessions WHERE agent = $3) < $6`,
		lease, s.replica, agent, s.leaseFor.Microseconds(), most, perAgent)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return "", 0, 0, storeErr("lock the session leases", err)
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
// counts), and drops the leases of ended.
func (s *Store) Renew(ctx context.Context, live map[string]string, ended []string) error {
	ids := slices.Sorted(maps.Keys(live))
	agents := make([]string, len(ids))
	for i, id := range ids {
		agents[i] = live[id]
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM fleet_sessions WHERE lease = ANY($1)`, nonNil(ended))
	b.Queue(`INSERT INTO fleet_sessions (lease, replica, agent, expires)
		SELECT l, $2, a, clock_timestamp() + $4 * interval '1 microsecond' FROM unnest($1::text[], $3::text[]) AS u(l, a)
		ON CONFLICT (lease) DO UPDATE SET expires = EXCLUDED.expires`,
		ids, s.replica, agents, s.leaseFor.Microseconds())
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return storeErr("renew the session leases", err)
	}
	return nil
}

// Drop deletes leases (sessions that ended, or were never opened).
func (s *Store) Drop(ctx context.Context, leases []string) error {
	if len(leases) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM fleet_sessions WHERE lease = ANY($1)`, leases); err != nil {
		return storeErr("drop session leases", err)
	}
	return nil
}

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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
