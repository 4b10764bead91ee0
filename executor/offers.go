package executor

import (
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
