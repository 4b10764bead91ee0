package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/examples/demosite"
	"github.com/browsergate/browsergate/internal/proctree"
)

// The remote benchmarks (make bench-remote; root, netlab's hosts, and
// toxiproxy's server named by BROWSERGATE_TOXIPROXY) measure browsers on
// other hosts against the one the daemon launches, in one lab: the daemon
// runs `serve --http` on its host D, the demo site is on the web host W,
// and the pool host P runs Chromium behind toxiproxy, its DevTools
// forwarder, whose latency toxics give the DevTools path (the daemon's
// connections to the pool browser) a round trip of 0, 2, 10 or 50 ms more.
// Every call goes through the real binary from the official MCP client
// over HTTP, with the shipped policies and durable evidence. The pages'
// own requests go through the daemon's gate, with no toxic: the latency
// is on the DevTools path only.

// benchRTTs are the added round trips on the DevTools path, in ms.
var benchRTTs = []int{0, 2, 10, 50}

// benchManifest is a manifest of the remote benchmarks: tool %[1]s,
// connect %[2]q, then %[3]s (the [browser.remote] table); the demo site
// on the web host is its scope.
const benchManifest = `
[tool]
name = %[1]q
mode = "browser"
description = "a browser for the remote benchmarks"
timeout_seconds = 60

[browser]
connect = %[2]q
startup_timeout_seconds = 60
max_interactions = 1000000
%[3]s
[browser.scope]
allowed_domains = ["10.77.3.2"]
allow_private_cidrs = ["10.77.3.0/24"]
allowed_ports = ["8080"]

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.type_text]
`

// launchBench is the manifest of tool "local": a Chromium the daemon
// launches on its own host, the baseline.
var launchBench = fmt.Sprintf(benchManifest, "local", "launch", "")

// poolBench is the manifest of tool "pool": the pool host's browser,
// through toxiproxy (provider cdp-url).
var poolBench = fmt.Sprintf(benchManifest, "pool", "remote", `
[browser.remote]
provider = "cdp-url"
endpoints = ["http://10.77.1.2:9223"]
pool_cidrs = ["10.77.1.0/24"]
`)

// gridBench is the manifest of tool "grid": a browser of its own from the
// Selenium Grid on the pool host for each session, credentials in %s.
const gridBench = `
[browser.remote]
provider = "selenium"
url = "http://10.77.1.2:4444"
credentials_file = %q
pool_cidrs = ["10.77.1.0/24"]
`

// browserlessBench is the manifest of tool "bless": a browser of its own
// from browserless on the pool host, with the token in %q.
const browserlessBench = `
[browser.remote]
provider = "browserless"
url = "ws://10.77.1.2:3000"
credentials_file = %q
pool_cidrs = ["10.77.1.0/24"]
`

// benchLab is the lab of the remote benchmarks.
type benchLab struct {
	r     *remoteLab
	tp    *toxiproxy
	probe *cdpProbe
	site  string // the demo site, on the web host
}

// newBenchLab builds the lab: Chromium on the pool host with toxiproxy as
// its forwarder (no latency yet), and the demo site on the web host.
func newBenchLab(b *testing.B) *benchLab {
	b.Helper()
	bin := toxiproxyServer(b) // before anything starts: without it, skip at once
	r := newLabHosts(b)
	r.p.Chromium(b, 9222)
	tp := startToxiproxy(b, bin, r.p, "10.77.1.2:9223", "127.0.0.1:9222")
	r.devtools = "http://10.77.1.2:9223"
	ln, err := r.w.Listen("tcp", "10.77.3.2:8080")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: demosite.New(demosite.Options{}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return &benchLab{r: r, tp: tp, probe: newCDPProbe(b, r.d, r.devtools), site: "http://10.77.3.2:8080"}
}

// serve starts browsergate serve over HTTP on the daemon's host with the
// manifest and the daemon's gate for the pool; more are serve's flags.
func (l *benchLab) serve(b *testing.B, manifest string, more ...string) *httpDaemon {
	b.Helper()
	return startHTTPIn(b, l.r.d, manifest, "", append([]string{"--gate-listen", l.r.gate, "--log-level", "error"}, more...)...)
}

// setRTT sets the DevTools path's added round trip and returns the one
// the probe measures over it, in ms: the median of 20 round trips of a
// DevTools command that does no work, from the daemon's host. (Report it
// after the timed loop, which drops metrics reported before it.)
func (l *benchLab) setRTT(b *testing.B, ms int) float64 {
	b.Helper()
	l.tp.setRTT(b, ms)
	return l.probe.rtt(b, 20)
}

// timedCall calls a tool and returns its text and how long the call took,
// in ms; a refusal is an error. Safe to call from any goroutine.
func timedCall(cs *mcp.ClientSession, tool string, args map[string]any) (string, float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return "", ms, fmt.Errorf("%s: %w", tool, err)
	}
	text := resultText(res)
	if res.IsError {
		return text, ms, fmt.Errorf("%s refused: %s", tool, firstLine(text))
	}
	return text, ms, nil
}

