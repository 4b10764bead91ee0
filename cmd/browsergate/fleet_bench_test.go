package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/internal/testkit/pglab"
)

// fleetDurationEnv sets how long each level of BenchmarkFleetThroughput
// runs (a Go duration; 20s when unset).
const fleetDurationEnv = "BROWSERGATE_FLEET_DURATION"

// pageLoop makes one round of the fleet benchmarks' call loop on cs: a
// navigate to a page of site (on loopback), then a snapshot of it. It
// returns each call's time in ms.
func pageLoop(cs *mcp.ClientSession, site string) ([2]float64, error) {
	var took [2]float64
	for i, c := range []struct {
		tool string
		args map[string]any
	}{
		{"e2e.navigate", map[string]any{"url": site + "/p"}},
		{"e2e.snapshot", nil},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		took[i] = float64(time.Since(start)) / float64(time.Millisecond)
		cancel()
		if err != nil {
			return took, fmt.Errorf("%s: %w", c.tool, err)
		}
		if res.IsError {
			return took, fmt.Errorf("%s refused: %s", c.tool, firstLine(resultText(res)))
		}
	}
	return took, nil
}

// BenchmarkCentralAck: the cost of central acknowledgement on real calls.
// Two daemons (the real binary over HTTP, each with its launched Chromium)
// ship their evidence to one PostgreSQL (fsync on, as a store is run):
// one with --evidence-ack local (the reply once the file holds the
// record), one with --evidence-ack central (the reply once PostgreSQL
// holds it too). One op is a navigate to a loopback page and a snapshot
// on each daemon's session, the daemons taking turns at going first. It
// reports each mode's p50 ms of a navigate and of a snapshot, and the
// difference (central less local). Medians, not means: on a shared
// machine a few slow calls move a mean by more than the difference.
// go test ./cmd/browsergate -run '^$' -bench CentralAck -benchtime 100x
func BenchmarkCentralAck(b *testing.B) {
	pg := pglab.Start(b, &pglab.Options{Durable: true})
	pg.CreateDatabase(b, "fleet")
	env := []string{"PGPASSFILE=" + pg.PassFile}
	site := fleetSite(b)
	modes := []string{"local", "central"}
	sessions := map[string]*mcp.ClientSession{}
	for _, mode := range modes {
		d := launchHTTP(b, nil, env, inputManifest(), "", "--store", pg.URL("fleet"), "--evidence-ack", mode)
		sessions[mode] = d.connect(b, "alice-token")
		for range 3 { // its browser context, and a warm page
			if _, err := pageLoop(sessions[mode], site); err != nil {
				b.Fatalf("%s: %v", mode, err)
			}
		}
	}
	// The times of each mode's navigates and snapshots.
	calls := map[string]*[2][]float64{"local": {}, "central": {}}
	i := 0
	for b.Loop() {
		for k := range modes {
			mode := modes[(i+k)%2]
			took, err := pageLoop(sessions[mode], site)
			if err != nil {
				b.Fatalf("%s: %v", mode, err)
			}
			for c := range took {
				calls[mode][c] = append(calls[mode][c], took[c])
			}
		}
		i++
	}
	for c, name := range []string{"navigate", "snapshot"} {
		p50 := map[string]float64{}
		for _, mode := range modes {
			p50[mode] = quantile(calls[mode][c], 0.5)
			b.ReportMetric(p50[mode], mode+"-"+name+"-p50-ms")
		}
		b.ReportMetric(p50["central"]-p50["local"], "central-added-"+name+"-ms")
	}
}

// BenchmarkFleetThroughput: calls a second of a fleet behind HAProxy
// (examples/haproxy/browsergate.cfg as shipped, its addresses changed),
// with two replicas and then one (r2 stopped, and taken out by HAProxy's
// health check), for 4 and 16 agents at once. Each agent (alice and bob
// in turn, a session each through HAProxy) makes the call loop of
// pageLoop without pause for a fixed time ($BROWSERGATE_FLEET_DURATION,
// 20 s), after one warm-up round outside the clock. The replicas, their
// Chromiums and HAProxy share this machine's cores. It reports calls a
// second (the calls answered over the time from the start until the last
// agent's last call), p50 and p95 ms a call, the sessions on each
// replica, and the errors (an agent stops at its first).
// go test ./cmd/browsergate -run '^$' -bench FleetThroughput -benchtime 1x
func BenchmarkFleetThroughput(b *testing.B) {
	level := 20 * time.Second
	if v := os.Getenv(fleetDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("%s: %v", fleetDurationEnv, err)
		}
		level = d
	}
	f := startFleet(b, "--max-sessions-per-agent", "16")
	site := fleetSite(b)
	run := func(b *testing.B, agents int) {
		css := make([]*mcp.ClientSession, agents)
		on := map[string]int{}
		for i := range css {
			cs, err := f.dial([]string{"alice", "bob"}[i%2] + "-token")
			if err != nil {
				b.Fatalf("agent %d: %v", i, err)
			}
			css[i] = cs
			on[replicaOf(cs.ID())]++
		}
		defer func() {
			var wg sync.WaitGroup
			for _, cs := range css {
				wg.Go(func() { cs.Close() })
			}
			wg.Wait()
		}()
		var wg sync.WaitGroup
		for i, cs := range css {
			wg.Go(func() {
				if _, err := pageLoop(cs, site); err != nil {
					b.Errorf("agent %d's warm-up: %v", i, err)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		var mu sync.Mutex
		var calls []float64
		var errs []error
		var elapsed time.Duration
		for b.Loop() {
			var last time.Time
			start := time.Now()
			stop := start.Add(level)
			for _, cs := range css {
				wg.Go(func() {
					var mine []float64
					var err error
					for time.Now().Before(stop) {
						var took [2]float64
						if took, err = pageLoop(cs, site); err != nil {
							break
						}
						mine = append(mine, took[0], took[1])
					}
					mu.Lock()
					defer mu.Unlock()
					calls = append(calls, mine...)
					if err != nil {
						errs = append(errs, err)
					}
					if now := time.Now(); now.After(last) {
						last = now
					}
				})
			}
			wg.Wait()
			elapsed += last.Sub(start)
		}
		b.ReportMetric(float64(len(calls))/elapsed.Seconds(), "calls/s")
		if len(errs) > 0 {
			b.Logf("%d agent(s) stopped at an error; the first: %v", len(errs), errs[0])
		}
		b.ReportMetric(quantile(calls, 0.5), "p50-ms")
		b.ReportMetric(quantile(calls, 0.95), "p95-ms")
		b.ReportMetric(float64(len(errs)), "errors")
		b.ReportMetric(float64(on["r1"]), "on-r1")
		b.ReportMetric(float64(on["r2"]), "on-r2")
		b.ReportMetric(0, "ns/op") // a level is a fixed time; calls/s is the figure
	}
	for _, agents := range []int{4, 16} {
		b.Run(fmt.Sprintf("replicas=2/agents=%d", agents), func(b *testing.B) { run(b, agents) })
	}
	f.replicas["r2"].stop(b)
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(f.hlog.String(), "r2 is DOWN"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("HAProxy did not take r2 out within 15 s:\n%s", f.hlog.String())
		}
	}
	for _, agents := range []int{4, 16} {
		b.Run(fmt.Sprintf("replicas=1/agents=%d", agents), func(b *testing.B) { run(b, agents) })
	}
}
