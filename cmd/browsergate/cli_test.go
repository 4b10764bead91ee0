package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs the built browsergate and returns its combined output and
// exit code.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("run browsergate %v: %v", args, err)
	return "", 0
}

func TestCheckAcceptsEveryExample(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Glob(repoPath("examples/*.toml"))
	if err != nil || len(examples) < 8 {
		t.Fatalf("examples: %v %v", examples, err)
	}
	args := []string{"check", "--policies", repoPath("policies")}
	for _, e := range examples {
		args = append(args, "--manifest", e)
	}
	out, code := runBinary(t, args...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || !strings.HasPrefix(lines[len(lines)-1], "ok (") {
		t.Fatalf("check on the examples: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "demo.navigate") || !strings.Contains(out, "policies") {
		t.Errorf("check summary lacks the tools or the policy count:\n%s", out)
	}
	// The live examples work in the user's context, and check says what
	// that guarantees.
	if !strings.Contains(out, "context=user") || !strings.Contains(out, "no DNS-rebinding check") {
		t.Errorf("check does not explain the live examples' context:\n%s", out)
	}
}

func TestCheckReportsEveryProblemWithItsLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte(`[tool]
name = "bad"
[browser]
engine = "playwright"
[browser.commands.navigate]
args.url = { type = "url", schemez = ["https"] }
[browser.commands.fly]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies")
	if err := os.Mkdir(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policies, "broken.cedar"), []byte("permit (principal, action, resource\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, code := runBinary(t, "check", "--manifest", bad, "--policies", policies)
	if code != 1 {
		t.Fatalf("check on a broken set: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		bad + ":4:", "playwright",
		bad + ":6:", "schemez",
		bad + ":7:", "fly",
		"broken.cedar:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"serve"},
		{"serve", "--manifest", "x.toml", "--policies", "p", "--evidence", "e.db", "--tool-separator", "/"},
		{"check", "--bogus"},
		{"evidence"},
		{"evidence", "show"},
	} {
		out, code := runBinary(t, args...)
		if code != 2 || !strings.Contains(out, "usage:") && !strings.Contains(out, "` for its flags") {
			t.Errorf("browsergate %v: exit %d, want 2 with usage or where to read it\n%s", args, code, out)
		}
	}
}

func TestVerifyOnMissingFileFails(t *testing.T) {
	t.Parallel()
	out, code := runBinary(t, "evidence", "verify", "--evidence", filepath.Join(t.TempDir(), "none.db"))
	if code == 0 {
		t.Fatalf("verify on a missing file passed:\n%s", out)
	}
}

func TestCheckRefusesABadScopePattern(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "scope.toml")
	if err := os.WriteFile(bad, []byte("[tool]\nname = \"s\"\n[browser.scope]\nallowed_domains = [\"exa*mple..com\"]\nallow_private_cidrs = [\"10.0.0.5/8\"]\n[browser.commands.navigate]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "check", "--manifest", bad, "--policies", repoPath("policies"))
	if code != 1 || !strings.Contains(out, "exa*mple..com") || !strings.Contains(out, "10.0.0.5/8") {
		t.Fatalf("check on bad scope entries: exit %d\n%s", code, out)
	}
}
