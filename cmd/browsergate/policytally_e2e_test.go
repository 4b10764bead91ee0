package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// shippedTally is what the shipped policy directory holds, counted as
// every command says it.
func shippedTally(t *testing.T) cedar.Tally {
	t.Helper()
	e, err := cedar.LoadDir(repoPath("policies"))
	if err != nil {
		t.Fatal(err)
	}
	return e.Tally()
}

// tallyPhrase finds "N Cedar policies in M policy files" in a command's
// output.
var tallyPhrase = regexp.MustCompile(`\d+ Cedar polic(?:y|ies) in \d+ policy files?`)

// TestShowReplayAndCheckCountPoliciesAlike: `evidence show`, `evidence
// replay` and `check` say what a session ran under in the same words and
// numbers — the Cedar policies and the policy files they are in, the
// schema being neither — where show once said "7 policy file(s)" (the
// schema among them) and replay "8 polic(ies)" of the same directory.
func TestShowReplayAndCheckCountPoliciesAlike(t *testing.T) {
	t.Parallel()
	want := shippedTally(t).String()
	if want == "0 Cedar policies in 0 policy files" {
		t.Fatal("the shipped policies count nothing")
	}
	f := startWith(t, replayManifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})
	f.mustAllow(t, "e2e.snapshot", nil)
	f.cs.Close()

	show, code := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	if code != 0 {
		t.Fatalf("evidence show: exit %d\n%s", code, show)
	}
	id := strings.Fields(strings.TrimPrefix(show, "session "))[0]
	replay, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	if code != 0 {
		t.Fatalf("evidence replay: exit %d\n%s", code, replay)
	}
	check, code := runBinary(t, "check", "--manifest", f.manifest, "--policies", repoPath("policies"))
	if code != 0 {
		t.Fatalf("check: exit %d\n%s", code, check)
	}
	for name, out := range map[string]string{"evidence show": show, "evidence replay": replay, "check": check} {
		if got := tallyPhrase.FindString(out); got != want {
			t.Errorf("%s says %q, want %q:\n%s", name, got, want, out)
		}
		if strings.Contains(out, "polic(ies)") || strings.Contains(out, "policy file(s)") {
			t.Errorf("%s still counts in the old words:\n%s", name, out)
		}
	}
}
