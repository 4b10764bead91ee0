package executor

import (
	"errors"
	"testing"
)

// TestFreeContinuationOnlyWhenItRanForwardAndCarriesOnlyThePage: a call
// is a free continuation only when it handed out a page further on, was
// neither refused nor failed, and its reply and record carry nothing but
// that page; everything else counts toward max_interactions.
func TestFreeContinuationOnlyWhenItRanForwardAndCarriesOnlyThePage(t *testing.T) {
	page := "line\n[page 2 of 3 of this snapshot; the next: snapshot {page: 3}]"
	forward := func() output { return output{Text: page, continued: &continuation{page: 2, of: 3, text: page}} }
	withNote := forward()
	withNote.Text += dialogNote([]string{`alert "hello"`})
	for _, c := range []struct {
		name   string
		turn   turn
		notice string
		free   bool
	}{
		{"a page further on", turn{out: forward()}, "", true},
		{"not a page further on", turn{out: output{Text: page}}, "", false},
		{"refused", turn{out: forward(), deny: &DenyError{Rule: "cedar"}}, "", false},
		{"failed", turn{out: forward(), err: errors.New("the tab has moved to another document")}, "", false},
		{"a dialog note", turn{out: withNote}, "", false},
		{"a refused request", turn{out: forward(), blocked: []Blocked{{URL: "http://evil.test/", Rule: "scope"}}}, "", false},
		{"refused requests not listed", turn{out: forward(), dropped: blockDrops{Between: 2}}, "", false},
		{"a granted permission", turn{out: forward(), granted: permissionGrants{list: []permissionGrant{{URL: "http://a.test/"}}}}, "", false},
		{"granted permissions not listed", turn{out: forward(), granted: permissionGrants{dropped: 1}}, "", false},
		{"the session's notice", turn{out: forward()}, "the tab the session was in has closed", false},
	} {
		if got := c.turn.freeContinuation(c.notice); got != c.free {
			t.Errorf("%s: freeContinuation = %v, want %v", c.name, got, c.free)
		}
	}
}
