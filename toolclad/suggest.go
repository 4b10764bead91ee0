package toolclad

import (
	"fmt"
	"sort"
)

// didYouMean is the hint after an unknown name: `; did you mean "x"?`
// with the valid name nearest to it, or "" when none is near enough to be
// a slip of the fingers rather than another name.
func didYouMean(name string, valid []string) string {
	if best := nearestName(name, valid); best != "" {
		return fmt.Sprintf("; did you mean `%s`?", best)
	}
	return ""
}

// nearestName returns the name of valid nearest to name in edit distance
// (insertions, deletions, substitutions and swaps of two neighbours, each
// counting one), when it is at most a third of name's length away (and at
// most 3); ties go to the first in sorted order, so the hint is stable.
func nearestName(name string, valid []string) string {
	limit := min(max(len([]rune(name))/3, 1), 3)
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	best, bestD := "", limit+1
	for _, v := range sorted {
		if v == name {
			continue
		}
		if d := editDistance(name, v); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// over runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
