package replay

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/browsergate/browsergate/evidence"
)

// The limits of an output's difference as a replay prints it: an auditor
// reads which lines changed, not two whole pages, and a page that changed
// everywhere must not flood the terminal.
const (
	// diffLines bounds the lines of one step's difference (the hunk
	// headers and context lines included).
	diffLines = 24
	// diffWidth bounds one line of it, in runes.
	diffWidth = 160
	// diffCells bounds the table the line matching fills (recorded lines
	// times replayed lines, once the common head and tail are set aside):
	// past it the changed middle is shown as removed and added whole.
	diffCells = 4 << 20
	// diffContext is how many unchanged lines stand around a change.
	diffContext = 1
)

// lineOp is one line of a difference: kept (' '), only in the record
// ('-'), or only in the replay ('+').
type lineOp struct {
	kind byte
	text string
}

// textDiff is a readable difference between the output a step recorded
// and the one its replay gave, line by line, bounded by diffLines and
// diffWidth. It returns the lines to print (none when the texts are the
// same), and how many lines were removed and added. The texts came from
// pages, so every line is made visible (evidence.Visible) before it is
// printed.
func textDiff(want, got string) (lines []string, removed, added int) {
	ops := diffOps(splitLines(want), splitLines(got))
	for _, op := range ops {
		switch op.kind {
		case '-':
			removed++
		case '+':
			added++
		}
	}
	if removed == 0 && added == 0 {
		return nil, 0, 0
	}
	shown, hidden := 0, 0
	emit := func(s string) {
		if shown < diffLines {
			lines = append(lines, s)
			shown++
		} else {
			hidden++
		}
	}
	for _, h := range hunks(ops) {
		// Where the hunk starts in each text: one past the lines of that
		// text before it.
		w, g := 1, 1
		for _, op := range ops[:h[0]] {
			if op.kind != '+' {
				w++
			}
			if op.kind != '-' {
				g++
			}
		}
		emit(fmt.Sprintf("@@ recorded line %d, replayed line %d @@", w, g))
		for _, op := range ops[h[0]:h[1]] {
			emit(string(op.kind) + " " + clip(evidence.Visible(op.text)))
		}
	}
	if hidden > 0 {
		lines = append(lines, fmt.Sprintf("… %d more line(s) of the difference not shown", hidden))
	}
	return lines, removed, added
}

// splitLines cuts a text into lines; an empty text has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// clip cuts a line to diffWidth runes, marking the cut.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= diffWidth {
		return s
	}
	n := 0
	for i := range s {
		if n == diffWidth {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// diffOps matches the lines of a and b: the longest common subsequence
// of what lies between their common head and tail, so that a line
// inserted at the top does not make every line after it differ.
func diffOps(a, b []string) []lineOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]lineOp, 0, len(a)+len(b))
	for i := range head {
		ops = append(ops, lineOp{' ', a[i]})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	ops = append(ops, middleOps(ma, mb)...)
	for i := range tail {
		ops = append(ops, lineOp{' ', a[len(a)-tail+i]})
	}
	return ops
}

// middleOps matches a and b (the changed middle) by their longest common
// subsequence, or, past diffCells, takes all of a as removed and all of b
// as added.
func middleOps(a, b []string) []lineOp {
	var ops []lineOp
	if len(a)*len(b) > diffCells {
		for _, s := range a {
			ops = append(ops, lineOp{'-', s})
		}
		for _, s := range b {
			ops = append(ops, lineOp{'+', s})
		}
		return ops
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:], in one slice.
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			// A removed line reads before the line that replaced it.
			ops = append(ops, lineOp{'-', a[i]})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j]})
			j++
		}
	}
	return ops
}

// hunks are the stretches of ops to print, [start, end): every change
// with diffContext unchanged lines around it, stretches that touch merged.
func hunks(ops []lineOp) [][2]int {
	var out [][2]int
	for k, op := range ops {
		if op.kind == ' ' {
			continue
		}
		start, end := max(k-diffContext, 0), min(k+1+diffContext, len(ops))
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}