// cycleCommands are the calls of a cycle, in order.
var cycleCommands = []string{"navigate", "snapshot", "type_text", "click"}

// cycle is one round of an agent's work on the demo site with tool's
// browser: navigate to the sign-in page, snapshot it, type a name into its
// Username field by ref, click its Docs link by ref (which loads the
// docs). Each call's time in ms is added to ms under its command. Safe to
// call from any goroutine.
func cycle(cs *mcp.ClientSession, tool, site string, ms map[string][]float64) error {
	var texts [4]string
	for i, command := range cycleCommands {
		var args map[string]any
		switch command {
		case "navigate":
			args = map[string]any{"url": site + "/login"}
		case "type_text":
			args = map[string]any{"ref": findRef(texts[1], "Username"), "text": "alice"}
		case "click":
			args = map[string]any{"ref": findRef(texts[1], "[Docs]")}
		}
		if command == "type_text" && (args["ref"] == "" || findRef(texts[1], "[Docs]") == "") {
			return fmt.Errorf("the sign-in page's snapshot has no Username field or Docs link:\n%s", texts[1])
		}
		text, took, err := timedCall(cs, tool+"."+command, args)
		if err != nil {
			return err
		}
		texts[i] = text
		ms[command] = append(ms[command], took)
	}
	if !strings.Contains(texts[3], `title="Documentation"`) {
		return fmt.Errorf("the click on Docs did not load the docs:\n%s", texts[3])
	}
	return nil
}

// BenchmarkRemoteCalls measures what an agent waits for, call by call,
// with its browser on the pool host at each added DevTools round trip,
// and with a browser the daemon launched (launch, the baseline). One op
// is a cycle (navigate, snapshot, type_text, click by ref, in one session
// that has its browser). Reported: each command's median (navigate-ms …);
// on the pool host the round trip the probe measured (rtt-ms), the
// median less the launched browser's (navigate-added-ms …), and past
// 0 ms the median less that at 0 ms divided by the round trip added
// (navigate-trips …: how many DevTools round trips the call waits for,
// one after another). The differences need the sub-benchmarks they
// compare with in the same run.
func BenchmarkRemoteCalls(b *testing.B) {
	l := newBenchLab(b)
	var base, zero map[string]float64
	var zeroRTT float64
	run := func(b *testing.B, d *httpDaemon, tool string) map[string]float64 {
		cs := d.connect(b, "alice-token")
		if err := cycle(cs, tool, l.site, map[string][]float64{}); err != nil { // the session's browser, warm
			b.Fatal(err)
		}
		ms := map[string][]float64{}
		for b.Loop() {
			if err := cycle(cs, tool, l.site, ms); err != nil {
				b.Fatal(err)
			}
		}
		medians := map[string]float64{}
		for _, command := range cycleCommands {
			medians[command] = median(ms[command])
			b.ReportMetric(medians[command], command+"-ms")
		}
		return medians
	}
	b.Run("launch", func(b *testing.B) {
		base = run(b, l.serve(b, launchBench), "local")
	})
	d := l.serve(b, poolBench)
	for _, rtt := range benchRTTs {
		b.Run("cdp-url/"+rttName(rtt), func(b *testing.B) {
			measured := l.setRTT(b, rtt)
			medians := run(b, d, "pool")
			b.ReportMetric(measured, "rtt-ms")
			for _, command := range cycleCommands {
				if base != nil {
					b.ReportMetric(medians[command]-base[command], command+"-added-ms")
				}
				if zero != nil && rtt > 0 {
					b.ReportMetric((medians[command]-zero[command])/(measured-zeroRTT), command+"-trips")
				}
			}
			if rtt == 0 {
				zero, zeroRTT = medians, measured
			}
		})
	}
}

