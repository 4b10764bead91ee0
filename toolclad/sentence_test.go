package toolclad_test

import (
	"fmt"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestToolDescriptionEndsItsSentence: a command's description, whatever
// its ending, is followed by browsergate's note as a sentence of its own:
// a period is added where the description ends without one (in place of
// a dangling comma, colon or semicolon), none where it ends a sentence
// already, and trailing white space goes.
func TestToolDescriptionEndsItsSentence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ description, want string }{
		{"Open a page", "Open a page. "},
		{"Open a page.", "Open a page. "},
		{"Open a page  \n", "Open a page. "},
		{"Is it open?", "Is it open? "},
		{"Open it!", "Open it! "},
		{"Open a page (the docs.)", "Open a page (the docs.) "},
		{`Say "open."`, `Say "open." `},
		{"Open a page (the docs)", "Open a page (the docs). "},
		{"Open a page:", "Open a page. "},
		{"Open a page, ", "Open a page. "},
	} {
		t.Run(tc.description, func(t *testing.T) {
			t.Parallel()
			doc := fmt.Sprintf("[tool]\nname = \"w\"\n[browser]\n[browser.scope]\nallowed_domains = [\"example.com\"]\n[browser.commands.snapshot]\ndescription = %q\n", tc.description)
			m, err := toolclad.Parse("d.toml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			got := m.Command("snapshot").ToolDescription()
			if want := tc.want + toolclad.UntrustedNote; got != want {
				t.Errorf("ToolDescription() = %q, want %q", got, want)
			}
		})
	}
}
