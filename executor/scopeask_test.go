package executor

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestAskNoteOnlyWhenTheAgentCanAsk: a reply that lists a refused request
// a human could be asked for says how to ask (navigate), only when the
// manifest asks about hosts outside allowed_domains and declares navigate,
// and never for a refusal that is not askable.
func TestAskNoteOnlyWhenTheAgentCanAsk(t *testing.T) {
	t.Parallel()
	const scopeHead = "[tool]\nname = \"n\"\n[browser.scope]\nallowed_domains = [\"docs.example.com\"]\n"
	asks := testkit.Manifest(t, scopeHead+"ask_external = true\n[browser.commands.navigate]\n")
	noNavigate := testkit.Manifest(t, scopeHead+"ask_external = true\n[browser.commands.snapshot]\n")
	noAsk := testkit.Manifest(t, scopeHead+"[browser.commands.navigate]\n")
	askable := []Blocked{refused("http://127.0.0.2/"), {URL: "https://news.example.org/", Rule: "not in allowed_domains (ask_external)", Layer: "interception", Ask: true}}
	if note := askNote(asks, askable); !strings.Contains(note, "call navigate with its URL") {
		t.Errorf("asks, askable refusal: note %q", note)
	}
	for name, tc := range map[string]struct {
		note string
	}{
		"asks, nothing askable":  {askNote(asks, askable[:1])},
		"asks, nothing refused":  {askNote(asks, nil)},
		"no navigate declared":   {askNote(noNavigate, askable)},
		"the scope does not ask": {askNote(noAsk, askable)},
	} {
		if tc.note != "" {
			t.Errorf("%s: note %q, want none", name, tc.note)
		}
	}
}