// BenchmarkRemoteAcquire measures the time to acquire a session's browser
// from each provider: one op is a new MCP session's first call (a
// navigate to the docs), which waits for the session's browser to be
// ready (serve runs with --prelaunch=false, so nothing is made ready
// before the first call). Reported: first-call-ms, the median of those;
// warm-call-ms, the median of the same navigate made again in that
// session; acquire-ms, the difference; first-session-ms, the first call
// of the daemon's first session of that provider, which also starts or
// reaches the browser (the launch; cdp-url's connection and conformance
// probe; for selenium every session has a browser of its own).
//
//   - launch: a context and tab in the Chromium the daemon launched;
//   - cdp-url at each added round trip: a context and tab in the pool
//     host's browser, through toxiproxy;
//   - selenium: a WebDriver session from the Grid on the pool host (no
//     toxic: the Grid's se:cdp is not behind toxiproxy), its probe, then
//     the context and tab;
//   - browserless: browserless on the pool host launches a browser for
//     the session (no toxic either), its probe, then the context and tab.
func BenchmarkRemoteAcquire(b *testing.B) {
	l := newBenchLab(b)
	run := func(b *testing.B, d *httpDaemon, tool string) {
		url := l.site + "/docs"
		first, warm := []float64{}, []float64{}
		// session is one op: only its first call is timed (the timer
		// runs when it is called, as b.Loop wants it, and on return).
		session := func() {
			b.StopTimer()
			cs, err := d.dial("alice-token")
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			_, took, err := timedCall(cs, tool+".navigate", map[string]any{"url": url})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			first = append(first, took)
			_, took, err = timedCall(cs, tool+".navigate", map[string]any{"url": url})
			if err != nil {
				b.Fatal(err)
			}
			warm = append(warm, took)
			cs.Close()
			b.StartTimer()
		}
		session()
		cold := first[0]
		first, warm = first[:0], warm[:0]
		for b.Loop() {
			session()
		}
		b.ReportMetric(cold, "first-session-ms")
		b.ReportMetric(median(first), "first-call-ms")
		b.ReportMetric(median(warm), "warm-call-ms")
		b.ReportMetric(median(first)-median(warm), "acquire-ms")
	}
	b.Run("launch", func(b *testing.B) {
		run(b, l.serve(b, launchBench, "--prelaunch=false"), "local")
	})
	for _, rtt := range benchRTTs {
		b.Run("cdp-url/"+rttName(rtt), func(b *testing.B) {
			measured := l.setRTT(b, rtt)
			run(b, l.serve(b, poolBench, "--prelaunch=false"), "pool")
			b.ReportMetric(measured, "rtt-ms")
		})
	}
	l.tp.setRTT(b, 0)
	b.Run("selenium", func(b *testing.B) {
		g := startGrid(b, l.r)
		run(b, l.serve(b, fmt.Sprintf(benchManifest, "grid", "remote", fmt.Sprintf(gridBench, g.creds)), "--prelaunch=false"), "grid")
	})
	b.Run("browserless", func(b *testing.B) {
		bl := startBrowserless(b, l.r, "0")
		run(b, l.serve(b, fmt.Sprintf(benchManifest, "bless", "remote", fmt.Sprintf(browserlessBench, bl.creds)), "--prelaunch=false"), "bless")
	})
}

// BenchmarkRemoteCapacity measures one daemon serving 1, 4 and 16
// sessions at once whose browsers are on the pool host (one browser,
// a context each; DevTools through toxiproxy, no added latency): each
// session makes cycles (navigate, snapshot, type_text, click by ref) one
// call after another, all sessions at once. One op is three cycles of
// every session. Reported over the timed ops: calls-per-s, all calls
// done a second; p50-ms and p95-ms, of one call; cpu-ms/call, the
// daemon's processor time (utime + stime of its /proc/PID/stat) divided
// by the calls; and the daemon's memory after the last op, its
// proportional set size (MiB-pss, /proc/PID/smaps_rollup).
func BenchmarkRemoteCapacity(b *testing.B) {
	l := newBenchLab(b)
	d := l.serve(b, poolBench, "--max-sessions-per-agent", "16")
	pid := d.cmd.Process.Pid
	const cyclesPerOp = 3
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("sessions-%d", n), func(b *testing.B) {
			css := make([]*mcp.ClientSession, n)
			for i := range css {
				css[i] = d.connect(b, "alice-token")
			}
			// Each session's browser, ready and warm, outside the timing.
			var mu sync.Mutex
			var failed []error
			all := map[string][]float64{}
			round := func(cycles int, keep bool) {
				var wg sync.WaitGroup
				for _, cs := range css {
					wg.Go(func() {
						ms := map[string][]float64{}
						for range cycles {
							if err := cycle(cs, "pool", l.site, ms); err != nil {
								mu.Lock()
								failed = append(failed, err)
								mu.Unlock()
								return
							}
						}
						if keep {
							mu.Lock()
							for k, v := range ms {
								all[k] = append(all[k], v...)
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			round(1, false)
			if len(failed) > 0 {
				b.Fatalf("warm-up: %v", failed[0])
			}
			cpu0, _ := proctree.ReadStat(pid)
			start := time.Now()
			for b.Loop() {
				round(cyclesPerOp, true)
			}
			took := time.Since(start)
			cpu1, _ := proctree.ReadStat(pid)
			if len(failed) > 0 {
				b.Fatalf("%d cycle(s) failed; the first: %v", len(failed), failed[0])
			}
			var calls []float64
			for _, v := range all {
				calls = append(calls, v...)
			}
			b.ReportMetric(float64(len(calls))/took.Seconds(), "calls-per-s")
			b.ReportMetric(quantile(calls, 0.95), "p95-ms")
			b.ReportMetric(quantile(calls, 0.5), "p50-ms")
			b.ReportMetric(float64(cpu1.CPU-cpu0.CPU)*1000/proctree.ClockTicks/float64(len(calls)), "cpu-ms/call")
			b.ReportMetric(float64(pss(b, pid))/(1<<20), "MiB-pss")
			for _, cs := range css {
				cs.Close()
			}
		})
	}
}
