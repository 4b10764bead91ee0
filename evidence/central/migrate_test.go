package central_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// MigratePart creates a part with every step, brings one of an older
// version up with the steps it lacks (and only those), leaves one of its
// version alone, and refuses one of a newer version.
func TestMigratePartSteps(t *testing.T) {
	pg, db := pglab.Shared(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pg.URLWithPassword(db))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v1 := `CREATE TABLE part_a (n integer); INSERT INTO part_a VALUES (1);`
	v2 := `ALTER TABLE part_a ADD COLUMN m integer; INSERT INTO part_a VALUES (2, 2);`
	if err := central.MigratePart(ctx, pool, "a", v1); err != nil {
		t.Fatal(err)
	}
	if err := central.MigratePart(ctx, pool, "a", v1, v2); err != nil {
		t.Fatalf("from version 1 to 2: %v", err)
	}
	if err := central.MigratePart(ctx, pool, "a", v1, v2); err != nil {
		t.Fatalf("at version 2 already: %v", err)
	}
	if got := pg.SQL(t, db, "SELECT string_agg(n || '/' || coalesce(m, 0), ',' ORDER BY n) FROM part_a"); got != "1/0,2/2" {
		t.Errorf("rows after the steps: %q, want each step run once (1/0,2/2)", got)
	}
	if got := pg.SQL(t, db, "SELECT version FROM browsergate_schema WHERE part = 'a'"); got != "2" {
		t.Errorf("version %s, want 2", got)
	}
	if err := central.MigratePart(ctx, pool, "a", v1); err == nil || !strings.Contains(err.Error(), "schema version 2, this build knows 1") {
		t.Errorf("an older build on version 2: %v", err)
	}
	// A new part runs every step in one go.
	b1, b2 := `CREATE TABLE part_b (n integer);`, `ALTER TABLE part_b ADD COLUMN m integer;`
	if err := central.MigratePart(ctx, pool, "b", b1, b2); err != nil {
		t.Fatal(err)
	}
	if got := pg.SQL(t, db, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'part_b'"); got != "2" {
		t.Errorf("part_b has %s columns, want 2", got)
	}
}
