package executor

import (
	"strings"
	"testing"
)

// TestDOMScriptsHaveTheWatchInPlace: the quiet-DOM wait and the watch
// started on each document share the one watch of dom_changes.js (the
// wait starts it where a document has none), put in place of
// DOM_CHANGES: no placeholder is left to run as an undefined name.
func TestDOMScriptsHaveTheWatchInPlace(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{"dom_quiet.js": domQuietJS, "dom_watch.js": domWatchJS} {
		if strings.Contains(src, "DOM_CHANGES") {
			t.Errorf("%s still names DOM_CHANGES", name)
		}
		if !strings.Contains(src, "new MutationObserver") || !strings.Contains(src, "globalThis.browsergateDOM ??=") {
			t.Errorf("%s lacks the watch of dom_changes.js:\n%s", name, src)
		}
	}
}
