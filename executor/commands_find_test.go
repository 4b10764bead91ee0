package executor

import (
	"slices"
	"testing"

	"github.com/browsergate/browsergate/executor/snapshot"
)

// TestFindTakesEachElementOfALine: find cuts a snapshot line into its
// elements with refs, whole — a control, a link with its target, a name
// holding brackets of its own (a masked secret) — and leaves out a ref
// token that is no ref of the rendering.
func TestFindTakesEachElementOfALine(t *testing.T) {
	s := &session{}
	s.tab.refs = map[string]snapshot.Ref{"e1": {}, "e2": {}, "e3": {}}
	line := `Intro e9 text [button "Save" e1] and [Save as](e2 /find?as=1) [button "echo [secret PW]" e3]`
	got := s.elementsOf(line)
	want := []string{`[button "Save" e1]`, `[Save as](e2 /find?as=1)`, `[button "echo [secret PW]" e3]`}
	if !slices.Equal(got, want) {
		t.Errorf("elementsOf:\n got %q\nwant %q", got, want)
	}
}
