package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// percentile is the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method: the smallest duration that at least p% of ds are at
// or under. Zero for no durations.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100 + 0.999999999)
	return s[min(max(rank, 1), len(s))-1]
}

// callsPerSecond are the calls of the level, all agents together, per
// second of its timed window.
func (r levelResult) callsPerSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(len(r.calls)) / r.elapsed.Seconds()
}

// marginal is the PSS a session adds: (PSS at the end of the level − PSS
// of the idle server) / agents.
func (r levelResult) marginal() int64 {
	if r.agents == 0 || r.end.pss == 0 {
		return 0
	}
	return (r.end.pss - r.idle) / int64(r.agents)
}

// cpuPerCall is the CPU time the server's whole tree spent per call in the
// timed window.
func (r levelResult) cpuPerCall() time.Duration {
	if len(r.calls) == 0 {
		return 0
	}
	return time.Duration(r.cpu) * time.Second / clockTicks / time.Duration(len(r.calls))
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) }

func msec(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 0, 64)
}

// ratio is a/b with two decimals, or "—" when either is missing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "—"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64)
}

// betterPeer is the better of the peers' values at one level (higher is
// better when higher says so), or 0 when no peer measured it.
func betterPeer(results map[string][]levelResult, peers []string, level int, get func(levelResult) float64, higher bool) float64 {
	best := 0.0
	for _, p := range peers {
		for _, r := range results[p] {
			v := get(r)
			if r.agents != level || r.failed != "" || v <= 0 {
				continue
			}
			if best == 0 || (higher && v > best) || (!higher && v < best) {
				best = v
			}
		}
	}
	return best
}

func printLoad(w io.Writer, targets []loadTarget, levels []int, duration time.Duration, results map[string][]levelResult, cmdlines map[string]string, devtools string) {
	fmt.Fprintf(w, "\neach level: its number of agents at once, looping for %v after a warm-up round each (sign in, filter, a documentation page read); every call timed (an MCP call; for %s, a step over the DevTools protocol)\n\n", duration, floorName)
	writeLoadTable(w, targets, results)
	writeLoadRatios(w, targets, levels, results)
	writeLoadKinds(w, targets, results)
	writeLoadErrors(w, targets, results)
	fmt.Fprintf(w, "\ncommand lines:\n")
	for _, t := range targets {
		if c := cmdlines[t.d.name]; c != "" {
			fmt.Fprintf(w, "  %s: %s\n", t.d.name, c)
		}
	}
	fmt.Fprintf(w, "  the harness: %s\n", strings.Join(os.Args, " "))
	fmt.Fprintf(w, "  Chrome DevTools MCP mode: %s\n", devtools)
	fmt.Fprintf(w, "\nmachine: %s; Linux %s; %s CPUs; %s memory; %s\n", time.Now().UTC().Format(time.RFC3339),
		firstLine("uname", "-r"), firstLine("nproc"), memTotal(), firstLine("/usr/bin/chromium", "--version"))
}

func writeLoadTable(w io.Writer, targets []loadTarget, results map[string][]levelResult) {
	fmt.Fprintf(w, "| server | agents | calls/s | p50 ms | p95 ms | p99 ms | errors | PSS at the end, MiB | peak PSS, MiB | idle server PSS, MiB | marginal PSS a session, MiB | Chromium processes (browsers) | CPU ms a call | busiest browser main thread | session starts (p50 ms) |\n")
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", 15))
	for _, t := range targets {
		for _, r := range results[t.d.name] {
			if r.failed != "" {
				fmt.Fprintf(w, "| %s | %d | failed: %s |%s\n", t.d.name, r.agents, tableCell(r.failed, 300), strings.Repeat(" |", 12))
				continue
			}
			starts := "—"
			if len(r.starts) > 0 {
				starts = fmt.Sprintf("%d (%s)", len(r.starts), msec(percentile(r.starts, 50)))
			}
			fmt.Fprintf(w, "| %s | %d | %.1f | %s | %s | %s | %d | %s | %s | %s | %s | %d (%d) | %s | %.0f%% | %s |\n", t.d.name, r.agents, r.callsPerSecond(),
				msec(percentile(r.calls, 50)), msec(percentile(r.calls, 95)), msec(percentile(r.calls, 99)), r.errs,
				mib(r.end.pss), mib(r.peak.pss), mib(r.idle), mib(r.marginal()), r.end.chromiums, r.end.browsers,
				strconv.FormatFloat(float64(r.cpuPerCall().Microseconds())/1000, 'f', 1, 64), 100*r.mainThread, starts)
		}
	}
	fmt.Fprintf(w, "\nmarginal PSS a session is (PSS at the end of the level − PSS of the idle server) / agents; the idle server is what runs before the first agent connects (for Chrome DevTools MCP in isolated mode, nothing; for %s, its Chromium with the browser's first tab, about:blank)\n", floorName)
	fmt.Fprintf(w, "CPU is utime + stime of every process of the server's tree, and of the children they waited for, over the timed window\n")
	fmt.Fprintf(w, "busiest browser main thread is the share of the timed window that the busiest of the server's browser processes' main threads ran (utime + stime of /proc/PID/task/PID): Chromium handles every DevTools message, navigation and browser-side compositing of all its contexts on that one thread, so near 100%% it is what every call queues on, whatever the other cores do\n")
	fmt.Fprintf(w, "%s is the floor, not a server: one Chromium driven by chromedp in the harness, a browser context with one tab a session, each step the least any server needs (a snapshot is one Accessibility.getFullAXTree; no refs kept, no waits but a navigation's load event, no gate, no evidence, no submit rate limit); its CPU and memory are Chromium's alone, and its calls are CDP steps, timed as the servers' MCP calls are\n", floorName)
}

