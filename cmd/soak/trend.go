package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// fit is a least-squares line through samples: its slope per hour, and the
// slope's standard error (NaN with fewer than three samples).
type fit struct {
	Slope, SE float64
	N         int
}

// leastSquares fits y = a + b·x, x in hours.
func leastSquares(hours, ys []float64) fit {
	n := len(hours)
	if n < 2 || len(ys) != n {
		return fit{Slope: math.NaN(), SE: math.NaN(), N: n}
	}
	var mx, my float64
	for i := range hours {
		mx += hours[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i := range hours {
		sxx += (hours[i] - mx) * (hours[i] - mx)
		sxy += (hours[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return fit{Slope: math.NaN(), SE: math.NaN(), N: n}
	}
	b := sxy / sxx
	a := my - b*mx
	if n < 3 {
		return fit{Slope: b, SE: math.NaN(), N: n}
	}
	var rss float64
	for i := range hours {
		r := ys[i] - (a + b*hours[i])
		rss += r * r
	}
	return fit{Slope: b, SE: math.Sqrt(rss / float64(n-2) / sxx), N: n}
}

// verdict is what the slopes of one resource say.
type verdict struct {
	Whole, Late fit // after the warm-up; the second half of that
	Beyond      bool
	Why         string
}

// judge decides whether a resource rises beyond noise. Noise is judged two
// ways, and a leak must pass both:
//
//   - The slope over the whole window after the warm-up must exceed twice
//     its standard error (about a 95% interval that excludes zero). The
//     error is that of independent samples; minute samples of a loaded
//     machine are not quite that, which is why it is not the only test.
//   - The slope over the second half of that window must be positive too:
//     a resource that rises and then levels off (caches filling, the
//     browser reaching its working size) is still warming up, not
//     leaking; a leak keeps rising.
func judge(hours, ys []float64) verdict {
	v := verdict{Whole: leastSquares(hours, ys)}
	if len(hours) < 4 {
		v.Late = fit{Slope: math.NaN(), SE: math.NaN()}
		v.Why = fmt.Sprintf("too few samples after the warm-up (%d; want 4 or more)", len(hours))
		return v
	}
	mid := (hours[0] + hours[len(hours)-1]) / 2
	var lh, ly []float64
	for i, h := range hours {
		if h >= mid {
			lh = append(lh, h)
			ly = append(ly, ys[i])
		}
	}
	v.Late = leastSquares(lh, ly)
	switch {
	case math.IsNaN(v.Whole.Slope) || math.IsNaN(v.Whole.SE):
		v.Why = "no slope (the samples share one time)"
	case v.Whole.Slope <= 0:
		v.Why = "flat or falling"
	case v.Whole.Slope <= 2*v.Whole.SE:
		v.Why = "within twice its standard error of flat"
	case !(v.Late.Slope > 0):
		v.Why = "rose, then levelled off in the second half"
	default:
		v.Beyond = true
		v.Why = "rises beyond twice its standard error, and still in the second half"
	}
	return v
}

// resource is one column of the samples as the summary shows it.
type resource struct {
	name  string
	unit  string  // as shown
	scale float64 // the sample's value is divided by it for the unit
	value func(sample) float64
	// expected: grows with the work by design (the evidence log, the
	// downloaded files); shown per unit of work (per) instead of judged.
	expected string
	per      func(sample) float64 // the work it grows with, for expected ones
}

const mib = 1 << 20

// resources are what the soak judges, in the summary's order.
var resources = []resource{
	{name: "daemon PSS, less its mapping of the evidence file", unit: "MiB", scale: mib, value: func(s sample) float64 { return float64(s.DaemonPSS - s.EvidenceMapPSS) }},
	{name: "whole tree PSS (daemon + Chromium)", unit: "MiB", scale: mib, value: func(s sample) float64 { return float64(s.TreePSS) }},
	{name: "Chromium processes", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.ChromiumProcs) }},
	{name: "goroutines", unit: "", scale: 1, value: func(s sample) float64 { return s.Goroutines }},
	{name: "Go heap in use", unit: "MiB", scale: mib, value: func(s sample) float64 { return s.HeapInuse }},
	{name: "Go heap held from the system (in use or not)", unit: "MiB", scale: mib, value: func(s sample) float64 { return s.HeapHeld }},
	{name: "daemon open files", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.FDs) }},
	{name: "MCP sessions open", unit: "", scale: 1, value: func(s sample) float64 { return s.Sessions }},
	{name: "profile dirs", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.ProfileDirs) }},
	{name: "session file dirs", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.FilesDirs) }},
	{name: "download staging dirs", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.StagingDirs) }},
	{name: "other temp entries", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.OtherTemp) }},
	{name: "evidence file", unit: "MiB", scale: mib, value: func(s sample) float64 { return float64(s.EvidenceBytes) },
		expected: "bytes per call", per: func(s sample) float64 { return float64(s.Calls) }},
	{name: "the daemon's mapping of the evidence file (PSS)", unit: "MiB", scale: mib, value: func(s sample) float64 { return float64(s.EvidenceMapPSS) },
		expected: "bytes resident per byte the file grew", per: func(s sample) float64 { return float64(s.EvidenceBytes) }},
	{name: "downloaded files", unit: "", scale: 1, value: func(s sample) float64 { return float64(s.Downloaded) },
		expected: "files per download asked for", per: func(s sample) float64 { return float64(s.Downloads) }},
}

