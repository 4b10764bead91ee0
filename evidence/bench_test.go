package evidence_test

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// benchEnvelope is a typical snapshot call: a few args, page state and a
// 4 KB output.
func benchEnvelope() *evidence.Envelope {
	e := envelope("bench", "https://docs.example.com/guide")
	e.Command = "snapshot"
	e.Before["has_forms"] = false
	e.Before["tab_count"] = 1
	e.Output = strings.Repeat("- link \"Getting started\" [ref=e12]\n", 120)
	return e
}

// BenchmarkAppend measures one durable append: a bbolt transaction
// committed with fsync, as on every tool call.
func BenchmarkAppend(b *testing.B) {
	s, _ := openStore(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(benchEnvelope(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendSigned is BenchmarkAppend with signed heads: the cost of
// one ed25519 signature per append.
func BenchmarkAppendSigned(b *testing.B) {
	s, _ := openStore(b, &evidence.Options{SigningKey: testKey(1)})
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(benchEnvelope(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendNoSync is BenchmarkAppendSigned without the fsync: the
// work an append does besides waiting for the disk (encoding, hashing,
// signing, the log-wide head, bbolt's pages), which the fsync's variance
// on a busy machine would hide.
func BenchmarkAppendNoSync(b *testing.B) {
	s, _ := openStore(b, &evidence.Options{SigningKey: testKey(1)})
	evidence.SetNoSync(s, true)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(benchEnvelope(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendThroughput measures sequential durable appends to one
// session, reported as appends per second (one caller: bbolt serialises
// writers, so this is the store's ceiling for one session).
func BenchmarkAppendThroughput(b *testing.B) {
	s, _ := openStore(b, nil)
	e := benchEnvelope()
	n := 0
	for b.Loop() {
		rec := *e
		if err := s.Append(&rec, nil); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "appends/s")
}

// benchLog writes records envelopes over 10 sessions (a screenshot on
// every shotEvery-th, none when 0), with fsync off to build it quickly.
func benchLog(b *testing.B, records, shotEvery int, key ed25519.PrivateKey) *evidence.Store {
	b.Helper()
	s, _ := openStore(b, &evidence.Options{SigningKey: key})
	evidence.SetNoSync(s, true)
	png := tinyPNG(b)
	for i := range records {
		e := benchEnvelope()
		e.Session = fmt.Sprintf("s%d", i%10)
		var shot []byte
		if shotEvery > 0 && i%shotEvery == 0 {
			shot = slices.Concat(png, []byte{byte(i), byte(i >> 8)}) // distinct images
		}
		if err := s.Append(e, shot); err != nil {
			b.Fatal(err)
		}
	}
	evidence.SetNoSync(s, false)
	return s
}

// BenchmarkVerify measures verifying a log of 10 sessions of 1,000
// records (4 KB outputs), reported as records per second.
func BenchmarkVerify(b *testing.B) {
	s := benchLog(b, 10_000, 0, nil)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		rep, err := s.Verify()
		if err != nil || !rep.OK() || rep.Records != 10_000 {
			b.Fatal(rep, err)
		}
		n += rep.Records
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkVerifyWithKey is BenchmarkVerify on signed heads, checked.
func BenchmarkVerifyWithKey(b *testing.B) {
	key := testKey(1)
	s := benchLog(b, 10_000, 0, key)
	pub := key.Public().(ed25519.PublicKey)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		rep, err := s.VerifyWithKey(pub)
		if err != nil || !rep.OK() || rep.Signed != 10 {
			b.Fatal(rep, err)
		}
		n += rep.Records
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkExportHTML measures the HTML report of 1,000 records (10
// sessions, a 4 KB output each, a screenshot on every 10th), verification
// included.
func BenchmarkExportHTML(b *testing.B) {
	s := benchLog(b, 1_000, 10, nil)
	var size int64
	b.ReportAllocs()
	for b.Loop() {
		w := &countingWriter{}
		rep, err := s.ExportHTML(w, evidence.HTMLOptions{Source: "bench.db"})
		if err != nil || !rep.OK() {
			b.Fatal(rep, err)
		}
		size = w.n
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/export")
	b.ReportMetric(float64(size), "bytes/report")
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkCanonicalJSON measures the encoding and hashing alone.
func BenchmarkCanonicalJSON(b *testing.B) {
	e := benchEnvelope()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := evidence.Hash(e); err != nil {
			b.Fatal(err)
		}
	}
}
