package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseLevels(t *testing.T) {
	t.Parallel()
	got, err := parseLevels("1, 4,16,64")
	if err != nil || !slices.Equal(got, []int{1, 4, 16, 64}) {
		t.Errorf(`parseLevels("1, 4,16,64") = %v, %v`, got, err)
	}
	for in, want := range map[string]string{
		"":      `item 1, "", is not a whole number`,
		"4,,8":  `item 2, "", is not a whole number`,
		"1,0":   `item 2, "0", is not a whole number of agents of 1 or more`,
		"-3":    `item 1, "-3"`,
		"4,x":   `item 2, "x"`,
		"2.5":   `item 1, "2.5"`,
		"4,8,4": "4 agents is listed twice",
	} {
		if _, err := parseLevels(in); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `-agents "`+in+`"`) {
			t.Errorf("parseLevels(%q): %v, want an error naming the flag, its value and %q", in, err, want)
		}
	}
}

// TestParseProcStat: the fields are counted from the command's last ')',
// whatever the command holds; a line that is not a stat line is refused
// with what is wrong.
func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime …
	line := "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 9 0 123456 1000000 300 18446744073709551615"
	s, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := (procStat{pid: 4242, ppid: 17, comm: "a) b (c)", state: 'S', cpu: 250 + 50 + 7 + 3, own: 250 + 50, start: 123456}); s != want {
		t.Errorf("parseProcStat = %+v, want %+v", s, want)
	}
	for in, want := range map[string]string{
		"4242 chromium S 1":                    "no (command)",
		"x (chromium) S 1 2 3":                 `pid "x"`,
		"4242 (chromium) S 1 2 3":              "fields after the command",
		strings.Replace(line, "250", "2x0", 1): "field 14",
	} {
		if _, err := parseProcStat(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseProcStat(%q): %v, want an error saying %q", in, err, want)
		}
	}
}

