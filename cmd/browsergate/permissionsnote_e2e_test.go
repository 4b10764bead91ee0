package main

import (
	"strings"
	"testing"
)

// TestPermissionsRefusedAreToldApartFromEgressBlocks: the agent's replies
// list the permissions a page asked for and was refused on a line of
// their own, by name and page, and never as requests the egress gate
// blocked.
func TestPermissionsRefusedAreToldApartFromEgressBlocks(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/ask": permissionsPage})
	f := startWith(t, permissionsManifest("launch", "", ""))
	var replies strings.Builder
	replies.WriteString(f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/ask"}))
	replies.WriteString(f.mustAllow(t, "e2e.wait_for", map[string]any{"text": " asked", "timeout_ms": 10000}))
	replies.WriteString(f.mustAllow(t, "e2e.snapshot", nil))
	all := replies.String()
	if strings.Contains(all, ", permission)") || strings.Contains(all, `(permissions "`) {
		t.Errorf("a permission refused is reported as an egress block:\n%s", all)
	}
	var note string
	for _, line := range strings.Split(all, "\n") {
		if strings.HasPrefix(line, "[permissions refused without a prompt: ") && strings.Contains(line, "(page "+site+"/ask)") {
			note += line + "\n"
		}
	}
	for _, p := range []string{"geolocation", "notifications", "clipboard-read"} {
		if !strings.Contains(note, p) {
			t.Errorf("the replies do not say %s was refused on the page:\n%s", p, all)
		}
	}
}
