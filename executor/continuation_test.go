package executor

import (
	"errors"
	"testing"
)

// TestFreeContinuationOnlyWhenItRanForward: a call is a free continuation
// only when it handed out a page further on and was neither refused nor
// failed; everything else counts toward max_interactions.
func TestFreeContinuationOnlyWhenItRanForward(t *testing.T) {
	for _, c := range []struct {
		name string
		turn turn
		free bool
	}{
		{"a page further on", turn{out: output{continued: true}}, true},
		{"not a page further on", turn{}, false},
		{"refused", turn{out: output{continued: true}, deny: &DenyError{Rule: "cedar"}}, false},
		{"failed", turn{out: output{continued: true}, err: errors.New("the tab has moved to another document")}, false},
	} {
		if got := c.turn.freeContinuation(); got != c.free {
			t.Errorf("%s: freeContinuation = %v, want %v", c.name, got, c.free)
		}
	}
}
