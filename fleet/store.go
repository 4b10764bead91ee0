package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/evidence/central"
)

// schema are the steps that bring the fleet's tables (part "fleet" of the
// browsergate_schema table evidence/central keeps) to their version, one
// step a version (central.MigratePart); a store whose fleet tables are
// newer is refused. docs/fleet.md describes them.
var schema = []string{schemaV1, schemaV2}

// schemaV1 creates the leases and the pacing schedule.
const schemaV1 = `
CREATE TABLE fleet_sessions (
	lease   text PRIMARY KEY,
	session text,
	replica text NOT NULL,
	agent   text NOT NULL,
	expires timestamptz NOT NULL
);
CREATE INDEX fleet_sessions_expires ON fleet_sessions (expires);
CREATE TABLE fleet_pacing (
	manifest text NOT NULL,
	host     text NOT NULL,
	tat      timestamptz NOT NULL,
	PRIMARY KEY (manifest, host)
);
CREATE INDEX fleet_pacing_tat ON fleet_pacing (tat);
`

// schemaV2 gives each lease the evidence log of its replica and the
// sessions of that log its MCP session opened, and keeps the fleet's
// statements that a session ended as its lease expired (ended.go): one
// row per log and MCP session.
const schemaV2 = `
ALTER TABLE fleet_sessions ADD COLUMN log_id text;
ALTER TABLE fleet_sessions ADD COLUMN evidence text[] NOT NULL DEFAULT '{}';
CREATE TABLE fleet_ended (
	log_id  text NOT NULL,
	session text NOT NULL,
	lease   text NOT NULL UNIQUE,
	replica text NOT NULL,
	agent   text NOT NULL,
	expired timestamptz NOT NULL,
	swept   timestamptz NOT NULL DEFAULT clock_timestamp(),
	swept_by text NOT NULL,
	reason  text NOT NULL,
	evidence text[] NOT NULL DEFAULT '{}',
	PRIMARY KEY (log_id, session)
);
`

// DefaultLeaseFor is how long a session's lease lasts unless renewed: a
// replica renews its live sessions' leases every third of it, so a killed
// replica's sessions stop counting against the fleet's limits within
// this long of its death.
const DefaultLeaseFor = 30 * time.Second

// Options tune Open.
type Options struct {
	// Replica names the daemon in the leases it takes (for operators
	// reading the table; leases are told apart by their own ids).
	Replica string
	// LeaseFor is how long a lease lasts unless renewed (0:
	// DefaultLeaseFor).
	LeaseFor time.Duration
	// LogID is the id of the replica's evidence log (its file's
	// meta/log_id), carried by its leases: when one expires, the fleet
	// records the end of its session in that log (ended.go). "": the
	// sessions of its leases are not recorded as ended.
	LogID string
}

// Store is a connection pool to the fleet's tables.
type Store struct {
	pool     *pgxpool.Pool
	replica  string
	logID    string
	leaseFor time.Duration
}

// Open connects to the PostgreSQL database at rawURL and creates the fleet's
// tables if they are not there (central.MigratePart).
func Open(ctx context.Context, rawURL string, o *Options) (*Store, error) {
	if o == nil {
		o = &Options{}
	}
	if o.LeaseFor < 0 {
		return nil, fmt.Errorf("fleet: lease of %s: want a positive duration", o.LeaseFor)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fleet store: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("fleet store: %w", err)
	}
	s := &Store{pool: pool, replica: o.Replica, logID: o.LogID, leaseFor: o.LeaseFor}
	if s.leaseFor == 0 {
		s.leaseFor = DefaultLeaseFor
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("fleet store: %w", err)
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// LeaseFor is how long a lease lasts unless renewed.
func (s *Store) LeaseFor() time.Duration { return s.leaseFor }

func (s *Store) migrate(ctx context.Context) error {
	return central.MigratePart(ctx, s.pool, "fleet", schema...)
}

// storeErr wraps err from the database in ErrStore.
func storeErr(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrStore, what, err)
}
