package main

import (
	"strings"
	"testing"
)

// TestEvidenceReplaySecretFlagWithoutItsVariable: a --secret whose
// environment variable is not set is refused naming the flag and the
// variable, not a position in the recorded manifest.
func TestEvidenceReplaySecretFlagWithoutItsVariable(t *testing.T) {
	t.Parallel()
	f := startWith(t, replayManifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})
	f.cs.Close()
	sessions, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	id := strings.Fields(strings.TrimPrefix(sessions, "session "))[0]

	out, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id,
		"--secret", "APP_PASSWORD=env:BROWSERGATE_E2E_UNSET_VARIABLE")
	want := "--secret APP_PASSWORD=env:BROWSERGATE_E2E_UNSET_VARIABLE: the environment variable BROWSERGATE_E2E_UNSET_VARIABLE is not set"
	if code == 0 || !strings.Contains(out, want) || strings.Contains(out, "secrets.APP_PASSWORD") {
		t.Errorf("replay with a --secret whose variable is not set: exit %d, want %q:\n%s", code, want, out)
	}
}
