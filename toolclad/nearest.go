package toolclad

// NearestName is the name of valid nearest to name in edit distance, or ""
// when none is near enough to be a slip of the fingers (the rule of the
// manifest's "did you mean" hints). The gate uses it for a mistyped secret
// placeholder.
func NearestName(name string, valid []string) string { return nearestName(name, valid) }

// EditDistance is the optimal string alignment distance between a and b
// over runes (insertions, deletions, substitutions and swaps of two
// neighbours, each counting one), as NearestName measures it.
func EditDistance(a, b string) int { return editDistance(a, b) }
