package fleet_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/fleet"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// leaseFor is the lease of the tests that wait for one to expire.
const leaseFor = time.Second

// bound takes a lease of agent on s and binds it to MCP session session.
func bound(t *testing.T, s *fleet.Store, agent, session string) string {
	t.Helper()
	ctx := context.Background()
	l, _, _, err := s.Reserve(ctx, agent, 100, 100, nil)
	if err != nil || l == "" {
		t.Fatalf("lease of %s: %q, %v", session, l, err)
	}
	if err := s.Bind(ctx, l, session); err != nil {
		t.Fatal(err)
	}
	return l
}

// waitExpired waits until no lease of the store is live (nobody renews
// them), at most a minute.
func waitExpired(t *testing.T, s *fleet.Store) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := s.Sessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lease(s) nobody renews still live after a minute (lease of %s)", n, leaseFor)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readEnded is fleet.ReadEnded of log logID in database db.
func readEnded(t *testing.T, c *pglab.Cluster, db, logID string) []fleet.Ended {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), c.URLWithPassword(db))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got, err := fleet.ReadEnded(context.Background(), pool, logID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// When a replica stops renewing its leases, their sessions are recorded
// as ended exactly once in its log, with the replica, agent, expiry and
// reason, however many replicas sweep at once; a lease never bound to a
// session, or of a replica without a log, is dropped without a record.
func TestSweepRecordsADeadReplicasSessionsOnce(t *testing.T) {
	c, db := pglab.Shared(t)
	dead := replicasOn(t, c, db, 1, fleet.Options{LeaseFor: leaseFor, LogID: "log-r1"})[0]
	nolog := replicasOn(t, c, db, 1, fleet.Options{Replica: "x", LeaseFor: leaseFor})[0]
	sweepers := replicasOn(t, c, db, 3, fleet.Options{Replica: "s", LeaseFor: leaseFor, LogID: "log-other"})
	leases := map[string]string{}
	for i, agent := range []string{"alice", "alice", "bob"} {
		s := fmt.Sprintf("r1-mcp-%d", i)
		leases[s] = bound(t, dead, agent, s)
	}
	if l, _, _, err := dead.Reserve(context.Background(), "carol", 100, 100, nil); err != nil || l == "" {
		t.Fatalf("an unbound lease: %q, %v", l, err) // a session being opened as the replica died
	}
	bound(t, nolog, "dave", "r1-mcp-nolog")
	waitExpired(t, dead)
	waitExpired(t, nolog)

	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := 0
	start := make(chan struct{})
	for i := range 12 {
		wg.Go(func() {
			<-start
			n, err := sweepers[i%3].Sweep(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			recorded += n
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if recorded != 3 {
		t.Errorf("the sweeps recorded %d ends, want 3 (one per bound lease of the log)", recorded)
	}
	got := readEnded(t, c, db, "log-r1")
	if len(got) != 3 {
		t.Fatalf("records of log-r1: %+v, want 3", got)
	}
	for _, e := range got {
		if e.Lease != leases[e.Session] || e.Replica != "r1" || e.LogID != "log-r1" || !strings.HasPrefix(e.SweptBy, "sr") ||
			e.Reason != fmt.Sprintf(fleet.EndedReason, "r1") || e.Expired.IsZero() || e.Swept.Before(e.Expired) {
			t.Errorf("record %+v", e)
		}
	}
	if agents := got[0].Agent + got[1].Agent + got[2].Agent; strings.Count(agents, "alice") != 2 || strings.Count(agents, "bob") != 1 {
		t.Errorf("agents of the records: %q", agents)
	}
	if n := c.SQL(t, db, "SELECT count(*) FROM fleet_sessions"); n != "0" {
		t.Errorf("%s lease(s) left after the sweep, want none", n)
	}
	if n := c.SQL(t, db, "SELECT count(*) FROM fleet_ended"); n != "3" {
		t.Errorf("%s records of ended sessions in all, want 3 (none for the unbound lease or the one without a log)", n)
	}
}

// A session opening sweeps too: its Reserve records the ends in the same
// transaction as it counts.
func TestReserveSweeps(t *testing.T) {
	c, db := pglab.Shared(t)
	stores := replicasOn(t, c, db, 2, fleet.Options{LeaseFor: leaseFor, LogID: "log"})
	bound(t, stores[0], "alice", "r1-mcp")
	waitExpired(t, stores[0])
	if l, total, _, err := stores[1].Reserve(context.Background(), "bob", 1, 1, nil); err != nil || l == "" || total != 0 {
		t.Fatalf("a session after the other replica's expired: %q, %d open, %v", l, total, err)
	}
	if got := readEnded(t, c, db, "log"); len(got) != 1 || got[0].Session != "r1-mcp" || got[0].SweptBy != "r2" {
		t.Fatalf("records after a Reserve: %+v", got)
	}
}

// A replica cut off from the store past its lease, whose session's end a
// sweep recorded meanwhile, takes the lease back as it renews: the record
// is deleted and the lease has its session again; and a lease it drops
// (a session it ended) takes its record with it.
func TestRenewAfterExpiryDeletesTheRecord(t *testing.T) {
	c, db := pglab.Shared(t)
	stores := replicasOn(t, c, db, 2, fleet.Options{LeaseFor: leaseFor, LogID: "log"})
	cut, other := stores[0], stores[1]
	a := bound(t, cut, "alice", "r1-a")
	b := bound(t, cut, "bob", "r1-b")
	waitExpired(t, cut)
	ctx := context.Background()
	if n, err := other.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("sweep: %d, %v; want 2 recorded", n, err)
	}
	// Back: a's session is open, b's ended while the store was away.
	if err := cut.Renew(ctx, map[string]string{a: "alice"}, []string{b}); err != nil {
		t.Fatal(err)
	}
	if got := readEnded(t, c, db, "log"); len(got) != 0 {
		t.Errorf("records left after their replica came back: %+v", got)
	}
	if got := c.SQL(t, db, "SELECT lease || ' ' || session || ' ' || log_id || ' ' || replica FROM fleet_sessions"); got != a+" r1-a log r1" {
		t.Errorf("leases after the renewal: %q, want %q", got, a+" r1-a log r1")
	}
	if n, err := other.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("a sweep after the renewal: %d, %v; want nothing recorded", n, err)
	}
}

// schemaV1 is the fleet's tables as version 1 made them.
const schemaV1 = `
CREATE TABLE browsergate_schema (part text PRIMARY KEY, version integer NOT NULL);
INSERT INTO browsergate_schema VALUES ('fleet', 1);
CREATE TABLE fleet_sessions (lease text PRIMARY KEY, session text, replica text NOT NULL, agent text NOT NULL, expires timestamptz NOT NULL);
CREATE INDEX fleet_sessions_expires ON fleet_sessions (expires);
CREATE TABLE fleet_pacing (manifest text NOT NULL, host text NOT NULL, tat timestamptz NOT NULL, PRIMARY KEY (manifest, host));
CREATE INDEX fleet_pacing_tat ON fleet_pacing (tat);
INSERT INTO fleet_sessions VALUES ('old-live', 'r0-live', 'r0', 'alice', now() + interval '1 hour');
INSERT INTO fleet_sessions VALUES ('old-gone', 'r0-gone', 'r0', 'bob', now() - interval '1 hour');
INSERT INTO fleet_pacing VALUES ('shop', 'example.test', now());
`

// A store whose fleet tables are of version 1 is brought to version 2 as
// a replica opens it: its leases and schedule are kept, and an old lease
// (without a log) that expires is dropped without a record.
func TestMigrateFleetTablesFromV1(t *testing.T) {
	c, db := pglab.Shared(t)
	c.SQL(t, db, schemaV1)
	s := replicasOn(t, c, db, 1, fleet.Options{LogID: "log"})[0]
	if v := c.SQL(t, db, "SELECT version FROM browsergate_schema WHERE part = 'fleet'"); v != "2" {
		t.Fatalf("fleet tables of version %s after Open, want 2", v)
	}
	if got := c.SQL(t, db, "SELECT lease || ' ' || session || ' ' || coalesce(log_id, 'none') FROM fleet_sessions ORDER BY lease"); got != "old-gone r0-gone none\nold-live r0-live none" {
		t.Errorf("leases after the migration: %q", got)
	}
	if got := c.SQL(t, db, "SELECT count(*) FROM fleet_pacing"); got != "1" {
		t.Errorf("%s pacing rows after the migration, want 1", got)
	}
	if n, err := s.Sweep(context.Background()); err != nil || n != 0 {
		t.Errorf("sweep of an old lease without a log: %d recorded, %v", n, err)
	}
	if got := c.SQL(t, db, "SELECT string_agg(lease, ',') FROM fleet_sessions"); got != "old-live" {
		t.Errorf("leases after the sweep: %q, want old-live", got)
	}
	// A second replica opening finds version 2 and changes nothing.
	replicasOn(t, c, db, 1, fleet.Options{Replica: "b", LogID: "log2"})
	if got := c.SQL(t, db, "SELECT count(*) FROM fleet_sessions"); got != "1" {
		t.Errorf("%s leases after a second Open, want 1", got)
	}
}

// TestADropRacingASweepLeavesNoRecord: r1 (alive) ends its session and
// drops the lease just as r2's sweep takes the expired lease (after a
// store outage, say): once both are done, no record says the session
// ended by its lease's expiry. (A drop outside the sessions lock read
// fleet_ended before the sweep committed, then found the lease gone.)
func TestADropRacingASweepLeavesNoRecord(t *testing.T) {
	c, db := pglab.Shared(t)
	r1 := replicasOn(t, c, db, 1, fleet.Options{LeaseFor: time.Second, LogID: "log-r1"})[0]
	r2 := replicasOn(t, c, db, 1, fleet.Options{Replica: "s", LeaseFor: time.Second, LogID: "log-r2"})[0]
	lease := bound(t, r1, "alice", "r1-mcp-1")
	waitExpired(t, r1)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, c.URLWithPassword(db))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Something holds the lease's row for a moment (any statement does).
	blocker, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(ctx, `SELECT 1 FROM fleet_sessions WHERE lease = $1 FOR UPDATE`, lease); err != nil {
		t.Fatal(err)
	}
	waiting := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var w int
			_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&w)
			if w >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d statements waiting, want %d", w, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	swept := make(chan error, 1)
	go func() { _, err := r2.Sweep(ctx); swept <- err }()
	waiting(1)
	dropped := make(chan error, 1)
	go func() { dropped <- r1.Drop(ctx, []string{lease}) }()
	waiting(2)
	if err := blocker.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if err := <-dropped; err != nil {
		t.Fatal(err)
	}
	if got := readEnded(t, c, db, "log-r1"); len(got) != 0 {
		t.Fatalf("r1 dropped the lease of a session it ended, and the fleet still records it as ended by the lease's expiry: %+v", got)
	}
}

// A lease's record of its end names the log's sessions its MCP session
// opened, noted before the lease expired or after it was swept; a lease
// taken back after a sweep keeps them.
func TestTheRecordNamesTheSessionsTheLeaseNoted(t *testing.T) {
	c, db := pglab.Shared(t)
	r := replicasOn(t, c, db, 1, fleet.Options{LeaseFor: leaseFor, LogID: "log-r1"})[0]
	sweeper := replicasOn(t, c, db, 1, fleet.Options{Replica: "s", LeaseFor: leaseFor})[0]
	ctx := context.Background()
	lease := bound(t, r, "alice", "mcp-1")
	for _, e := range []string{"ev-a", "ev-b", "ev-a"} {
		if err := r.Note(ctx, lease, e); err != nil {
			t.Fatal(err)
		}
	}
	waitExpired(t, r)
	if _, err := sweeper.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Note(ctx, lease, "ev-c"); err != nil { // noted after the sweep
		t.Fatal(err)
	}
	got := readEnded(t, c, db, "log-r1")
	if len(got) != 1 || strings.Join(got[0].Evidence, ",") != "ev-a,ev-b,ev-c" {
		t.Fatalf("the record: %+v, want it to name ev-a, ev-b and ev-c", got)
	}
	// Back from a cut: the lease is taken again with its sessions.
	if err := r.Renew(ctx, map[string]string{lease: "alice"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.SQL(t, db, `SELECT array_to_string(evidence, ',') FROM fleet_sessions WHERE lease = '`+lease+`'`); got != "ev-a,ev-b,ev-c" {
		t.Fatalf("the lease taken again notes %q, want ev-a,ev-b,ev-c", got)
	}
}