// summary is the Markdown table of the slopes after warmup, over the
// samples of the run phase; leaks lists the resources beyond noise.
func summary(samples []sample, warmup time.Duration) (table string, leaks []string) {
	var window []sample
	for _, s := range samples {
		if s.Phase == "run" && s.At >= warmup {
			window = append(window, s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Slopes by least squares over the %d samples after the warm-up (%s), per hour; ± is the slope's standard error; "+
		"\"2nd half\" is the slope over the second half of those samples. Beyond noise: the slope exceeds twice its standard error "+
		"and the second half still rises.\n\n", len(window), warmup)
	b.WriteString("| resource | after warm-up | at end | slope per hour | 2nd half per hour | beyond noise? |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	if len(window) == 0 {
		return b.String() + "| (no samples after the warm-up) | | | | | |\n", nil
	}
	hours := make([]float64, len(window))
	for i, s := range window {
		hours[i] = s.At.Hours()
	}
	first, last := window[0], window[len(window)-1]
	for _, r := range resources {
		ys := make([]float64, len(window))
		for i, s := range window {
			ys[i] = r.value(s) / r.scale
		}
		v := judge(hours, ys)
		unit := ""
		if r.unit != "" {
			unit = " " + r.unit
		}
		verdict := "no: " + v.Why
		if r.expected != "" {
			verdict = "expected (grows with the work): " + perWork(r, first, last)
		} else if v.Beyond {
			verdict = "**yes**: " + v.Why
			leaks = append(leaks, r.name)
		}
		fmt.Fprintf(&b, "| %s | %s%s | %s%s | %s ± %s%s | %s%s | %s |\n", r.name,
			number(ys[0]), unit, number(ys[len(ys)-1]), unit,
			signed(v.Whole.Slope), number(v.Whole.SE), unit, signed(v.Late.Slope), unit, verdict)
	}
	return b.String(), leaks
}

// perWork is an expected resource's growth per unit of work over the
// window.
func perWork(r resource, first, last sample) string {
	work := r.per(last) - r.per(first)
	if work <= 0 {
		return "no work in the window"
	}
	return fmt.Sprintf("%s %s", number((r.value(last)-r.value(first))/work), r.expected)
}

// number shows a value with three significant digits or so.
func number(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// signed is number with its sign.
func signed(v float64) string {
	if v > 0 {
		return "+" + number(v)
	}
	return number(v)
}
