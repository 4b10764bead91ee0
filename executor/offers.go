package executor

import (
	"fmt"

	"github.com/browsergate/browsergate/toolclad"
)

// A reply or refusal that tells the agent what to call next names a call
// only when the manifest offers it (toolclad.Manifest.Offers): a hint
// whose call would itself be refused for an undeclared command or
// argument sends the agent round in circles. The continuations that
// replies end with (snapshot's and read's page, fetch_page's start_index,
// the logs' since) are always offered: toolclad takes them whatever the
// manifest declares.

// offer is text when the manifest offers a call of command with args,
// else "".
func offer(m *toolclad.Manifest, text, command string, args ...string) string {
	if m.Offers(command, args...) {
		return text
	}
	return ""
}

// refsHint is what an agent that gave a ref no snapshot handed out can do:
// take a snapshot, where the manifest's snapshots hand out refs; else
// name the element by a selector, where the call takes one.
func (s *session) refsHint() string {
	m := s.manifest
	if m.GivesRefs() {
		return "take a snapshot first and use a ref from the latest one"
	}
	why := "snapshot is not declared"
	if m.Offers("snapshot") {
		why = fmt.Sprintf("its snapshots are extract_mode = %q, which has none", m.Browser.ExtractMode)
	}
	hint := "no ref is known: this manifest hands out no refs (" + why + ")"
	if s.command != nil && s.command.Arg("selector") != nil {
		hint += "; name the element by a CSS selector instead (selector)"
	}
	return hint
}
