package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestLeastSquaresSlopeAndError: a straight line has its slope and no
// error; points scattered about a line have the slope and standard error
// worked out by hand.
func TestLeastSquaresSlopeAndError(t *testing.T) {
	line := leastSquares([]float64{0, 1, 2, 3}, []float64{5, 7, 9, 11})
	if line.Slope != 2 || line.SE != 0 || line.N != 4 {
		t.Errorf("a line of slope 2: %+v", line)
	}
	// y = 1, 3, 2, 4 at x = 0..3: Sxy 4, Sxx 5, slope 0.8, intercept 1.3,
	// residuals -0.3 0.9 -0.9 0.3, RSS 1.8: SE = sqrt(1.8/2/5).
	f := leastSquares([]float64{0, 1, 2, 3}, []float64{1, 3, 2, 4})
	if math.Abs(f.Slope-0.8) > 1e-12 || math.Abs(f.SE-math.Sqrt(1.8/2/5)) > 1e-12 {
		t.Errorf("scattered points: %+v, want slope 0.8, SE %v", f, math.Sqrt(1.8/2/5))
	}
	if f := leastSquares([]float64{1, 1, 1}, []float64{1, 2, 3}); !math.IsNaN(f.Slope) {
		t.Errorf("samples at one time have no slope: %+v", f)
	}
	if f := leastSquares([]float64{0, 1}, []float64{0, 1}); f.Slope != 1 || !math.IsNaN(f.SE) {
		t.Errorf("two samples: slope 1 with no error: %+v", f)
	}
}

// TestJudgeTellsLeaksFromNoise: a steady climb is beyond noise; a flat
// series with scatter is not; a rise that levels off in the second half
// is warming up, not leaking; a fall is not a leak; too few samples are
// said to be too few.
func TestJudgeTellsLeaksFromNoise(t *testing.T) {
	hours := make([]float64, 12)
	for i := range hours {
		hours[i] = float64(i) / 60
	}
	series := func(f func(i int) float64) []float64 {
		ys := make([]float64, len(hours))
		for i := range ys {
			ys[i] = f(i)
		}
		return ys
	}
	scatter := []float64{0.4, -0.3, 0.1, -0.5, 0.2, 0.3, -0.1, -0.4, 0.5, 0, -0.2, 0.1}
	cases := []struct {
		name   string
		ys     []float64
		beyond bool
		why    string
	}{
		{"a leak of one profile dir every two minutes", series(func(i int) float64 { return float64(1 + i/2) }), true, "still in the second half"},
		{"a climb with scatter", series(func(i int) float64 { return 100 + 2*float64(i) + scatter[i] }), true, "beyond"},
		{"a slight rise lost in the scatter", series(func(i int) float64 { return 300 + 0.02*float64(i) + scatter[i] }), false, "twice its standard error"},
		{"flat", series(func(int) float64 { return 9 }), false, "flat"},
		{"rises, then levels off", series(func(i int) float64 { return 50 + 10*float64(min(i, 5)) }), false, "levelled off"},
		{"falls", series(func(i int) float64 { return 50 - float64(i) }), false, "falling"},
	}
	for _, c := range cases {
		v := judge(hours, c.ys)
		if v.Beyond != c.beyond || !strings.Contains(v.Why, c.why) {
			t.Errorf("%s: beyond %v (%s), want %v (%q); %+v", c.name, v.Beyond, v.Why, c.beyond, c.why, v)
		}
	}
	if v := judge(hours[:3], []float64{1, 2, 3}); v.Beyond || !strings.Contains(v.Why, "too few samples") {
		t.Errorf("three samples: %+v", v)
	}
}

