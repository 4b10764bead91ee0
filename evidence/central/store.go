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
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/evidence"
)

// schemaVersion is the version of the tables Open creates; a store whose
// schema is newer is refused.
const schemaVersion = 2

// schema creates the tables of version 1 (docs/fleet.md describes them):
// MigratePart's first step.
const schema = `
CREATE TABLE evidence_logs (
	log_id   text PRIMARY KEY,
	replica  text NOT NULL,
	log_head bytea,
	log_set  bytea,
	log_n    bigint NOT NULL DEFAULT 0,
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
	leaf     bigint,
	PRIMARY KEY (log_id, session, seq)
);
CREATE INDEX evidence_records_session ON evidence_records (session);
CREATE INDEX evidence_records_unanchored ON evidence_records (n) WHERE leaf IS NULL;
CREATE TABLE evidence_heads (
	log_id  text NOT NULL REFERENCES evidence_logs,
	session  text NOT NULL,
	head     bytea NOT NULL,
	head_seq bigint NOT NULL,
	PRIMARY KEY (log_id, session)
);
CREATE TABLE evidence_tombstones (
	log_id text NOT NULL REFERENCES evidence_logs,
	digest text NOT NULL,
	value  bytea NOT NULL,
	PRIMARY KEY (log_id, digest)
);
CREATE TABLE evidence_checkpoints (
	size       bigint PRIMARY KEY,
	checkpoint bytea NOT NULL,
	made       timestamptz NOT NULL DEFAULT now()
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

// urlKeys are the connection parameters a store URL may carry: where the
// server is, who connects, and TLS. A password never: a command line is
// readable by every user of the machine.
var urlKeys = []string{"host", "port", "user", "dbname", "sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni",
	"sslnegotiation", "application_name", "connect_timeout", "target_session_attrs"}

// CheckURL refuses a store URL that is not a postgres:// URL, or that
// carries a password or a parameter beyond urlKeys, before anything reads
// a file or the network. The password goes in a libpq password file
// (PGPASSFILE, ~/.pgpass) or PGPASSWORD. Its errors never repeat the URL.
func CheckURL(raw string) error {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		return errors.New("store: not a postgres:// URL")
	}
	if _, err := pgconn.ParseConfigWithOptions(raw, pgconn.ParseConfigOptions{ConnStringAllowedKeys: urlKeys}); err != nil {
		if strings.Contains(err.Error(), "password") {
			return fmt.Errorf("store: %v (a password goes in a password file, PGPASSFILE or ~/.pgpass, or PGPASSWORD: every user of this machine can read a command line)", err)
		}
		return fmt.Errorf("store: %v", err)
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
	return open(ctx, rawURL, true)
}

// OpenToRead connects to the store at url to read it, as an auditor's
// role that may only SELECT: it creates nothing, and refuses a store
// without browsergate's evidence tables, or with newer ones.
func OpenToRead(ctx context.Context, rawURL string) (*Store, error) {
	return open(ctx, rawURL, false)
}

func open(ctx context.Context, rawURL string, write bool) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	// The shipper, the anchorer (a connection held while it anchors), the
	// held calls' listener (one held for good) and the fleet's limits
	// share the pool: more than pgx's default of four.
	cfg.MaxConns = max(cfg.MaxConns, poolConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	s := &Store{pool: pool}
	check := s.migrate
	if !write {
		check = s.checkSchema
	}
	if err := check(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	return s, nil
}

// checkSchema accepts a store whose evidence tables this build reads.
func (s *Store) checkSchema(ctx context.Context) error {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT version FROM browsergate_schema WHERE part = 'evidence'`).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errors.New("it holds no browsergate evidence tables (no daemon has shipped to it)")
	case err != nil:
		return fmt.Errorf("it holds no browsergate evidence tables, or they cannot be read: %w", err)
	case v > schemaVersion:
		return fmt.Errorf("its evidence tables are of schema version %d, this build knows %d: upgrade browsergate", v, schemaVersion)
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool is the store's connection pool, for the fleet's other tables.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// poolConns is the least pool size Open gives.
const poolConns = 16

// schemaV2 adds the anchorer's turn (anchorer.go): until when the replica
// that anchors may still be writing to the transparency log's copy.
const schemaV2 = `
CREATE TABLE evidence_anchor_turn (
	one   boolean PRIMARY KEY DEFAULT true CHECK (one),
	until timestamptz NOT NULL
);
`

// schemaLock is the advisory lock key under which tables are created.
const schemaLock = 0x62675f736368656d // "bg_schem"

func (s *Store) migrate(ctx context.Context) error {
	return MigratePart(ctx, s.pool, "evidence", schema, schemaV2)
}

// MigratePart brings the tables of part, a part of browsergate's tables in
// the store, to version len(steps): steps[i] takes them from version i to
// i+1, so a part not there yet runs every step and one of an older version
// the steps it lacks, all in one transaction with the version
// browsergate_schema keeps; tables of a newer version are refused. It runs
// under one advisory lock for every part, so that replicas starting
// together create or upgrade them once. The fleet's limits (package fleet)
// and held calls (approval/central) keep theirs with it.
func MigratePart(ctx context.Context, pool *pgxpool.Pool, part string, steps ...string) error {
	version := len(steps)
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
			v = 0
		case err != nil:
			return err
		case v > version:
			return fmt.Errorf("its %s tables are of schema version %d, this build knows %d: upgrade browsergate", part, v, version)
		case v == version:
			return nil
		}
		for i := v; i < version; i++ {
			if _, err := tx.Exec(ctx, steps[i]); err != nil {
				return fmt.Errorf("bring the %s tables to version %d: %w", part, i+1, err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO browsergate_schema VALUES ($1, $2) ON CONFLICT (part) DO UPDATE SET version = EXCLUDED.version`, part, version)
		return err
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
		rows, _ := tx.Query(ctx, `SELECT DISTINCT ON (session) session, seq, hash FROM evidence_records WHERE log_id = $1 ORDER BY session, seq DESC`, logID)
		var id, hash string
		var seq int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &seq, &hash}, func() error {
			sh.Records[id], sh.Hashes[id] = uint64(seq), hash
			return nil
		}); err != nil {
			return err
		}
		var head []byte
		rows, _ = tx.Query(ctx, `SELECT session, head, head_seq FROM evidence_heads WHERE log_id = $1`, logID)
		if _, err := pgx.ForEachRow(rows, []any{&id, &head, &seq}, func() error {
			sh.Heads[id], sh.HeadSeqs[id] = head, uint64(seq)
			return nil
		}); err != nil {
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
