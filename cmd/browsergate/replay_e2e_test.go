package main

import (
	"fmt"
	"strings"
	"testing"
)

const replayManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[secrets.APP_PASSWORD]
env = "BROWSERGATE_E2E_SECRET"
domains = ["127.0.0.1"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.type_text]
[browser.commands.click]
[browser.commands.submit_form]
`

// TestEvidenceReplay: a recorded session runs again, in a fresh browser,
// under the manifest and policies it recorded; a site that behaves the
// same gives the same steps, and one that changed is reported step by
// step. The password is a [secrets] entry, so even the login replays;
// the call a human approved is approved again as recorded.
func TestEvidenceReplay(t *testing.T) {
	t.Parallel()
	f := startWith(t, replayManifest)
	f.site.Password.Store(secretValue)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": findRef(snap, "Username"), "text": "alice"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"ref": findRef(snap, "Password"), "text": "<APP_PASSWORD>"})
	if out := f.mustAllow(t, "e2e.click", map[string]any{"ref": findRef(snap, `button "Sign in"`)}); !strings.Contains(out, `title="Dashboard"`) {
		t.Fatalf("the recorded login failed:\n%s", out)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}) // denied: not replayed
	f.mustAllow(t, "e2e.snapshot", nil)
	f.cs.Close()
	sessions, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	id := strings.Fields(strings.TrimPrefix(sessions, "session "))[0]

	// Without being told where the secret is, the replay does not read
	// the recorded variable: the password step is not replayed.
	out, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	if code != 1 || !strings.Contains(out, "#4   type_text      NOT REPLAYED: argument \"text\" types secret APP_PASSWORD, and no --secret APP_PASSWORD") {
		t.Fatalf("replay without --secret: exit %d\n%s", code, out)
	}
	secret := "APP_PASSWORD=env:BROWSERGATE_E2E_SECRET"
	out, code = runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id, "--secret", secret)
	if code != 0 || !strings.Contains(out, "7 that ran") || !strings.Contains(out, "replayed 7 of 7 step(s) that ran: 0 differ, 0 not replayable") {
		t.Fatalf("replay against the same site: exit %d\n%s", code, out)
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("the replay reached the canary %d time(s)", n)
	}

	// The site now refuses the recorded password: the login step and
	// everything after it differ, and the replay says where.
	f.site.Password.Store("something else")
	out, code = runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id, "--secret", secret)
	if code != 1 || !strings.Contains(out, "click          DIFFERS") || !strings.Contains(out, `title: "Dashboard", now "Sign in"`) {
		t.Fatalf("replay against a changed site: exit %d\n%s", code, out)
	}

	// A log that does not verify is not replayed: its calls, manifest and
	// policies could have been altered.
	f.site.Password.Store(secretValue)
	_, seq := tamperOneRecord(t, f.evidence)
	out, code = runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id, "--secret", secret)
	if code != 1 || !strings.Contains(out, "must verify before it is replayed") || !strings.Contains(out, fmt.Sprintf("record %d", seq)) || strings.Contains(out, "replaying session") {
		t.Fatalf("replay of a tampered log: exit %d\n%s", code, out)
	}
}
