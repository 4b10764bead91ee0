package replay

import (
	"fmt"
	"strings"
	"testing"
)

func TestTextDiff(t *testing.T) {
	t.Parallel()
	page := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	for _, tc := range []struct {
		name           string
		want, got      string
		lines          []string // the whole difference, line by line
		removed, added int
	}{
		{name: "same", want: page("a", "b"), got: page("a", "b")},
		{name: "one line changed, with its neighbours as context",
			want: page("title Home", "heading Welcome back, alice", "link Sign out", "footer"),
			got:  page("title Home", "heading Sign in", "link Sign out", "footer"),
			lines: []string{"@@ recorded line 1, replayed line 1 @@", "  title Home", "- heading Welcome back, alice",
				"+ heading Sign in", "  link Sign out"},
			removed: 1, added: 1},
		{name: "a line added at the top does not make the rest differ",
			want:    page("a", "b", "c", "d"),
			got:     page("banner", "a", "b", "c", "d"),
			lines:   []string{"@@ recorded line 1, replayed line 1 @@", "+ banner", "  a"},
			removed: 0, added: 1},
		{name: "changes apart are separate hunks, numbered in each text",
			want: page("1", "2", "3", "4", "5", "6", "7"),
			got:  page("1", "two", "3", "4", "5", "6", "six", "seven", "7"),
			lines: []string{"@@ recorded line 1, replayed line 1 @@", "  1", "- 2", "+ two", "  3",
				"@@ recorded line 6, replayed line 6 @@", "  6", "+ six", "+ seven", "  7"},
			removed: 1, added: 3},
		{name: "the page's control characters are shown, not sent to the terminal",
			want:    page("x"),
			got:     page("x\x1b[2Jy"),
			lines:   []string{"@@ recorded line 1, replayed line 1 @@", "- x", `+ x\u001B[2Jy`},
			removed: 1, added: 1},
		{name: "nothing recorded", want: "", got: page("new"),
			lines: []string{"@@ recorded line 1, replayed line 1 @@", "+ new"}, added: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lines, removed, added := textDiff(tc.want, tc.got)
			if strings.Join(lines, "\n") != strings.Join(tc.lines, "\n") || removed != tc.removed || added != tc.added {
				t.Errorf("textDiff = -%d +%d\n%s\nwant -%d +%d\n%s", removed, added, strings.Join(lines, "\n"),
					tc.removed, tc.added, strings.Join(tc.lines, "\n"))
			}
		})
	}
}

// TestTextDiffIsBounded: a page that changed everywhere gives at most
// diffLines lines of diffWidth runes, and says how much it left out.
func TestTextDiffIsBounded(t *testing.T) {
	t.Parallel()
	var want, got strings.Builder
	for i := range 500 {
		fmt.Fprintf(&want, "old line %d %s\n", i, strings.Repeat("x", 1000))
		fmt.Fprintf(&got, "new line %d\n", i)
	}
	lines, removed, added := textDiff(want.String(), got.String())
	if removed != 500 || added != 500 {
		t.Errorf("counted -%d +%d, want -500 +500", removed, added)
	}
	if len(lines) != diffLines+1 {
		t.Fatalf("%d lines, want %d and a last one saying what was left out:\n%s", len(lines), diffLines+1, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > diffWidth+3 {
			t.Errorf("a line of %d runes: %.80q…", n, l)
		}
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("… %d more line(s) of the difference not shown", 1+500+500-diffLines) {
		t.Errorf("last line %q", last)
	}
}

// TestTextDiffPastTheTable: a middle too large to match line by line is
// shown as removed and added whole, not matched at a cost without bound.
func TestTextDiffPastTheTable(t *testing.T) {
	t.Parallel()
	n := 2100 // 2100² lines is past diffCells
	a, b := make([]string, n), make([]string, n)
	for i := range n {
		a[i], b[i] = fmt.Sprint("a", i), fmt.Sprint("b", i)
	}
	ops := diffOps(a, b)
	if len(ops) != 2*n || ops[0].kind != '-' || ops[n].kind != '+' {
		t.Fatalf("%d ops, first %q, %dth %q", len(ops), ops[0].kind, n, ops[n].kind)
	}
}
