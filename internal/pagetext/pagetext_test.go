package pagetext

import (
	"errors"
	"fmt"
	"testing"
)

func TestValueMarksAndDropsThePagesOwnMarks(t *testing.T) {
	got := Value("a" + string(MarkClose) + "b")
	want := string(MarkOpen) + "ab" + string(MarkClose)
	if got != want {
		t.Fatalf("Value = %q, want %q", got, want)
	}
	if Value("") != "" {
		t.Fatal("an empty value gets marks")
	}
}

func TestArgsMarkEachArgumentAndKeepOwnErrors(t *testing.T) {
	own := Ownf("secret %s may not go to %s", "PW", Value("evil.test"))
	got := fmt.Sprintf("%q refused: %v", Args([]any{"x.test", own})...)
	want := string(MarkOpen) + `"x.test"` + string(MarkClose) + " refused: secret PW may not go to " + Value("evil.test")
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	var o *Own
	if !errors.As(own, &o) {
		t.Fatal("Ownf is not an *Own")
	}
}

func TestBalancedClosesWhatACutLeftOpen(t *testing.T) {
	whole := "x" + Value("page text") + "y"
	cut := len("x") + 3
	first, second := Balanced(whole[:cut]), Balanced(whole[cut:])
	if !HasMarks(first) || first[len(first)-len(string(MarkClose)):] != string(MarkClose) {
		t.Errorf("first page %q is not closed", first)
	}
	if second[:len(string(MarkOpen))] != string(MarkOpen) {
		t.Errorf("second page %q is not opened", second)
	}
	if Unmarked(first)+Unmarked(second) != Unmarked(whole) {
		t.Errorf("the pages' text %q+%q is not the whole's %q", Unmarked(first), Unmarked(second), Unmarked(whole))
	}
}

func TestMarkKnownMarksTheLongestValue(t *testing.T) {
	got := MarkKnown("blocked https://a.test/x (host a.test)", "https://a.test/x", "a.test")
	want := "blocked " + Value("https://a.test/x") + " (host " + Value("a.test") + ")"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
