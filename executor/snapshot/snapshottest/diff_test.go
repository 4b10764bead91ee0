package snapshottest

import (
	"strings"
	"testing"
)

// TestDiff: equal texts have no difference; otherwise the lines that
// differ are shown, want's then got's, numbered, between a few of the
// lines both share, and the rest of the shared lines are left out.
func TestDiff(t *testing.T) {
	t.Parallel()
	if d := Diff("a\nb", "a\nb"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	var lines []string
	for i := range 20 {
		lines = append(lines, "line "+string(rune('a'+i)))
	}
	want := strings.Join(lines, "\n")
	lines[10] = "changed"
	got := strings.Join(lines, "\n")
	d := Diff(want, got)
	for _, part := range []string{"first difference at line 11", "-    11  line k", "+    11  changed", "     10  line j", "     12  line l"} {
		if !strings.Contains(d, part) {
			t.Errorf("the difference lacks %q:\n%s", part, d)
		}
	}
	if strings.Contains(d, "line a") || strings.Contains(d, "line t") {
		t.Errorf("the difference shows lines far from it:\n%s", d)
	}
	if d := Diff("a\nb", "a\nb\nc"); !strings.Contains(d, "+     3  c") {
		t.Errorf("a line added at the end:\n%s", d)
	}
}
