package central_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/evidence/central"
)

// gatedProxy forwards TCP to a target; while its gate is locked, no byte
// passes (bytes read meanwhile are delivered when it opens): a network
// that delays one anchorer's requests as long as it likes.
type gatedProxy struct {
	addr string
	gate sync.RWMutex
}

func startGatedProxy(t *testing.T, target string) *gatedProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &gatedProxy{addr: ln.Addr().String()}
	pipe := func(dst, src net.Conn) {
		defer dst.Close()
		defer src.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.gate.RLock()
				p.gate.RUnlock()
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go pipe(u, c)
			go pipe(c, u)
		}
	}()
	return p
}

// TestAnAnchorerThatLostTheLockDoesNotForkTheBucket: anchorer A loses its
// lock (its connection is cut, its process lives) while its copy of new
// leaves is held up on the way to the bucket; a record of another replica
// whose number comes first commits meanwhile. B takes the lock, waits out
// A's turn, restores from the bucket and anchors again the records A had
// anchored beyond the copy, in A's order, before the late one; A's held-up
// writes then land. The bucket holds one history: the auditor's check of
// every checkpoint version it keeps passes.
func TestAnAnchorerThatLostTheLockDoesNotForkTheBucket(t *testing.T) {
	ctx := context.Background()
	f := newBucketFleet(t)
	proxy := startGatedProxy(t, strings.TrimPrefix(f.lab.Endpoint, "http://"))
	viaProxy := anchor.NewS3Client(anchor.S3Config{Endpoint: "http://" + proxy.addr, Region: f.lab.Region, AccessKey: f.lab.AccessKey, SecretKey: f.lab.SecretKey})
	a := f.anchorerVia(t, viaProxy)
	// A round long enough to outlive the handover, unless the replica
	// taking over waits it out.
	a.RoundWait = 20 * time.Second
	stopA := run(a)
	defer stopA()
	f.calls(t, "s1", 3)
	f.waitAnchored(t, 3)

	// Another replica's record takes its number now and commits late.
	late, err := pgx.Connect(ctx, f.pg.URLWithPassword(f.db))
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close(ctx)
	tx, err := late.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO evidence_logs (log_id, replica) VALUES ('r2log', 'r2');
		INSERT INTO evidence_records (log_id, session, seq, hash, record) VALUES ('r2log', 'x', 1, repeat('3', 64), convert_to('{"hash":"' || repeat('3', 64) || '"}', 'UTF8'))`); err != nil {
		t.Fatal(err)
	}

	proxy.gate.Lock() // A's next copy is held up
	f.calls(t, "s2", 2)
	for deadline := time.Now().Add(30 * time.Second); f.pg.SQL(t, f.db, "SELECT count(*) FROM evidence_records WHERE leaf >= 3") != "2"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A did not anchor s2")
		}
	}
	time.Sleep(500 * time.Millisecond) // A is copying s2's leaves, held up
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.pg.SQL(t, f.db, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)

	b := f.anchorer(t)
	stopB := run(b)
	defer stopB()
	f.waitAnchored(t, 6)
	proxy.gate.Unlock() // A's held-up writes land
	time.Sleep(2 * time.Second)
	f.calls(t, "s3", 1)
	f.waitAnchored(t, 7)
	stopB()
	stopA()
	if rep := f.verifyBucket(t); !rep.OK() {
		t.Fatalf("the bucket after a handover: %q", rep.Problems)
	}
}

// TestARowBeyondTheLogDoesNotStallATakeover: a row put in the store by
// other hands, anchored (it says) far beyond the log and too large for a
// leaf, is not appended again at a takeover: it is set aside, and the
// records after it are anchored.
func TestARowBeyondTheLogDoesNotStallATakeover(t *testing.T) {
	f := newBucketFleet(t)
	f.anchoredBy(t, 3)
	f.pg.SQL(t, f.db, `INSERT INTO evidence_logs (log_id, replica) VALUES ('forged', 'x');
		INSERT INTO evidence_records (log_id, session, seq, hash, record, leaf) VALUES ('forged', repeat('s', 70000), 1, repeat('3', 64), convert_to('{}', 'UTF8'), 1000000000)`)
	b := f.anchorer(t)
	stop := run(b)
	defer stop()
	f.calls(t, "s2", 1)
	f.waitAnchored(t, 4)
	if got := f.pg.SQL(t, f.db, "SELECT leaf FROM evidence_records WHERE log_id = 'forged'"); got != "-1" {
		t.Errorf("the forged row's leaf: %s, want -1 (set aside)", got)
	}
}

// TestACleanHandoverWaitsOnlyTheDrain: an anchorer that stopped cleanly
// ended its turn: the next one waits out only the drain of its last
// writes, not a whole round.
func TestACleanHandoverWaitsOnlyTheDrain(t *testing.T) {
	f := newBucketFleet(t)
	a := f.anchoredBy(t, 3) // stopped cleanly
	if left := f.pg.SQL(t, f.db, "SELECT extract(epoch FROM until - clock_timestamp()) <= 15 FROM evidence_anchor_turn"); left != "t" {
		t.Errorf("after a clean stop (a round of %s), the turn ends more than 15 s on", a.RoundWait)
	}
}

// TestAnAnchorerStoppedInAQueryEndsItsTurn: an anchorer stopped while a
// query of its round waits (its connection, and the lock with it, is
// dropped as the query is cut) still ends the turn it claimed: the next
// one waits out only the drain.
func TestAnAnchorerStoppedInAQueryEndsItsTurn(t *testing.T) {
	ctx := context.Background()
	f := newBucketFleet(t)
	a := f.anchorer(t)
	f.calls(t, "s1", 1)
	stop := run(a)
	defer stop()
	f.waitAnchored(t, 1)

	// The next round's read of the records waits on this lock.
	block, err := pgx.Connect(ctx, f.pg.URLWithPassword(f.db))
	if err != nil {
		t.Fatal(err)
	}
	defer block.Close(ctx)
	tx, err := block.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE evidence_records IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); f.pg.SQL(t, f.db, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'evidence_records'::regclass") == "0"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the anchorer's round never waited on the records")
		}
	}
	stop()
	if left := f.pg.SQL(t, f.db, "SELECT extract(epoch FROM until - clock_timestamp()) <= 15 FROM evidence_anchor_turn"); left != "t" {
		t.Errorf("after a stop in the middle of a query (a round of %s), the turn ends more than 15 s on", a.RoundWait)
	}
}

// TestEndingATurnLeavesTheNextHoldersClaim: a holder that ends its turn
// after the next holder claimed one (its lock lost, its last round cut
// short) leaves the next holder's claim as it was.
func TestEndingATurnLeavesTheNextHoldersClaim(t *testing.T) {
	ctx := context.Background()
	f := newBucketFleet(t)
	endA, err := central.ClaimTurnForTest(ctx, f.anchorer(t), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	endB, err := central.ClaimTurnForTest(ctx, f.anchorer(t), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := endA(); err != nil {
		t.Fatal(err)
	}
	if left := f.pg.SQL(t, f.db, "SELECT extract(epoch FROM until - clock_timestamp()) > 60 FROM evidence_anchor_turn"); left != "t" {
		t.Errorf("the first holder's end shortened the next holder's turn of a minute (and the drain)")
	}
	if err := endB(); err != nil {
		t.Fatal(err)
	}
	if left := f.pg.SQL(t, f.db, "SELECT extract(epoch FROM until - clock_timestamp()) <= 15 FROM evidence_anchor_turn"); left != "t" {
		t.Errorf("the next holder's end left its turn more than the drain on")
	}
}
