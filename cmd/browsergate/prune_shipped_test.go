package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// TestPruneChecksTheStoreHoldsTheSessionsBytes: a session never shipped (3
// records in the file, none in the store) stays refused when whoever
// writes the database puts one row at seq 3 and a head row at head_seq 3
// under the file's log id: the store must hold the session as the file
// has it, record for record and head for head, before a prune removes
// it from the file.
func TestPruneChecksTheStoreHoldsTheSessionsBytes(t *testing.T) {
	pg := pglab.Start(t, nil)
	pg.CreateDatabase(t, "fleet")
	t.Setenv("PGPASSFILE", pg.PassFile)
	url := pg.URL("fleet")
	c, err := central.Open(context.Background(), url) // the tables, as a replica makes them
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	old := time.Now().Add(-48 * time.Hour)
	path := filepath.Join(t.TempDir(), "evidence.db")
	s, err := evidence.Open(path, &evidence.Options{Now: func() time.Time { old = old.Add(time.Second); return old }})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.Append(&evidence.Envelope{Session: "S", Principal: "alice", Tool: "t", Command: "navigate",
			Decision: evidence.Decision{Allowed: true, Stage: "act"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetShipsTo(central.Redact(url)); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Hour)
	if err := prunedShipped(s, before, url); err == nil {
		t.Fatal("precondition: the unshipped session should be refused")
	}
	pg.SQL(t, "fleet", fmt.Sprintf(`INSERT INTO evidence_logs (log_id, replica) VALUES ('%[1]s', 'r1');
		INSERT INTO evidence_records (log_id, session, seq, hash, record) VALUES ('%[1]s', 'S', 3, 'junk', '\x00');
		INSERT INTO evidence_heads (log_id, session, head, head_seq) VALUES ('%[1]s', 'S', '\x00', 3);`, s.LogID()))
	err = prunedShipped(s, before, url)
	if err == nil || !strings.Contains(err.Error(), "(the store has 1 of its 3 records, not its head as the file has it)") {
		t.Fatalf("a session the store holds one forged record and head of: %v, want refused", err)
	}
}