// writeLoadKinds breaks each level's latencies down by the kind of call:
// which calls make the p95.
func writeLoadKinds(w io.Writer, targets []loadTarget, results map[string][]levelResult) {
	fmt.Fprintf(w, "\nlatency by kind of call (p50 / p95 ms, and how many; \"read:\" is the long-page read):\n\n| server | agents | kind | calls | p50 ms | p95 ms |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, t := range targets {
		for _, r := range results[t.d.name] {
			byKind := map[string][]time.Duration{}
			for i, k := range r.kinds {
				byKind[k] = append(byKind[k], r.calls[i])
			}
			for _, k := range slices.Sorted(maps.Keys(byKind)) {
				d := byKind[k]
				fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %s |\n", t.d.name, r.agents, k, len(d), msec(percentile(d, 50)), msec(percentile(d, 95)))
			}
		}
	}
}

// loadPeers are the peers among targets: neither browsergate (the first)
// nor the floor, which the ratios are of and never to.
func loadPeers(targets []loadTarget) []string {
	var peers []string
	for _, t := range targets[1:] {
		if t.d.name != floorName {
			peers = append(peers, t.d.name)
		}
	}
	return peers
}

// writeLoadRatios writes browsergate's figures over the better peer's at
// each level, and then the floor's the same way: the ratio no server
// sharing one Chromium could beat on this machine. Each table is written
// if its server was measured.
func writeLoadRatios(w io.Writer, targets []loadTarget, levels []int, results map[string][]levelResult) {
	peers := loadPeers(targets)
	for _, name := range []string{targets[0].d.name, floorName} {
		if len(results[name]) > 0 {
			writeLoadRatio(w, name, peers, levels, results)
		}
	}
}

func writeLoadRatio(w io.Writer, name string, peers []string, levels []int, results map[string][]levelResult) {
	fmt.Fprintf(w, "\n%s ÷ the better peer at the same load:\n\n| agents | calls/s | p95 | marginal PSS a session | CPU a call |\n| --- | --- | --- | --- | --- |\n", name)
	for _, n := range levels {
		var of *levelResult
		for _, r := range results[name] {
			if r.agents == n && r.failed == "" {
				of = &r
			}
		}
		if of == nil {
			fmt.Fprintf(w, "| %d | — | — | — | — |\n", n)
			continue
		}
		cps := func(r levelResult) float64 { return r.callsPerSecond() }
		p95 := func(r levelResult) float64 { return float64(percentile(r.calls, 95)) }
		marg := func(r levelResult) float64 { return float64(r.marginal()) }
		cpu := func(r levelResult) float64 { return float64(r.cpuPerCall()) }
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", n,
			ratio(cps(*of), betterPeer(results, peers, n, cps, true)),
			ratio(p95(*of), betterPeer(results, peers, n, p95, false)),
			ratio(marg(*of), betterPeer(results, peers, n, marg, false)),
			ratio(cpu(*of), betterPeer(results, peers, n, cpu, false)))
	}
}

func writeLoadErrors(w io.Writer, targets []loadTarget, results map[string][]levelResult) {
	for _, t := range targets {
		for _, r := range results[t.d.name] {
			for _, m := range r.messages {
				fmt.Fprintf(w, "\n%s at %d agents: error: %.500s", t.d.name, r.agents, m)
			}
		}
	}
	fmt.Fprintln(w)
}

// tableCell is s on one line, without the table's separator, at most
// limit bytes.
func tableCell(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

func firstLine(name string, args ...string) string {
	b, err := exec.Command(name, args...).Output()
	if err != nil {
		return name + ": " + err.Error()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

// memTotal is /proc/meminfo's MemTotal, in GiB.
func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return strconv.FormatFloat(float64(kb)/(1<<20), 'f', 1, 64) + " GiB"
		}
	}
	return "unknown"
}
