package gate

import (
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// A refusal that tells the agent what it can do instead names a call only
// when the manifest offers it (toolclad.Manifest.Offers): a hint whose
// call would itself be refused for an undeclared command or argument
// sends the agent round in circles.

// offer is text when the manifest offers a call of command with args,
// else "", as browsergate's own words (Deny marks its other arguments as
// the page's or the agent's).
func offer(m *toolclad.Manifest, text, command string, args ...string) error {
	if m.Offers(command, args...) {
		return pagetext.Ownf("%s", text)
	}
	return pagetext.Ownf("")
}

// offered is one way out a refusal may suggest: its text and the call it
// names.
type offered struct {
	text    string
	command string
	args    []string
}

// offers joins the texts of the ways out the manifest offers with ", or ",
// after lead; "" when it offers none. Like offer, browsergate's own words.
func offers(m *toolclad.Manifest, lead string, ways ...offered) error {
	var texts []string
	for _, w := range ways {
		if m.Offers(w.command, w.args...) {
			texts = append(texts, w.text)
		}
	}
	if len(texts) == 0 {
		return pagetext.Ownf("")
	}
	return pagetext.Ownf("%s", lead+strings.Join(texts, ", or "))
}