// TestTreeOf: a tree is its roots and everything below them, not their
// parents or siblings.
func TestTreeOf(t *testing.T) {
	t.Parallel()
	procs := map[int]procStat{}
	for pid, ppid := range map[int]int{10: 1, 11: 10, 12: 11, 13: 11, 20: 1, 21: 20, 30: 1, 31: 30, 32: 31} {
		procs[pid] = procStat{pid: pid, ppid: ppid}
	}
	var got []int
	for _, s := range treeOf(procs, []int{11, 30}) {
		got = append(got, s.pid)
	}
	slices.Sort(got)
	if want := []int{11, 12, 13, 30, 31, 32}; !slices.Equal(got, want) {
		t.Errorf("treeOf(11, 30) = %v, want %v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted: 100 ms down to 1 ms
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50, 95: 95, 99: 99, 100: 100, 0.5: 1} {
		if got := percentile(ds, p); got != want*time.Millisecond {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v ms", p, got, want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("percentile of one = %v, want it", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of none = %v, want 0", got)
	}
}

// TestLevelResultFigures: calls per second over the timed window, the
// marginal PSS a session against the idle server, and CPU a call from
// clock ticks.
func TestLevelResultFigures(t *testing.T) {
	t.Parallel()
	r := levelResult{agents: 4, calls: make([]time.Duration, 200), elapsed: 10 * time.Second,
		idle: 100 << 20, end: treeSample{pss: 300 << 20}, cpu: 900}
	if got := r.callsPerSecond(); got != 20 {
		t.Errorf("calls/s = %v, want 20", got)
	}
	if got := r.marginal(); got != 50<<20 {
		t.Errorf("marginal = %d MiB, want 50", got>>20)
	}
	if got := r.cpuPerCall(); got != 45*time.Millisecond { // 9 s of CPU over 200 calls
		t.Errorf("CPU a call = %v, want 45ms", got)
	}
	if (levelResult{agents: 4}).cpuPerCall() != 0 || (levelResult{agents: 4}).callsPerSecond() != 0 || (levelResult{agents: 4}).marginal() != 0 {
		t.Error("a level without calls or samples has figures")
	}
}

// TestBusiestMainThread: the share of the window of the busiest browser
// main thread seen in both samples; one that started or ended between
// them (another process with a pid, or one started anew) is not compared.
func TestBusiestMainThread(t *testing.T) {
	t.Parallel()
	before := treeSample{mainThreads: map[[2]int64]int64{{10, 1}: 100, {20, 1}: 500, {30, 1}: 0}}
	after := treeSample{mainThreads: map[[2]int64]int64{{10, 1}: 400, {20, 1}: 650, {30, 9}: 1000, {40, 1}: 900}}
	if got := busiestMainThread(before, after, 1000); got != 0.3 {
		t.Errorf("busiest main thread = %v, want 0.3 (the first browser's 300 ticks of 1000)", got)
	}
	if got := busiestMainThread(before, after, 0); got != 0 {
		t.Errorf("with no window: %v, want 0", got)
	}
}

// TestLoadTableReportsAFailedServer: a server that failed at a level is a
// row saying so (and why), and no ratio is made from it; the ratios take
// the better peer: the higher calls/s, the lower p95 and memory.
func TestLoadTableReportsAFailedServer(t *testing.T) {
	t.Parallel()
	targets := []loadTarget{{d: driver{name: "browsergate"}}, {d: driver{name: "playwright-mcp"}}, {d: driver{name: "chrome-devtools-mcp"}}}
	calls := func(n int, d time.Duration) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }
	results := map[string][]levelResult{
		"browsergate": {
			{agents: 1, calls: calls(100, 100*time.Millisecond), elapsed: 10 * time.Second, idle: 50 << 20, end: treeSample{pss: 80 << 20, browsers: 1}},
			{agents: 64, failed: "start: browsergate ended: out of | memory"},
		},
		"playwright-mcp": {
			{agents: 1, calls: calls(50, 400*time.Millisecond), elapsed: 10 * time.Second, idle: 100 << 20, end: treeSample{pss: 200 << 20}},
			{agents: 64, calls: calls(10, time.Second), elapsed: 10 * time.Second, errs: 3, messages: []string{"session start: refused"}, idle: 100 << 20, end: treeSample{pss: 900 << 20}},
		},
		"chrome-devtools-mcp": {
			{agents: 1, calls: calls(40, 200*time.Millisecond), elapsed: 10 * time.Second, end: treeSample{pss: 300 << 20}},
			{agents: 64, failed: "start: no memory"},
		},
	}
	var b bytes.Buffer
	writeLoadTable(&b, targets, results)
	writeLoadRatios(&b, targets, []int{1, 64}, results)
	writeLoadErrors(&b, targets, results)
	out := b.String()
	for _, want := range []string{
		"| browsergate | 64 | failed: start: browsergate ended: out of \\| memory |",
		"| chrome-devtools-mcp | 64 | failed: start: no memory |",
		"| playwright-mcp | 64 | 1.0 | 1000 | 1000 | 1000 | 3 |",
		// calls/s 10 ÷ the better 5; p95 100 ÷ the better 200 ms; marginal
		// 30 MiB ÷ the better 100.
		"| 1 | 2.00 | 0.50 | 0.30 | — |",
		"| 64 | — | — | — | — |",
		"playwright-mcp at 64 agents: error: session start: refused",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

// TestLoadReportOfTheFloor: the floor is a row of the load table and the
// by-kind table like a server, and has a ratio table of its own over the
// better peer; the better peer is one of the two peers, never the floor,
// in browsergate's table as in the floor's.
func TestLoadReportOfTheFloor(t *testing.T) {
	t.Parallel()
	targets := []loadTarget{{d: driver{name: "browsergate"}}, {d: driver{name: "playwright-mcp"}}, {d: driver{name: "chrome-devtools-mcp"}}, {d: driver{name: floorName}}}
	calls := func(n int, d time.Duration) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }
	kinds := func(n int, k string) []string { return slices.Repeat([]string{k}, n) }
	results := map[string][]levelResult{
		"browsergate": {{agents: 2, calls: calls(100, 100*time.Millisecond), kinds: kinds(100, "click"), elapsed: 10 * time.Second,
			idle: 50 << 20, end: treeSample{pss: 110 << 20, browsers: 1}, cpu: 100}},
		"playwright-mcp": {{agents: 2, calls: calls(50, 400*time.Millisecond), kinds: kinds(50, "click"), elapsed: 10 * time.Second,
			idle: 100 << 20, end: treeSample{pss: 300 << 20, browsers: 1}, cpu: 200}},
		"chrome-devtools-mcp": {{agents: 2, calls: calls(40, 200*time.Millisecond), kinds: kinds(40, "click"), elapsed: 10 * time.Second,
			end: treeSample{pss: 600 << 20, browsers: 2}, cpu: 400}},
		// Better than either peer on every figure: were it taken for the
		// better peer, browsergate's ratios would change.
		floorName: {{agents: 2, calls: calls(400, 25*time.Millisecond), kinds: append(kinds(300, "snapshot"), kinds(100, "read: navigate")...),
			elapsed: 10 * time.Second, idle: 40 << 20, end: treeSample{pss: 80 << 20, browsers: 1, chromiums: 5}, cpu: 40, mainThread: 0.875}},
	}
	var b bytes.Buffer
	writeLoadTable(&b, targets, results)
	writeLoadRatios(&b, targets, []int{2, 16}, results)
	writeLoadKinds(&b, targets, results)
	out := b.String()
	for _, want := range []string{
		"| chromium-alone | 2 | 40.0 | 25 | 25 | 25 | 0 | 80 | 0 | 40 | 20 | 5 (1) | 1.0 | 88% | — |",
		// browsergate: calls/s 10 ÷ the better peer's 5; p95 100 ÷ 200 ms;
		// marginal 30 ÷ 100 MiB; CPU 10 ÷ 40 ms a call (Playwright MCP's
		// 2 s over 50 calls, Chrome DevTools MCP's 4 s over 40).
		"browsergate ÷ the better peer at the same load:\n\n| agents | calls/s | p95 | marginal PSS a session | CPU a call |\n| --- | --- | --- | --- | --- |\n| 2 | 2.00 | 0.50 | 0.30 | 0.25 |\n| 16 | — | — | — | — |\n",
		// The floor: 40 ÷ 5 calls/s; 25 ÷ 200 ms; 20 ÷ 100 MiB; 1 ÷ 40 ms.
		"chromium-alone ÷ the better peer at the same load:\n\n| agents | calls/s | p95 | marginal PSS a session | CPU a call |\n| --- | --- | --- | --- | --- |\n| 2 | 8.00 | 0.12 | 0.20 | 0.03 |\n| 16 | — | — | — | — |\n",
		"| chromium-alone | 2 | read: navigate | 100 | 25 | 25 |",
		"| chromium-alone | 2 | snapshot | 300 | 25 | 25 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	// A run without the floor has no table of it.
	delete(results, floorName)
	b.Reset()
	writeLoadRatios(&b, targets, []int{2}, results)
	if strings.Contains(b.String(), floorName) || !strings.Contains(b.String(), "browsergate ÷ the better peer") {
		t.Errorf("without the floor measured:\n%s", b.String())
	}
}

// TestChooseTargets: the load scenario's targets are the three servers and
// then the floor; -servers chromium-alone measures the floor alone, a list
// keeps the targets' order, and a name that is no target is refused with
// the names there are.
func TestChooseTargets(t *testing.T) {
	t.Parallel()
	targets := loadTargets("browsergate", "manifest.toml", "repo", "peers", t.TempDir(), "isolated", nil)
	names := func(ts []loadTarget) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.d.name)
		}
		return out
	}
	all := []string{"browsergate", "playwright-mcp", "chrome-devtools-mcp", floorName}
	if got := names(targets); !slices.Equal(got, all) {
		t.Fatalf("load targets %q, want %q", got, all)
	}
	for _, c := range []struct {
		only, want []string
	}{
		{nil, all},
		{[]string{"chromium-alone"}, []string{floorName}},
		{[]string{"chromium-alone", "browsergate"}, []string{"browsergate", floorName}},
	} {
		got, err := chooseTargets(targets, c.only)
		if err != nil || !slices.Equal(names(got), c.want) {
			t.Errorf("-servers %q: %q, %v; want %q", c.only, names(got), err, c.want)
		}
	}
	if got := names(targets); !slices.Equal(got, all) {
		t.Errorf("choosing changed the targets: %q", got)
	}
	_, err := chooseTargets(targets, []string{"browsergate", "chromium-alone+waits"})
	if err == nil || !strings.Contains(err.Error(), `-servers: "chromium-alone+waits" is none of the load scenario's servers (browsergate, playwright-mcp, chrome-devtools-mcp, chromium-alone)`) {
		t.Errorf("-servers naming the speed scenario's second floor: %v", err)
	}
}

