package snapshottest

import (
	"fmt"
	"strings"
)

// diffContext is how many equal lines Diff shows around the difference.
const diffContext = 3

// maxDiffLines bounds the lines Diff shows of each side.
const maxDiffLines = 40

// Diff says where got differs from want, line by line: the lines both
// start and end with are left out but for a few around the difference,
// which is shown as want's lines ("-") then got's ("+"), each numbered.
// It returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	start := 0
	for start < len(w) && start < len(g) && w[start] == g[start] {
		start++
	}
	ew, eg := len(w), len(g) // the first line of each that the ends share
	for ew > start && eg > start && w[ew-1] == g[eg-1] {
		ew--
		eg--
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (want %d lines, got %d):\n", start+1, len(w), len(g))
	for i := max(0, start-diffContext); i < start; i++ {
		fmt.Fprintf(&b, "  %5d  %s\n", i+1, w[i])
	}
	side := func(mark string, lines []string, from, to int) {
		for i := from; i < to && i < from+maxDiffLines; i++ {
			fmt.Fprintf(&b, "%s %5d  %s\n", mark, i+1, lines[i])
		}
		if to-from > maxDiffLines {
			fmt.Fprintf(&b, "%s        … %d lines more\n", mark, to-from-maxDiffLines)
		}
	}
	side("-", w, start, ew)
	side("+", g, start, eg)
	for i := ew; i < min(len(w), ew+diffContext); i++ {
		fmt.Fprintf(&b, "  %5d  %s\n", i+1, w[i])
	}
	return b.String()
}
