package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/gate"
)

// TestDecideCallThatOpensATab: a call that may open a tab the browser
// makes itself (OpensTab) is refused in the user's own context before
// any fact is read, whatever the element; elsewhere it is refused where
// the element leads anywhere, by its link or by any destination on its
// path (a javascript: URL loads nothing), and allowed where it leads
// nowhere.
func TestDecideCallThatOpensATab(t *testing.T) {
	f := newDecideFixture(t)
	home := "https://www.example.com/"
	nowhere := &gate.Element{Named: true, Label: "ref e1"}
	onPath := &gate.Element{Named: true, Label: "ref e1", Dest: gate.Destination{URLs: []string{home + "next"}}}
	script := link("javascript:void(0)")
	for _, tc := range []struct {
		name  string
		user  bool
		el    *gate.Element
		facts bool
		want  string // "" allowed
	}{
		{"user context, element leads nowhere", true, nowhere, true, "whatever the element"},
		{"user context, before any fact", true, nil, false, "whatever the element"},
		{"launched, element leads nowhere", false, nowhere, true, ""},
		{"launched, a link", false, link(home + "next"), true, "in a new tab or window"},
		{"launched, a destination on the path", false, onPath, true, "in a new tab or window"},
		{"launched, a javascript: link", false, script, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs *gate.Facts
			if tc.facts {
				fs = withElement(on(home), tc.el)
			}
			q := f.ask(t, f.m, "click", map[string]any{"ref": "e1"}, fs, nil)
			q.OpensTab, q.ChangesTab, q.UserContext = true, true, tc.user
			var d *gate.DenyError
			if tc.facts {
				d = gate.Decide(q).Deny
			} else {
				d = gate.Preflight(q).Deny
			}
			switch {
			case tc.want == "" && d != nil:
				t.Errorf("refused: %v", d)
			case tc.want != "" && (d == nil || !strings.Contains(d.Error(), tc.want)):
				t.Errorf("got %v, want a refusal saying %q", d, tc.want)
			}
		})
	}
}