func TestAddDistinct(t *testing.T) {
	t.Parallel()
	var ms []string
	for _, m := range []string{
		"sign in: click refused: Error: Element with uid 1_8 no longer exists on the page, try again",
		"sign in: click refused: Error: Element with uid 2_9 no longer exists on the page, try again",
		"filter: refs not found",
		"a", "b", "c", "d",
	} {
		ms = addDistinct(ms, m, 5)
	}
	if want := []string{ms[0], "filter: refs not found", "a", "b", "c"}; !slices.Equal(ms, want) || !strings.Contains(ms[0], "1_8") {
		t.Errorf("addDistinct kept %q", ms)
	}
}

// loadFixture is a run's directory, browsergate built into it, the app
// site, and a documentation page that holds a percent-encoded %81 (a C1
// control once held browsergate's secret masker in a loop after a
// password was typed, and the agent's read never returned).
func loadFixture(t *testing.T) (repo, bin, manifest, dir, site, docs string, pages []page) {
	t.Helper()
	dir = t.TempDir()
	t.Setenv("TMPDIR", dir) // buildBrowsergate builds into it; Chromium's singleton sockets go there
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin = buildBrowsergate(repo)
	manifest = writeManifest(dir, "click", "type_text", "select_option", "submit_form")
	page81 := filepath.Join(dir, "links.html")
	body := `<!doctype html><title>Links</title><h1>Links</h1><p><a href="/wiki/%E3%81%82">あ</a> and <a href="/x%81y">a stray %81</a>.</p>`
	if err := os.WriteFile(page81, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	pages = []page{{name: "links", path: page81}, {name: "form-and-table", path: filepath.Join(repo, "cmd/peerbench/testdata/form.html")}}
	return repo, bin, manifest, dir, appSite(), serve(pages), pages
}

// treeWatch notes the processes of a server's tree each time the level
// samples it, to check that none is left after the level.
type treeWatch struct {
	mu   sync.Mutex
	seen map[[2]int64]procStat // by pid and start time
}

// wrap is target with its server's roots watched.
func (w *treeWatch) wrap(target loadTarget) loadTarget {
	w.seen = map[[2]int64]procStat{}
	start := target.start
	target.start = func(n int) (*loadServer, error) {
		srv, err := start(n)
		if err != nil {
			return nil, err
		}
		roots := srv.roots
		srv.roots = func() []int {
			r := roots()
			tree := treeOf(allProcs(), r)
			w.mu.Lock()
			defer w.mu.Unlock()
			for _, s := range tree {
				w.seen[[2]int64{int64(s.pid), s.start}] = s
			}
			return r
		}
		return srv, nil
	}
	return target
}

// left are the watched processes still running.
func (w *treeWatch) left() []procStat {
	w.mu.Lock()
	defer w.mu.Unlock()
	var all []procStat
	for _, s := range w.seen {
		all = append(all, s)
	}
	return stillRunning(all)
}

// TestLoadLevelOnBrowsergate: two agents over HTTP on one `serve --http`
// daemon, through the official MCP client, with Debian's Chromium: every
// flow and page read succeeds (the read of a page holding %81 after the
// sign-in typed a password too), every call is timed, the daemon runs one
// browser for both sessions, a new MCP session is opened before the
// shipped submit-rate-limit would refuse a submission, and nothing the
// level started is left running.
func TestLoadLevelOnBrowsergate(t *testing.T) {
	repo, bin, manifest, dir, site, docs, pages := loadFixture(t)
	target := loadTargets(bin, manifest, repo, "", dir, "isolated", nil)[0]
	// Two submissions a session (the warm-up round's): the first timed flow
	// opens a new session.
	target.d.submitsPerSession = 2
	var w treeWatch
	r, cmdline := runLevel(w.wrap(target), 2, 3*time.Second, site, docs, pages)
	defer stopAll()
	if r.failed != "" || r.errs != 0 {
		t.Fatalf("failed %q, %d errors: %q", r.failed, r.errs, r.messages)
	}
	if len(r.calls) == 0 || r.callsPerSecond() <= 0 {
		t.Errorf("%d calls timed in %v", len(r.calls), r.elapsed)
	}
	if len(r.starts) < 2 {
		t.Errorf("%d new sessions opened for the submit-rate-limit policy, want one an agent at least", len(r.starts))
	}
	if r.end.browsers != 1 || r.end.chromiums < 2 {
		t.Errorf("the daemon's tree holds %d Chromium processes of which %d browsers, want one browser (and its renderers)", r.end.chromiums, r.end.browsers)
	}
	if r.idle <= 0 || r.end.pss <= r.idle || r.peak.pss < r.end.pss || r.cpu <= 0 {
		t.Errorf("memory and CPU: idle %d, end %d, peak %d bytes, %d ticks", r.idle, r.end.pss, r.peak.pss, r.cpu)
	}
	if len(r.end.mainThreads) != 1 || r.mainThread <= 0 || r.mainThread > 1.05 {
		t.Errorf("the browser's main thread: %d read, busy %.2f of the window", len(r.end.mainThreads), r.mainThread)
	}
	if !strings.Contains(cmdline, "serve") || !strings.Contains(cmdline, "--http 127.0.0.1:0") || !strings.Contains(cmdline, "--agents") {
		t.Errorf("command line %q", cmdline)
	}
	if left := w.left(); len(left) > 0 {
		t.Errorf("left running after the level: %+v", left)
	}
}

// TestLoadLevelOnPeers: the peers in their multi-client modes, two agents
// each: Playwright MCP over HTTP runs one browser for both clients,
// Chrome DevTools MCP a process and a browser each; every flow and read
// succeeds with their own tools and refs, and nothing is left running. It
// needs the npm packages (`make peerbench` puts them in .peers, or
// $PEERBENCH_PEERS).
func TestLoadLevelOnPeers(t *testing.T) {
	peers := os.Getenv("PEERBENCH_PEERS")
	if peers == "" {
		peers = "../../.peers"
	}
	peers, _ = filepath.Abs(peers)
	for _, p := range []string{"node_modules/@playwright/mcp/cli.js", "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"} {
		if _, err := os.Stat(filepath.Join(peers, p)); err != nil {
			t.Skipf("the peers are not installed in %s (make peerbench, or PEERBENCH_PEERS): %v", peers, err)
		}
	}
	repo, bin, manifest, dir, site, docs, pages := loadFixture(t)
	targets := loadTargets(bin, manifest, repo, peers, dir, "isolated", nil)
	defer stopAll()
	for _, c := range []struct {
		target   loadTarget
		browsers int
	}{{targets[1], 1}, {targets[2], 2}} {
		var w treeWatch
		r, _ := runLevel(w.wrap(c.target), 2, 3*time.Second, site, docs, pages)
		name := c.target.d.name
		if r.failed != "" || r.errs != 0 {
			t.Errorf("%s: failed %q, %d errors: %q", name, r.failed, r.errs, r.messages)
			continue
		}
		if len(r.calls) == 0 {
			t.Errorf("%s: no call timed", name)
		}
		if r.end.browsers != c.browsers {
			t.Errorf("%s: %d browsers for 2 agents, want %d", name, r.end.browsers, c.browsers)
		}
		if left := w.left(); len(left) > 0 {
			t.Errorf("%s: left running after the level: %+v", name, left)
		}
	}
}

// TestLoadLevelOnTheFloor: two agents on the floor, with Debian's Chromium:
// every flow and page read succeeds through floor.go's agent, every call is
// timed by kind, the level runs one browser for both sessions (a browser
// context each), no session is reopened (the floor has no submit rate
// limit), and neither a process nor the profile is left after the level.
func TestLoadLevelOnTheFloor(t *testing.T) {
	repo, bin, manifest, dir, site, docs, pages := loadFixture(t)
	targets := loadTargets(bin, manifest, repo, "", dir, "isolated", nil)
	target := targets[len(targets)-1]
	var w treeWatch
	r, cmdline := runLevel(w.wrap(target), 2, 3*time.Second, site, docs, pages)
	defer stopAll()
	if r.failed != "" || r.errs != 0 {
		t.Fatalf("failed %q, %d errors: %q", r.failed, r.errs, r.messages)
	}
	if len(r.calls) == 0 || len(r.kinds) != len(r.calls) {
		t.Errorf("%d calls timed, %d kinds", len(r.calls), len(r.kinds))
	}
	for _, k := range []string{"navigate", "snapshot", "fill", "click"} {
		if !slices.Contains(r.kinds, k) {
			t.Errorf("no %s call timed: %q", k, slices.Compact(slices.Sorted(slices.Values(r.kinds))))
		}
	}
	if len(r.starts) != 0 {
		t.Errorf("%d sessions reopened in the timed window; the floor has no submit rate limit", len(r.starts))
	}
	if r.end.browsers != 1 || r.end.chromiums < 2 {
		t.Errorf("the floor's tree holds %d Chromium processes of which %d browsers, want one browser (and its renderers)", r.end.chromiums, r.end.browsers)
	}
	if r.idle <= 0 || r.end.pss <= 0 || r.cpu <= 0 {
		t.Errorf("memory and CPU: idle %d, end %d bytes, %d ticks", r.idle, r.end.pss, r.cpu)
	}
	if !strings.Contains(cmdline, "/usr/bin/chromium") || !strings.Contains(cmdline, "browser context") {
		t.Errorf("command line %q", cmdline)
	}
	if left := w.left(); len(left) > 0 {
		t.Errorf("left running after the level: %+v", left)
	}
	if profiles, _ := filepath.Glob(filepath.Join(dir, "peerbench-floor-*")); len(profiles) > 0 {
		t.Errorf("the floor's profile is left: %q", profiles)
	}
}
