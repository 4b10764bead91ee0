package central_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// TestAnAnswerRacingTheHoldersOwnIsTakenOnce: an answer given on r2 and
// one given on the holder r1 at the same moment (both waiting on the
// call's row, r2's committed first): one is taken, the other refused.
func TestAnAnswerRacingTheHoldersOwnIsTakenOnce(t *testing.T) {
	pg, db := pglab.Shared(t)
	pool, err := pgxpool.New(context.Background(), pg.URLWithPassword(db)+"&pool_max_conns=20")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r1, r2 := newReplica(t, pool, "r1", "operators"), newReplica(t, pool, "r2", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	held(t, r2, p.ID)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM fleet_held WHERE id = $1 FOR UPDATE`, p.ID); err != nil {
		t.Fatal(err)
	}
	// waiting returns once n statements of this database wait on the
	// call's row lock.
	waiting := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for {
			var c int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%fleet_held%'`).Scan(&c); err != nil {
				t.Fatal(err)
			}
			if c >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d answer(s) waiting on the call's row after 30 s, want %d", c, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	remote := make(chan error, 1)
	go func() {
		remote <- r2.broker.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelConsole, By: "olga"})
	}()
	waiting(1)
	local := make(chan error, 1)
	go func() {
		local <- r1.broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "bob"})
	}()
	waiting(2)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	errRemote, errLocal := <-remote, <-local
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	o := p.Wait(wctx)
	if errRemote == nil && errLocal == nil {
		t.Errorf("both answers were accepted; the call took %q's", o.By)
	}
	if o.Approved || o.By != "olga (replica r2)" {
		t.Errorf("the call got approved=%v by %q, want olga's denial, given first", o.Approved, o.By)
	}
}

// TestAForgedAnswerDoesNotBlockTheHoldersOperator: an answer without the
// fleet's MAC on the call's row does not keep the holder's own operator
// from answering.
func TestAForgedAnswerDoesNotBlockTheHoldersOperator(t *testing.T) {
	pool := newPool(t)
	r1 := newReplica(t, pool, "r1", "operators")
	p := r1.broker.Open(approval.Request{Session: "s1", Tool: "web.click", Command: "click", Why: []string{"approval"}}, time.Minute)
	ctx := context.Background()
	for i := 0; i < 200; i++ { // wait for the row
		var c int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM fleet_held WHERE id = $1`, p.ID).Scan(&c)
		if c == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A DB writer without the key keeps a garbage answer on the row.
	if _, err := pool.Exec(ctx, `UPDATE fleet_held SET answer = '\x7b7d', mac = 'forged' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := r1.broker.Decide(p.ID, approval.Outcome{Approved: false, Channel: approval.ChannelOperator, By: "bob"}); err != nil {
		t.Fatalf("a forged answer on the row refused the holder's own operator: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if o := p.Wait(wctx); o.Approved || o.By != "bob" {
		t.Fatalf("the call got %+v, want bob's denial", o)
	}
}
