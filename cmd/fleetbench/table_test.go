package main

import (
	"strings"
	"testing"
)

// TestParseReadsEachBenchmarksMetrics: benchmark lines, with and without
// the -GOMAXPROCS suffix and sub-benchmark names, give their metrics by
// unit; other lines are left out.
func TestParseReadsEachBenchmarksMetrics(t *testing.T) {
	out := `goos: linux
BenchmarkShipLag/writers=1-2         	    1000	   1296282 ns/op	       771.4 appends/s	         0.5950 p50-ms	         6.225 p99-ms
BenchmarkShipLag/writers=1,ended=5000-2         	    1000	   3738952 ns/op	       267.5 appends/s	         1.399 p50-ms
BenchmarkFleetThroughput/replicas=2/agents=4   	       1	        19.64 calls/s	         0 errors
--- BENCH: BenchmarkReplicaFailover-2
PASS
`
	got := parse(strings.NewReader(out))
	for _, c := range []struct {
		bench, unit string
		want        float64
	}{
		{"BenchmarkShipLag/writers=1", "p99-ms", 6.225},
		{"BenchmarkShipLag/writers=1,ended=5000", "appends/s", 267.5},
		{"BenchmarkFleetThroughput/replicas=2/agents=4", "calls/s", 19.64},
		{"BenchmarkFleetThroughput/replicas=2/agents=4", "errors", 0},
	} {
		if v, ok := got[c.bench][c.unit]; !ok || v != c.want {
			t.Errorf("%s %s: %v (%v), want %v", c.bench, c.unit, v, ok, c.want)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d benchmarks read, want 3: %v", len(got), got)
	}
}

// TestNumRoundsToAboutThreeDigits: the table's figures.
func TestNumRoundsToAboutThreeDigits(t *testing.T) {
	for v, want := range map[float64]string{1234.5: "1,234", 1234567: "1,234,567", 123.4: "123", 12.34: "12.3", 1.234: "1.23", 0.5950: "0.595", 0: "0", 16: "16", -2.5: "-2.50", -1500: "-1,500"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestWriteTableSaysWhatWasNotMeasured: a figure whose benchmark did not
// report is written as not measured, and counted.
func TestWriteTableSaysWhatWasNotMeasured(t *testing.T) {
	var b strings.Builder
	c := &config{failovers: 5}
	missing := writeTable(&b, results{"BenchmarkReplicaFailover": {"ms/failover": 205, "max-ms": 274, "ms-to-error": 11}}, c)
	if missing != len(rows(c))-1 {
		t.Errorf("%d missing, want %d", missing, len(rows(c))-1)
	}
	if !strings.Contains(b.String(), "| mean 205 ms, slowest 274 ms; kill → the old session's call failed 11 ms (5 kills) |") ||
		!strings.Contains(b.String(), "| not measured | `BenchmarkCentralAck` |") {
		t.Errorf("the table:\n%s", b.String())
	}
}
