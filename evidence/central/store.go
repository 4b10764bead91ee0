// Package central keeps the evidence of a fleet of browsergate daemons in
// PostgreSQL. Each daemon's evidence file stays the durable outbox, written
// before a call's reply; a Shipper copies every record of it, with its
// session's head, the log-wide head, the tombstones of pruned sessions and
// the blobs records name, into the central store, idempotently: a batch
// shipped twice adds nothing, and a record that differs from the one the
// store holds under the same log, session and sequence number is refused.
// The store keeps each log (one daemon's file, named by its log id) as the
// file has it, so the file's own rules verify it: Assemble writes a log,
// or the sessions asked for, back into an evidence file for verify, show,
// export and replay.
package central

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/evidence"
)

// schemaVersion is the version of the tables Open creates; a store whose
// schema is newer is refused.
const schemaVersion = 1

// schema creates the tables of schemaVersion 1 (docs/fleet.md describes
// them).
const schema = `
CREATE TABLE evidence_logs (
	log_id   text PRIMARY KEY,
	replica  text NOT NULL,
	log_head bytea,
	log_set  bytea,
	updated  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE evidence_records (
	log_id   text NOT NULL REFERENCES evidence_logs,
	session  text NOT NULL,
	seq      bigint NOT NULL CHECK (seq > 0),
	hash     text NOT NULL,
	record   bytea NOT NULL,
	recorded timestamptz,
	shipped  timestamptz NOT NULL DEFAULT clock_timestamp(),
	n        bigserial UNIQUE,
	PRIMARY KEY (log_id, session, seq)
);
CREATE INDEX evidence_records_session ON evidence_records (session);
CREATE TABLE evidence_heads (
	log_id  text NOT NULL REFERENCES evidence_logs,
	session text NOT NULL,
	head    bytea NOT NULL,
	PRIMARY KEY (log_id, session)
);
CREATE TABLE evidence_tombstones (
	log_id text NOT NULL REFERENCES evidence_logs,
	digest text NOT NULL,
	value  bytea NOT NULL,
	PRIMARY KEY (log_id, digest)
);
CREATE TABLE evidence_blobs (
	kind   text NOT NULL,
	sha256 text NOT NULL,
	data   bytea NOT NULL,
	PRIMARY KEY (kind, sha256)
);
`

// ErrConflict is returned (wrapped) by Ship when the store already holds a
// different record, head or blob under the same key: evidence is never
// overwritten, and two files claiming one log id are not merged.
var ErrConflict = errors.New("the central store holds different evidence under the same key")

// Store is a connection pool to a central evidence store.
type Store struct {
	pool *pgxpool.Pool
}

// CheckURL refuses a store URL that carries a password: a command line is
// readable by every user of the machine (ps, /proc). The password goes in
// a libpq password file (PGPASSFILE, ~/.pgpass) or PGPASSWORD.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("store %q: not a postgres:// URL", Redact(raw))
	}
	if _, set := u.User.Password(); set || u.Query().Has("password") {
		return fmt.Errorf("store %s: the URL carries a password, which every user of this machine can read from the command line; put it in a password file (PGPASSFILE or ~/.pgpass) or PGPASSWORD", Redact(raw))
	}
	return nil
}

// Redact hides a URL's password, for messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Open connects to the store at url and creates its tables if they are
// not there (under an advisory lock, so that replicas starting together
// create them once).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool is the store's connection pool, for the fleet's other tables.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// schemaLock is the advisory lock key under which tables are created.
const schemaLock = 0x62675f736368656d // "bg_schem"

func (s *Store) migrate(ctx context.Context) error {
	return MigratePart(ctx, s.pool, "evidence", schemaVersion, schema)
}

// MigratePart creates the tables of part, a part of browsergate's tables
// in the store, by running schema, unless browsergate_schema says they are
// there; tables of a newer version than version are refused. It runs under
// one advisory lock for every part, so that replicas starting together
// create them once. The fleet's limits (package fleet) create theirs with
// it.
func MigratePart(ctx context.Context, pool *pgxpool.Pool, part string, version int, schema string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS browsergate_schema (part text PRIMARY KEY, version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM browsergate_schema WHERE part = $1`, part).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, schema); err != nil {
				return fmt.Errorf("create the %s tables: %w", part, err)
			}
			_, err = tx.Exec(ctx, `INSERT INTO browsergate_schema VALUES ($1, $2)`, part, version)
			return err
		case err != nil:
			return err
		case v > version:
			return fmt.Errorf("its %s tables are of schema version %d, this build knows %d: upgrade browsergate", part, v, version)
		}
		return nil
	})
}

// Shipped loads what the store holds of log logID, for a shipper that
// starts: every session's head and last record, the tombstones and the
// log-wide head.
func (s *Store) Shipped(ctx context.Context, logID string) (*evidence.Shipped, error) {
	sh := evidence.NewShipped()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT log_head FROM evidence_logs WHERE log_id = $1`, logID).Scan(&sh.LogHead); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT session, max(seq) FROM evidence_records WHERE log_id = $1 GROUP BY session`, logID)
		var id string
		var seq int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error { sh.Records[id] = uint64(seq); return nil }); err != nil {
			return err
		}
		var head []byte
		rows, _ = tx.Query(ctx, `SELECT session, head FROM evidence_heads WHERE log_id = $1`, logID)
		if _, err := pgx.ForEachRow(rows, []any{&id, &head}, func() error { sh.Heads[id] = head; return nil }); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT digest FROM evidence_tombstones WHERE log_id = $1`, logID)
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error { sh.Tombstones[id] = true; return nil })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read what the central store holds of log %s: %w", logID, err)
	}
	return sh, nil
}
