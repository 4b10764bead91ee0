// Command fleetbench measures a fleet of browsergate daemons on this
// machine and prints one Markdown table: the evidence lag (a record in a
// daemon's file to PostgreSQL holding it), what central acknowledgement
// costs a real call, the checkpoint lag of the fleet's transparency log
// and of its copy in an S3 bucket, calls a second with one and with two
// replicas behind HAProxy, and the failover time. Each figure is a Go
// benchmark (evidence/central and cmd/browsergate), run one after the
// other so that none shares the machine with another; their output goes
// to standard error as they run, the table to standard output.
//
//	go run ./cmd/fleetbench
//
// `make bench-fleet` installs what the benchmarks start (HAProxy,
// PostgreSQL, versitygw) and runs it. See docs/performance.md, "A fleet".
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// config is the command's flags: how much each benchmark measures.
type config struct {
	appends, paced, records, loops, failovers int
	level                                     time.Duration
	dir                                       string
}

// run is one benchmark binary's run: its package, the benchmarks it
// runs, how many iterations, and environment variables.
type run struct {
	pkg, bench, benchtime string
	env                   []string
}

func main() {
	var c config
	flag.IntVar(&c.appends, "appends", 2000, "records appended in each case of BenchmarkShipLag")
	flag.IntVar(&c.paced, "paced", 300, "records appended in BenchmarkShipLagAtCallPace (one every 20 ms)")
	flag.IntVar(&c.records, "records", 500, "records BenchmarkCheckpointLag anchors (50 a second)")
	flag.IntVar(&c.loops, "loops", 100, "navigate + snapshot rounds on each daemon in BenchmarkCentralAck")
	flag.DurationVar(&c.level, "level", 20*time.Second, "how long the agents call at each level of BenchmarkFleetThroughput")
	flag.IntVar(&c.failovers, "failovers", 5, "kills in BenchmarkReplicaFailover")
	flag.StringVar(&c.dir, "dir", ".bench/fleet", "where the test binaries are built")
	flag.Parse()
	if err := c.measure(os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

// measure builds the two packages' test binaries, runs the benchmarks and
// writes the table to out (their output to log).
func (c *config) measure(out, log io.Writer) error {
	runs := []run{
		{pkg: "evidence/central", bench: "^BenchmarkShipLag$", benchtime: fmt.Sprintf("%dx", c.appends)},
		{pkg: "evidence/central", bench: "^BenchmarkShipLagAtCallPace$", benchtime: fmt.Sprintf("%dx", c.paced)},
		{pkg: "evidence/central", bench: "^BenchmarkCheckpointLag$", benchtime: fmt.Sprintf("%dx", c.records)},
		{pkg: "cmd/browsergate", bench: "^BenchmarkCentralAck$", benchtime: fmt.Sprintf("%dx", c.loops)},
		{pkg: "cmd/browsergate", bench: "^BenchmarkFleetThroughput$", benchtime: "1x", env: []string{"BROWSERGATE_FLEET_DURATION=" + c.level.String()}},
		{pkg: "cmd/browsergate", bench: "^BenchmarkReplicaFailover$", benchtime: fmt.Sprintf("%dx", c.failovers)},
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	binaries := map[string]string{}
	for _, r := range runs {
		if binaries[r.pkg] != "" {
			continue
		}
		bin := filepath.Join(dir, filepath.Base(r.pkg)+".test")
		build := exec.Command("go", "test", "-c", "-o", bin, "./"+r.pkg)
		build.Stdout, build.Stderr = log, log
		if err := build.Run(); err != nil {
			return fmt.Errorf("build the tests of %s: %w", r.pkg, err)
		}
		binaries[r.pkg] = bin
	}
	m, start := describeMachine(), time.Now()
	var all bytes.Buffer
	var failed []error
	for _, r := range runs {
		// A test binary runs in its package's directory, as go test runs
		// it: the benchmarks find the repository's files from there.
		cmd := exec.Command(binaries[r.pkg], "-test.run", "^$", "-test.bench", r.bench, "-test.benchtime", r.benchtime, "-test.timeout", "20m")
		cmd.Dir = r.pkg
		cmd.Env = append(os.Environ(), r.env...)
		cmd.Stdout = io.MultiWriter(log, &all)
		cmd.Stderr = log
		fmt.Fprintf(log, "fleetbench: %s %s\n", r.pkg, r.bench)
		if err := cmd.Run(); err != nil {
			failed = append(failed, fmt.Errorf("%s %s: %w", r.pkg, r.bench, err))
		}
	}
	results := parse(&all)
	fmt.Fprintln(out, m.heading(start, time.Now()))
	fmt.Fprintln(out)
	missing := writeTable(out, results, c)
	if missing > 0 {
		failed = append(failed, fmt.Errorf("%d figure(s) not measured (the output above says why)", missing))
	}
	return errors.Join(failed...)
}
