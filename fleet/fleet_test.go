package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/fleet"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pglab.StopShared()
	os.Exit(code)
}

// replicas opens n stores on one fresh database of the shared cluster, as
// n replicas of a fleet would.
func replicas(t *testing.T, n int, o fleet.Options) []*fleet.Store {
	t.Helper()
	c, db := pglab.Shared(t)
	return replicasOn(t, c, db, n, o)
}

// replicasOn is replicas on database db of cluster c, named r1, r2, ...
// after o.Replica.
func replicasOn(t *testing.T, c *pglab.Cluster, db string, n int, o fleet.Options) []*fleet.Store {
	t.Helper()
	var out []*fleet.Store
	for i := range n {
		o := o
		o.Replica = fmt.Sprintf("%sr%d", o.Replica, i+1)
		s, err := fleet.Open(context.Background(), c.URLWithPassword(db), &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		out = append(out, s)
	}
	return out
}

// Four replicas opening 64 sessions for two agents at once never hold
// more leases than the limits, in all and per agent, and a refusal comes
// with the count that met its limit.
func TestLeasesHoldTheLimitsAcrossReplicas(t *testing.T) {
	// fsync on: a lease inserted waits for its commit's fsync, unseen by
	// the other replicas' counts meanwhile, as in production; the lock
	// is what keeps them from counting then.
	c := pglab.Start(t, &pglab.Options{Durable: true})
	c.CreateDatabase(t, "fleet")
	stores := replicasOn(t, c, "fleet", 4, fleet.Options{})
	const most, perAgent = 3, 2
	ctx := context.Background()
	var mu sync.Mutex
	held := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 64 {
		wg.Go(func() {
			agent := []string{"alice", "bob"}[i%2]
			<-start
			lease, total, mine, err := stores[i%4].Reserve(ctx, agent, most, perAgent, nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if lease == "" {
				if total < most && mine < perAgent {
					t.Errorf("refused with %d open in all and %d of %s, under the limits", total, mine, agent)
				}
				return
			}
			held[agent]++
		})
	}
	close(start)
	wg.Wait()
	if n := held["alice"] + held["bob"]; n != most {
		t.Errorf("%d leases taken, want the fleet's limit %d: %v", n, most, held)
	}
	for a, n := range held {
		if n > perAgent {
			t.Errorf("agent %s holds %d leases, over its limit %d", a, n, perAgent)
		}
	}
	if n, err := stores[0].Sessions(ctx); err != nil || n != most {
		t.Errorf("the store counts %d open (%v), want %d", n, err, most)
	}
}

// A lease dropped as its session ends frees its place for another
// replica; one whose replica stops renewing it (killed) frees it once it
// expires.
func TestLeasesFreeTheirPlaces(t *testing.T) {
	stores := replicas(t, 2, fleet.Options{LeaseFor: 2 * time.Second})
	ctx := context.Background()
	a, _, _, err := stores[0].Reserve(ctx, "alice", 1, 1, nil)
	if err != nil || a == "" {
		t.Fatalf("first lease: %q, %v", a, err)
	}
	if l, _, _, err := stores[1].Reserve(ctx, "bob", 1, 1, nil); err != nil || l != "" {
		t.Fatalf("a second session past --max-sessions 1 got lease %q (%v)", l, err)
	}
	// Dropped as ended, in the next reservation's own transaction.
	b, _, _, err := stores[1].Reserve(ctx, "bob", 1, 1, []string{a})
	if err != nil || b == "" {
		t.Fatalf("the ended session's place was not freed: %q, %v", b, err)
	}
	// Renewed, a lease outlives its first term; not renewed, it expires:
	// keep renewing b while c waits, then stop.
	if err := stores[1].Renew(ctx, map[string]string{b: "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	if l, _, _, err := stores[0].Reserve(ctx, "carol", 1, 1, nil); err != nil || l != "" {
		t.Fatalf("a renewed lease's place was given away: %q, %v", l, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		l, _, _, err := stores[0].Reserve(ctx, "carol", 1, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a lease nobody renews still holds its place after a minute (lease of 2 s)")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Two limiters of two replicas on one store never send a host two
// requests closer than the rate allows, as the host sees them.
//
// The store gives turns exactly interval apart on the database's clock;
// a request reaches the server some latency L after its turn (the
// database's answer, the limiter's timer, one HTTP request over
// loopback: about a millisecond here), and two requests' gap is
// interval + L2 - L1. The test allows half an interval (125 ms) of
// difference between two L's, which scheduling stalls on a loaded
// machine stay under, while unshared pacing (each limiter's first
// request at once) puts two requests ~0 ms apart.
func TestTwoLimitersSpaceAHostsRequests(t *testing.T) {
	stores := replicas(t, 2, fleet.Options{})
	const perSecond = 4
	interval := time.Second / perSecond
	var mu sync.Mutex
	var seen []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		seen = append(seen, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	limiters := []*web.HostLimiter{
		web.NewSharedHostLimiter(perSecond, stores[0], "shop"),
		web.NewSharedHostLimiter(perSecond, stores[1], "shop"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := limiters[i%2].WaitHost(ctx, "127.0.0.1"); err != nil {
				t.Error(err)
				return
			}
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	slices.SortFunc(seen, func(a, b time.Time) int { return a.Compare(b) })
	if len(seen) != 8 {
		t.Fatalf("the server saw %d requests, want 8", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if gap := seen[i].Sub(seen[i-1]); gap < interval-interval/2 {
			t.Errorf("requests %d and %d reached the host %s apart, the rate allows one every %s", i, i+1, gap, interval)
		}
	}
}

// A turn that would come after the request's deadline is refused and not
// taken; and a store that is down refuses sessions and requests, never
// lets them through.
func TestTooLateAndStoreDownRefuse(t *testing.T) {
	c := pglab.Start(t, nil)
	c.CreateDatabase(t, "fleet")
	s, err := fleet.Open(context.Background(), c.URLWithPassword("fleet"), &fleet.Options{Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Take(ctx, "shop", "example.test", time.Hour, time.Second); err != nil {
		t.Fatalf("the first turn: %v", err)
	}
	if _, err := s.Take(ctx, "shop", "example.test", time.Hour, time.Second); !errors.Is(err, fleet.ErrTooLate) {
		t.Fatalf("a turn an hour away, with a second to wait: %v, want ErrTooLate", err)
	}
	if w, err := s.Take(ctx, "shop", "example.test", time.Hour, 2*time.Hour); err != nil || w < 30*time.Minute {
		t.Fatalf("the refused turn was taken after all: the next one is %s away (%v)", w, err)
	}

	c.Stop()
	l := web.NewSharedHostLimiter(4, s, "shop")
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.WaitHost(wctx, "other.test"); !errors.Is(err, fleet.ErrStore) {
		t.Errorf("a request with the store down: %v, want ErrStore", err)
	}
	if lease, _, _, err := s.Reserve(wctx, "alice", 10, 10, nil); !errors.Is(err, fleet.ErrStore) || lease != "" {
		t.Errorf("a session with the store down: lease %q, %v; want ErrStore", lease, err)
	}
}

// Pruning forgets only the hosts whose last turn is older than the idle
// time: a host pruned gets its next turn at once, one still in its
// interval keeps its place on the schedule.
func TestPruneScheduleForgetsIdleHostsOnly(t *testing.T) {
	c, db := pglab.Shared(t)
	s := replicasOn(t, c, db, 1, fleet.Options{})[0]
	ctx := context.Background()
	for _, host := range []string{"idle.test", "busy.test"} {
		if _, err := s.Take(ctx, "shop", host, time.Millisecond, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond) // idle.test's turn is now 49 ms old
	if _, err := s.Take(ctx, "shop", "busy.test", time.Hour, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.PruneSchedule(ctx, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// busy.test's next turn is an hour away: still on the schedule.
	if _, err := s.Take(ctx, "shop", "busy.test", time.Hour, time.Minute); !errors.Is(err, fleet.ErrTooLate) {
		t.Errorf("busy.test after the prune: %v, want its turn still an hour away", err)
	}
	if hosts := strings.TrimSpace(c.SQL(t, db, `SELECT string_agg(host, ',') FROM fleet_pacing`)); hosts != "busy.test" {
		t.Errorf("the schedule holds %q after the prune, want busy.test alone", hosts)
	}
	// idle.test was forgotten; its next turn is at once, as with its row.
	if w, err := s.Take(ctx, "shop", "idle.test", time.Hour, time.Minute); err != nil || w != 0 {
		t.Errorf("idle.test after the prune: wait %s, %v; want at once", w, err)
	}
}

// BenchmarkTake is the added cost of a paced request: a turn on the
// fleet's schedule of one host, every nanosecond, so that no turn waits.
func BenchmarkTake(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Take(ctx, "shop", "example.test", time.Nanosecond, time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReserve is the added cost of opening a session: a lease taken
// (and dropped, so that the count stays small).
func BenchmarkReserve(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	var last []string
	for b.Loop() {
		l, _, _, err := s.Reserve(ctx, "alice", 64, 8, last)
		if err != nil || l == "" {
			b.Fatal(l, err)
		}
		last = []string{l}
	}
}

// benchStore is a store on a cluster of its own with fsync on, as a
// fleet's database runs.
func benchStore(b *testing.B) *fleet.Store {
	c := pglab.Start(b, &pglab.Options{Durable: true})
	c.CreateDatabase(b, "bench")
	s, err := fleet.Open(context.Background(), c.URLWithPassword("bench"), &fleet.Options{Replica: "r1"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}
