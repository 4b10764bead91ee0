package central_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// BenchmarkShipLag measures the evidence lag: from a record committed to
// the file to the central store holding it (Acknowledge's wait under
// --evidence-ack central), with PostgreSQL's fsync on, for 1 and 16
// writers appending at once (a batch then carries several records). It
// reports the wait's p50 and p99 in ms, and appends per second.
// go test -run '^$' -bench ShipLag -benchtime 2000x ./evidence/central
func BenchmarkShipLag(b *testing.B) {
	pg := pglab.Start(b, &pglab.Options{Durable: true})
	dbs := 0
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dbs++
			db := fmt.Sprintf("lag%d", dbs)
			pg.CreateDatabase(b, db)
			c, err := central.Open(context.Background(), pg.URLWithPassword(db))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			local, err := evidence.Open(filepath.Join(b.TempDir(), "evidence.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer local.Close()
			s, err := central.NewShipper(context.Background(), local, c, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var waits []time.Duration
			local.SetAcknowledge(func(session string, seq uint64) error {
				start := time.Now()
				err := s.Acknowledge(session, seq)
				mu.Lock()
				waits = append(waits, time.Since(start))
				mu.Unlock()
				return err
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { s.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < b.N; i += writers {
						e := &evidence.Envelope{Session: fmt.Sprintf("s%d", w), Principal: "bench", Tool: "web", Command: "snapshot",
							Decision: evidence.Decision{Allowed: true, Stage: "gate"}, Output: "a page's text, a few hundred bytes of it"}
						if err := local.Append(e, nil); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(waits)
			if len(waits) > 0 {
				b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			}
		})
	}
}
