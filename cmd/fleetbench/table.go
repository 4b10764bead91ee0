package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// results are the metrics of each benchmark (its name without the
// -GOMAXPROCS suffix) by unit.
type results map[string]map[string]float64

// benchLine is a line of benchmark output: name, iterations, then value
// and unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse reads go test -bench output.
func parse(r io.Reader) results {
	out := results{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		metrics := map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			metrics[f[i+1]] = v
		}
		out[m[1]] = metrics
	}
	return out
}

// row is one figure of the table: what it is, how its result reads from
// its benchmark's metrics, and the benchmark.
type row struct {
	what, bench string
	result      func(m map[string]float64) string
}

// rows are the table's figures, in order.
func rows(c *config) []row {
	lag := func(m map[string]float64) string {
		return fmt.Sprintf("p50 %s ms, p99 %s ms (%s appends/s)", num(m["p50-ms"]), num(m["p99-ms"]), num(m["appends/s"]))
	}
	throughput := func(m map[string]float64) string {
		return fmt.Sprintf("**%s calls/s**; a call p50 %s ms, p95 %s ms; %s errors; sessions r1 %s, r2 %s",
			num(m["calls/s"]), num(m["p50-ms"]), num(m["p95-ms"]), num(m["errors"]), num(m["on-r1"]), num(m["on-r2"]))
	}
	out := []row{
		{"evidence lag: a record committed to the file → PostgreSQL holds it (fsync on), 1 writer", "BenchmarkShipLag/writers=1", lag},
		{"the same, 16 writers at once", "BenchmarkShipLag/writers=16", lag},
		{"the same, 1 writer, the file holding 5,000 ended sessions", "BenchmarkShipLag/writers=1,ended=5000", lag},
		{"the same, 1 writer appending a record every 20 ms (as a session's calls come)", "BenchmarkShipLagAtCallPace", lag},
		{"a call through the real binary over HTTP (navigate + snapshot of a loopback page), `--evidence-ack local` / `central`", "BenchmarkCentralAck",
			func(m map[string]float64) string {
				return fmt.Sprintf("navigate p50 %s / %s ms, snapshot p50 %s / %s ms: central adds %s and %s ms",
					num(m["local-navigate-p50-ms"]), num(m["central-navigate-p50-ms"]), num(m["local-snapshot-p50-ms"]), num(m["central-snapshot-p50-ms"]),
					num(m["central-added-navigate-ms"]), num(m["central-added-snapshot-ms"]))
			}},
		{"checkpoint lag: a record in PostgreSQL → a signed checkpoint covering it in `evidence_checkpoints` (records at 50/s)", "BenchmarkCheckpointLag",
			func(m map[string]float64) string {
				return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms (%s checkpoints)", num(m["checkpoint-p50-ms"]), num(m["checkpoint-p99-ms"]), num(m["checkpoint-max-ms"]), num(m["checkpoints"]))
			}},
		{"… → the bucket's checkpoint covering it (versitygw, Object Lock)", "BenchmarkCheckpointLag",
			func(m map[string]float64) string {
				return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms", num(m["bucket-p50-ms"]), num(m["bucket-p99-ms"]), num(m["bucket-max-ms"]))
			}},
	}
	for _, replicas := range []int{1, 2} {
		for _, agents := range []int{4, 16} {
			name := map[int]string{1: "one replica", 2: "two replicas"}[replicas]
			out = append(out, row{fmt.Sprintf("calls a second, %s behind HAProxy, %d agents for %s (navigate + snapshot)", name, agents, c.level),
				fmt.Sprintf("BenchmarkFleetThroughput/replicas=%d/agents=%d", replicas, agents), throughput})
		}
	}
	return append(out, row{"failover: `kill -9` of a session's replica → the client's new session answered a navigate", "BenchmarkReplicaFailover",
		func(m map[string]float64) string {
			return fmt.Sprintf("mean %s ms, slowest %s ms; kill → the old session's call failed %s ms (%d kills)", num(m["ms/failover"]), num(m["max-ms"]), num(m["ms-to-error"]), c.failovers)
		}})
}

// writeTable writes the table and returns how many figures are missing.
func writeTable(w io.Writer, res results, c *config) (missing int) {
	fmt.Fprintln(w, "| figure | result | benchmark |")
	fmt.Fprintln(w, "| --- | --- | --- |")
	for _, r := range rows(c) {
		result := "not measured"
		if m, ok := res[r.bench]; ok {
			result = r.result(m)
		} else {
			missing++
		}
		fmt.Fprintf(w, "| %s | %s | `%s` |\n", r.what, result, r.bench)
	}
	return missing
}

// num formats a figure with three significant digits or so: 1,234,
// 123, 12.3, 1.23, 0.123.
func num(v float64) string {
	switch a := max(v, -v); {
	case a >= 1000:
		s := strconv.FormatFloat(v, 'f', 0, 64)
		for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	case a >= 100 || v == float64(int64(v)):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}
