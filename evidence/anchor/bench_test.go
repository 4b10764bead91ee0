package anchor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence/anchor"
)

// BenchmarkAnchor anchors 20,000 leaves (records' canonical JSON) in a
// new log per iteration: one Append of all of them, integrated on disk,
// then the signed checkpoint that covers them. ns/op is the time to
// anchor 20,000 leaves.
func BenchmarkAnchor(b *testing.B) {
	const n = 20000
	leaves := records("s1", 1, n)
	s, _ := newKey(b, testOrigin)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		l, err := anchor.Open(ctx, anchor.Config{Dir: b.TempDir(), Signer: s, CheckpointInterval: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := l.Append(ctx, leaves); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := l.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "leaves/s")
}

// BenchmarkAudit audits a log of 20,000 leaves from its directory: every
// entry bundle read and hashed, every tile compared, the root checked.
func BenchmarkAudit(b *testing.B) {
	l := openLog(b)
	l.appendAll(b, records("s1", 1, 20000))
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.verifier.Audit(ctx, anchor.DirSource(l.dir), anchor.AuditOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMirror copies a log of 20,000 leaves into an empty bucket with
// Object Lock on versitygw (loopback): 79 entry bundles, 80 tiles and the
// checkpoint, each written with a compliance retention.
func BenchmarkMirror(b *testing.B) {
	l := openLog(b)
	l.appendAll(b, records("s1", 1, 20000))
	c := lockedBucket(b, "fleet-log-0")
	ctx := context.Background()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		bucket := fmt.Sprintf("fleet-log-%d", i)
		if err := anchor.EnsureBucket(ctx, c, bucket); err != nil {
			b.Fatal(err)
		}
		m := newMirror(b, c, bucket)
		b.StartTimer()
		if _, err := m.Sync(ctx, l.Source()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore restores a log of 20,000 (and 200,000) leaves from its
// copy in a bucket with Object Lock on versitygw (loopback) into a new,
// empty directory: the entry bundles read and integrated by Tessera's
// migration (79 for 20,000 leaves), the root checked, the bucket's tiles
// (80) compared with the rebuilt ones, Tessera opened again on the
// result. ns/op is the time of one Restore.
// go test -run '^$' -bench Restore -benchtime 3x ./evidence/anchor
func BenchmarkRestore(b *testing.B) {
	for _, n := range []int{20000, 200000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkRestore(b, n) })
	}
}

func benchmarkRestore(b *testing.B, n int) {
	src, c, m := mirrorSetup(b)
	src.appendAll(b, records("s1", 1, n))
	if _, err := m.Sync(context.Background(), src.Source()); err != nil {
		b.Fatal(err)
	}
	bucket := anchor.BucketSource{Client: c, Bucket: testBucket}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		l, err := anchor.Open(ctx, anchor.Config{Dir: b.TempDir() + "/log", Signer: src.signer, CheckpointInterval: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		stats, err := l.Restore(ctx, bucket, src.verifier)
		if err != nil || stats.To != uint64(n) {
			b.Fatalf("restore: %+v, %v", stats, err)
		}
		b.StopTimer()
		if err := l.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "leaves/s")
}
