package evidence_test

import (
	"fmt"
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

// BenchmarkVerify measures verifying a log of 10 sessions of 100 records.
func BenchmarkVerify(b *testing.B) {
	s, _ := openStore(b, &evidence.Options{})
	for i := range 1000 {
		e := benchEnvelope()
		e.Session = fmt.Sprintf("s%d", i%10)
		if err := s.Append(e, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := s.Verify()
		if err != nil || !rep.OK() {
			b.Fatal(rep, err)
		}
	}
}
