package central_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/internal/testkit/pglab"
	"github.com/browsergate/browsergate/internal/testkit/s3lab"
)

// shipping is an evidence file shipped by a running Shipper to a store in
// a database of its own, each record's Acknowledge wait timed.
type shipping struct {
	central *central.Store
	local   *evidence.Store
	mu      sync.Mutex
	waits   []time.Duration
	acked   map[[2]string]time.Time // session, seq -> when the store held it
}

// startShipping opens database db of pg as the central store, a new
// evidence file whose every append waits for the store (as under
// --evidence-ack central), and runs the shipper until b ends. The file
// first holds ended sessions of one record each, shipped before it
// returns: a daemon's file holds every session it served since its last
// prune.
func startShipping(b *testing.B, pg *pglab.Cluster, db string, ended int) *shipping {
	b.Helper()
	pg.CreateDatabase(b, db)
	c, err := central.Open(context.Background(), pg.URLWithPassword(db))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	local, err := evidence.Open(filepath.Join(b.TempDir(), "evidence.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { local.Close() })
	sh := &shipping{central: c, local: local, acked: map[[2]string]time.Time{}}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < ended; i += 8 {
				if err := sh.appendCall(fmt.Sprintf("ended%d", i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	s, err := central.NewShipper(context.Background(), local, c, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	local.SetAcknowledge(func(session string, seq uint64) error {
		start := time.Now()
		err := s.Acknowledge(session, seq)
		now := time.Now()
		sh.mu.Lock()
		sh.waits = append(sh.waits, now.Sub(start))
		sh.acked[[2]string{session, strconv.FormatUint(seq, 10)}] = now
		sh.mu.Unlock()
		return err
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	return sh
}

// appendCall appends one call of session: a snapshot of a few hundred
// bytes.
func (sh *shipping) appendCall(session string) error {
	e := &evidence.Envelope{Session: session, Principal: "bench", Tool: "web", Command: "snapshot",
		Decision: evidence.Decision{Allowed: true, Stage: "gate"}, Output: "a page's text, a few hundred bytes of it"}
	return sh.local.Append(e, nil)
}

// BenchmarkShipLag measures the evidence lag: from a record committed to
// the file to the central store holding it (Acknowledge's wait under
// --evidence-ack central), with PostgreSQL's fsync on, for 1 and 16
// writers appending without pause (a batch then carries several
// records), and for 1 writer whose file holds 5,000 ended sessions (a
// daemon's file holds every session since its last prune). It reports the
// wait's p50 and p99 in ms, and appends per second.
// go test -run '^$' -bench 'ShipLag$' -benchtime 2000x ./evidence/central
func BenchmarkShipLag(b *testing.B) {
	pg := pglab.Start(b, &pglab.Options{Durable: true})
	dbs := 0
	for _, c := range []struct{ writers, ended int }{{1, 0}, {16, 0}, {1, 5000}} {
		name := fmt.Sprintf("writers=%d", c.writers)
		if c.ended > 0 {
			name += fmt.Sprintf(",ended=%d", c.ended)
		}
		b.Run(name, func(b *testing.B) {
			dbs++
			shipLag(b, startShipping(b, pg, fmt.Sprintf("lag%d", dbs), c.ended), c.writers, 0)
		})
	}
}

// BenchmarkShipLagAtCallPace is BenchmarkShipLag's one writer appending
// one record every 20 ms, as a session's calls come, rather than without
// pause: between records the shipper, PostgreSQL's backend and its WAL
// writer wait, and each record wakes them.
// go test -run '^$' -bench ShipLagAtCallPace -benchtime 300x ./evidence/central
func BenchmarkShipLagAtCallPace(b *testing.B) {
	pg := pglab.Start(b, &pglab.Options{Durable: true})
	shipLag(b, startShipping(b, pg, "paced", 0), 1, 20*time.Millisecond)
}

// shipLag appends b.N records to sh's file from writers at once, each
// pausing between its records, and reports the lag.
func shipLag(b *testing.B, sh *shipping, writers int, pause time.Duration) {
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < b.N; i += writers {
				if err := sh.appendCall(fmt.Sprintf("s%d", w)); err != nil {
					b.Error(err)
					return
				}
				time.Sleep(pause)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	waits := slices.Sorted(slices.Values(sh.waits))
	if len(waits) > 0 {
		b.ReportMetric(quantileMs(waits, 0.5), "p50-ms")
		b.ReportMetric(quantileMs(waits, 0.99), "p99-ms")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	}
}

// BenchmarkCheckpointLag measures the checkpoint lag of the fleet's
// anchorer as serve runs it (central.Anchorer.Run with its defaults: it
// looks for records every second, and Tessera signs a checkpoint every
// second): from a record held by the central store (its Acknowledge
// returned) to a signed checkpoint covering it published in
// evidence_checkpoints (its row's made, the insert's time), and to the
// bucket's checkpoint covering it (the bucket, on versitygw with Object
// Lock, read every 20 ms). One op is one record; a writer appends one
// every 20 ms (50 a second), each waiting for the store. It reports p50,
// p99 and max of both lags in ms, and the checkpoints published.
// go test -run '^$' -bench CheckpointLag -benchtime 500x ./evidence/central
func BenchmarkCheckpointLag(b *testing.B) {
	const pace = 20 * time.Millisecond
	lab := s3lab.Start(b)
	pg := pglab.Start(b, &pglab.Options{Durable: true})
	sh := startShipping(b, pg, "anchored", 0)
	ctx := context.Background()
	client := anchor.NewS3Client(anchor.S3Config{Endpoint: lab.Endpoint, Region: lab.Region, AccessKey: lab.AccessKey, SecretKey: lab.SecretKey})
	const bucket = "fleet-log"
	if err := anchor.EnsureBucket(ctx, client, bucket); err != nil {
		b.Fatal(err)
	}
	mirror, err := anchor.NewMirror(anchor.MirrorConfig{Client: client, Bucket: bucket, Retention: 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	skey, _, err := note.GenerateKey(rand.Reader, "browsergate.test/fleet-log")
	if err != nil {
		b.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		b.Fatal(err)
	}
	log, err := anchor.Open(ctx, anchor.Config{Dir: filepath.Join(b.TempDir(), "log"), Signer: signer})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close(ctx)
	a := &central.Anchorer{Store: sh.central, Log: log, Mirror: mirror}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { a.Run(runCtx) })
	var seenMu sync.Mutex
	var bucketSeen []sizeAt // the bucket's checkpoint sizes, as first seen
	bucketHas := func() uint64 {
		seenMu.Lock()
		defer seenMu.Unlock()
		if len(bucketSeen) == 0 {
			return 0
		}
		return bucketSeen[len(bucketSeen)-1].size
	}
	wg.Go(func() {
		for runCtx.Err() == nil {
			if size, err := bucketSize(runCtx, client, bucket); err == nil && size > bucketHas() {
				seenMu.Lock()
				bucketSeen = append(bucketSeen, sizeAt{size, time.Now()})
				seenMu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	n := 0
	next := time.Now()
	for b.Loop() {
		time.Sleep(time.Until(next))
		next = next.Add(pace)
		if err := sh.appendCall(fmt.Sprintf("s%d", n%4)); err != nil {
			b.Fatal(err)
		}
		n++
	}
	for deadline := time.Now().Add(30 * time.Second); bucketHas() < uint64(n); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the bucket's checkpoint covers %d of %d records after 30 s", bucketHas(), n)
		}
	}
	conn, err := pgx.Connect(ctx, pg.URLWithPassword("anchored"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT size, made FROM evidence_checkpoints ORDER BY size`)
	var published []sizeAt
	var cp sizeAt
	if _, err := pgx.ForEachRow(rows, []any{&cp.size, &cp.at}, func() error { published = append(published, cp); return nil }); err != nil {
		b.Fatal(err)
	}
	rows, _ = conn.Query(ctx, `SELECT session, seq, leaf FROM evidence_records`)
	var session string
	var seq, leaf int64
	var toCheckpoint, toBucket []time.Duration
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, err := pgx.ForEachRow(rows, []any{&session, &seq, &leaf}, func() error {
		acked, ok := sh.acked[[2]string{session, strconv.FormatInt(seq, 10)}]
		if !ok {
			return fmt.Errorf("session %s record %d was not acknowledged", session, seq)
		}
		toCheckpoint = append(toCheckpoint, firstCovering(published, uint64(leaf)).Sub(acked))
		toBucket = append(toBucket, firstCovering(bucketSeen, uint64(leaf)).Sub(acked))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if len(toCheckpoint) != n {
		b.Fatalf("the store holds %d records of %d", len(toCheckpoint), n)
	}
	slices.Sort(toCheckpoint)
	slices.Sort(toBucket)
	b.ReportMetric(quantileMs(toCheckpoint, 0.5), "checkpoint-p50-ms")
	b.ReportMetric(quantileMs(toCheckpoint, 0.99), "checkpoint-p99-ms")
	b.ReportMetric(quantileMs(toCheckpoint, 1), "checkpoint-max-ms")
	b.ReportMetric(quantileMs(toBucket, 0.5), "bucket-p50-ms")
	b.ReportMetric(quantileMs(toBucket, 0.99), "bucket-p99-ms")
	b.ReportMetric(quantileMs(toBucket, 1), "bucket-max-ms")
	b.ReportMetric(float64(len(published)), "checkpoints")
}

// firstCovering is when the first of cps (by size) that covers leaf was
// published or seen.
func firstCovering(cps []sizeAt, leaf uint64) time.Time {
	i, _ := slices.BinarySearchFunc(cps, leaf+1, func(c sizeAt, size uint64) int { return cmp.Compare(c.size, size) })
	if i == len(cps) {
		return time.Time{}
	}
	return cps[i].at
}

// sizeAt is a checkpoint's size and when it was published or first seen.
type sizeAt struct {
	size uint64
	at   time.Time
}

// bucketSize is the size of the checkpoint in the bucket's root.
func bucketSize(ctx context.Context, c *s3.Client, bucket string) (uint64, error) {
	key := "checkpoint"
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		var missing *types.NoSuchKey
		if errors.As(err, &missing) {
			return 0, nil
		}
		return 0, err
	}
	defer out.Body.Close()
	raw, err := io.ReadAll(out.Body)
	if err != nil {
		return 0, err
	}
	lines := bytes.SplitN(raw, []byte("\n"), 3)
	if len(lines) < 3 {
		return 0, fmt.Errorf("a checkpoint of %d lines", len(lines))
	}
	return strconv.ParseUint(string(lines[1]), 10, 64)
}

// quantileMs is the q-quantile of sorted ds, in ms.
func quantileMs(ds []time.Duration, q float64) float64 {
	return float64(ds[min(len(ds)-1, int(float64(len(ds))*q))].Microseconds()) / 1000
}
