package main

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkReplicaFailover: the time from the death of a session's replica
// to the client working again behind HAProxy. Two replicas run behind
// examples/haproxy/browsergate.cfg; a client's session on r1 has had a
// call answered; r1 is killed (SIGKILL) and the clock starts. The client's
// next call on its session fails; it opens a new session through HAProxy
// (discover, initialize, its event stream), which lands on r2, and the
// clock stops when a navigate on it is answered. Between rounds, outside
// the clock, r1 starts again on its address (a new evidence file) and
// HAProxy takes it back. It reports the mean time as ms/failover, the
// slowest as max-ms, and the part until the old session's call failed as
// ms-to-error; each round is logged (-v).
func BenchmarkReplicaFailover(b *testing.B) {
	f := startFleet(b)
	site := fleetSite(b)
	var total, toError []time.Duration
	for range b.N {
		b.StopTimer()
		s := f.sessionOn(b, "r1")
		if err := s.next(site); err != nil {
			b.Fatalf("the call before the kill: %v", err)
		}
		r1 := f.replicas["r1"]
		b.StartTimer()
		killed := time.Now()
		if err := r1.cmd.Process.Kill(); err != nil {
			b.Fatal(err)
		}
		oldErr := s.next(site)
		failed := time.Since(killed)
		if oldErr == nil {
			b.Fatal("a call on r1's session was answered after r1's death")
		}
		cs, err := f.dial(s.agent + "-token")
		if err != nil {
			b.Fatalf("a new session through HAProxy: %v", err)
		}
		again := &fleetSession{cs: cs, id: cs.ID(), agent: s.agent}
		if err := again.next(site); err != nil {
			b.Fatalf("the new session %s: %v", again.id, err)
		}
		ready := time.Since(killed)
		b.StopTimer()
		if replicaOf(again.id) != "r2" {
			b.Fatalf("the new session %s is not r2's", again.id)
		}
		b.Logf("kill -> the old session's call failed %v (%v) -> a new session on r2 answered a navigate %v",
			failed.Round(time.Millisecond), oldErr, ready.Round(time.Millisecond))
		total, toError = append(total, ready), append(toError, failed)
		s.cs.Close()
		cs.Close()
		_ = r1.cmd.Wait()
		f.start(b, "r1")
	}
	b.ReportMetric(msMean(total), "ms/failover")
	b.ReportMetric(float64(slices.Max(total))/float64(time.Millisecond), "max-ms")
	b.ReportMetric(msMean(toError), "ms-to-error")
	b.ReportMetric(0, "ns/op") // the rounds' setup is outside the clock; ms/failover is the figure
}

// msMean is the mean of ds in milliseconds.
func msMean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(len(ds)) / float64(time.Millisecond)
}

// BenchmarkReplicaConnect: the time an MCP client takes to open a session
// through HAProxy (examples/haproxy/browsergate.cfg, two replicas): the
// SDK client's server/discover probe, initialize and its notification.
// Each round opens one and closes it (outside the clock); it reports the
// median as p50-ms.
func BenchmarkReplicaConnect(b *testing.B) {
	f := startFleet(b)
	var took []time.Duration
	for range b.N {
		start := time.Now()
		cs, err := f.dial("alice-token")
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		cs.Close()
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms")
}