// TestSummaryLeavesOutWarmUpAndFlagsLeaks: the slopes are of the run's
// samples after the warm-up only (a climb during it is not a leak); a
// resource rising after it is named among the leaks and marked in the
// table; the evidence file is shown per call, never judged.
func TestSummaryLeavesOutWarmUpAndFlagsLeaks(t *testing.T) {
	var samples []sample
	samples = append(samples, sample{At: -time.Second, Phase: "idle", TreePSS: 10 * mib, ProfileDirs: 1})
	for m := 1; m <= 20; m++ {
		s := sample{At: time.Duration(m) * time.Minute, Phase: "run", ProfileDirs: 1,
			Calls: int64(100 * m), EvidenceBytes: int64(2000 * 100 * m), Goroutines: 60}
		// The tree grows during the warm-up (the first 5 minutes), then
		// holds; the goroutines creep up after it.
		s.TreePSS = int64(min(m, 5)) * 100 * mib
		if m > 5 {
			s.Goroutines = float64(60 + 3*(m-5))
		}
		samples = append(samples, s)
	}
	samples = append(samples, sample{At: 21 * time.Minute, Phase: "after", Goroutines: 1000})
	table, leaks := summary(samples, 5*time.Minute)
	if len(leaks) != 1 || leaks[0] != "goroutines" {
		t.Errorf("leaks %v, want just the goroutines\n%s", leaks, table)
	}
	rows := map[string]string{}
	for line := range strings.Lines(table) {
		if cells := strings.Split(line, "|"); len(cells) > 2 {
			rows[strings.TrimSpace(cells[1])] = line
		}
	}
	if !strings.Contains(rows["goroutines"], "**yes**") {
		t.Errorf("goroutines row: %q", rows["goroutines"])
	}
	if r := rows["whole tree PSS (daemon + Chromium)"]; !strings.Contains(r, "| 500 MiB | 500 MiB |") || !strings.Contains(r, "no: ") {
		t.Errorf("the tree's row (flat after the warm-up): %q", r)
	}
	if r := rows["evidence file"]; !strings.Contains(r, "2000 bytes per call") || strings.Contains(r, "yes") {
		t.Errorf("the evidence row: %q", r)
	}
	if !strings.Contains(table, "over the 16 samples after the warm-up (5m0s)") {
		t.Errorf("the table does not say which samples it fits:\n%s", table)
	}
}

// TestParseMetricsReadsGaugesAndRefusesOtherLines: the daemon's text
// format is read name by name; a line that is not `name value` is an
// error that says which line.
func TestParseMetricsReadsGaugesAndRefusesOtherLines(t *testing.T) {
	m, err := parseMetrics("# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\ngo_memstats_heap_inuse_bytes 12345678\n")
	if err != nil || m["go_goroutines"] != 42 || m["go_memstats_heap_inuse_bytes"] != 12345678 {
		t.Errorf("parseMetrics: %v %v", m, err)
	}
	if _, err := parseMetrics("go_goroutines 1\nbroken\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken line: %v, want an error naming line 2", err)
	}
	if _, err := parseMetrics("go_goroutines many\n"); err == nil {
		t.Error("a value that is not a number was taken")
	}
}

// TestConfigCheckRefusesFlagsThatMakeNoSoak: each refusal names its flag
// and why; a warm-up longer than a third of the duration is cut to it.
func TestConfigCheckRefusesFlagsThatMakeNoSoak(t *testing.T) {
	good := config{binary: "trend.go", policies: "../../policies", agents: 16, duration: time.Hour, every: time.Minute,
		warmup: 10 * time.Minute, sessionEvery: 3 * time.Minute}
	for _, c := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.agents = 0 }, "-agents 0"},
		{func(c *config) { c.every = 0 }, "-every 0s"},
		{func(c *config) { c.duration = 3 * time.Minute }, "-duration 3m0s: want at least four samples"},
		{func(c *config) { c.warmup = -time.Second }, "-warmup -1s"},
		{func(c *config) { c.sessionEvery = 0 }, "-session-every 0s"},
		{func(c *config) { c.binary = "no-such-browsergate" }, "-binary"},
		{func(c *config) { c.policies = "." }, "-policies .: not a policy directory"},
	} {
		cfg := good
		c.change(&cfg)
		if err := cfg.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("check: %v, want %q", err, c.want)
		}
	}
	cfg := good
	cfg.duration, cfg.warmup = 9*time.Minute, 10*time.Minute
	if err := cfg.check(); err != nil || cfg.warmup != 3*time.Minute {
		t.Errorf("a warm-up longer than a third: %v, warm-up %s, want 3m0s", err, cfg.warmup)
	}
}
