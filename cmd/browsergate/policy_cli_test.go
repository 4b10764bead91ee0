package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestPolicyTest: `browsergate policy test` decides one request, from flags
// or from a JSON file, prints the decision with the determining policies
// and where they are written, and with --expect exits 1 on a surprise.
func TestPolicyTest(t *testing.T) {
	t.Parallel()
	pol := repoPath("policies")
	cases := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"held for approval", []string{"--command", "submit_form", "--authenticated", "--url", "http://127.0.0.1:8080/profile", "--manifest", repoPath("examples/demo.toml")},
			0, []string{`url_domain "127.0.0.1" in [allowed]`, "decision: DENY (a human's approval would allow it", "policy:   submit-authenticated-needs-approval (" + filepath.Join(pol, "submit.cedar") + ":"}},
		{"approved", []string{"--command", "submit_form", "--authenticated", "--approved", "--expect", "allow"},
			0, []string{"decision: ALLOW", "permit-non-navigation"}},
		{"rate limit holds against approval", []string{"--command", "submit_form", "--approved", "--counter", "session_submit_count=5", "--expect", "allow"},
			1, []string{"decision: DENY\n", "submit-rate-limit", "expected allow, got deny"}},
		{"navigate outside the allowed set", []string{"--command", "navigate", "--url", "https://elsewhere.test/", "--domain", "elsewhere.test", "--expect", "deny"},
			0, []string{"decision: DENY", `no policy permits command "navigate" (default deny)`}},
		{"critical tier", []string{"--command", "scroll", "--risk-tier", "critical"},
			0, []string{"critical-needs-approval"}},
		{"typed args", []string{"--command", "scroll", "--arg", "amount=3", "--arg", "direction=up", "--expect", "allow"},
			0, []string{"decision: ALLOW"}},
		{"unknown counter", []string{"--command", "scroll", "--counter", "bogus=1"},
			1, []string{"bogus"}},
		{"no request", nil, 2, []string{"--request FILE or at least --command"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, code := runBinary(t, append([]string{"policy", "test", "--policies", pol}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			for _, w := range tc.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	t.Run("json file", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "req.json")
		if err := os.WriteFile(file, []byte(`{"command": "execute_js", "args": {"expression": "1"}, "page_state": {"is_authenticated": true}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := runBinary(t, "policy", "test", "--policies", pol, "--request", file, "--expect", "deny")
		if code != 0 || !strings.Contains(out, "execute-js-needs-approval") {
			t.Errorf("exit %d\n%s", code, out)
		}
		if err := os.WriteFile(file, []byte(`{"command": "execute_js", "pagestate": {}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, code := runBinary(t, "policy", "test", "--policies", pol, "--request", file); code != 1 || !strings.Contains(out, "pagestate") {
			t.Errorf("a request with an unknown key: exit %d\n%s", code, out)
		}
	})
}

// TestCheckRunsPolicyTests: a policy directory's policy-tests.json runs
// with `browsergate check`; a policy change that breaks an expectation
// fails the check, naming the case and its line.
func TestCheckRunsPolicyTests(t *testing.T) {
	t.Parallel()
	dir := testkit.CopyPolicies(t)
	args := []string{"check", "--policies", dir, "--manifest", repoPath("examples/demo.toml")}
	out, code := runBinary(t, args...)
	if code != 0 || !strings.Contains(out, "policy test(s) passed") {
		t.Fatalf("check with the shipped tests: exit %d\n%s", code, out)
	}
	// Someone loosens the rate limit: the shipped tests catch it.
	submit := filepath.Join(dir, "submit.cedar")
	src, _ := os.ReadFile(submit)
	if err := os.WriteFile(submit, []byte(strings.Replace(string(src), ">= 5", ">= 50", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runBinary(t, args...)
	if code != 1 || !strings.Contains(out, "policy-tests.json:") || !strings.Contains(out, "failed") {
		t.Fatalf("check after loosening the rate limit: exit %d\n%s", code, out)
	}
}

// TestSchemaErrorRefusesToStart: a policy that does not type-check against
// the schema stops check and serve, naming the file, the line and the
// problem.
func TestSchemaErrorRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := testkit.CopyPolicies(t)
	if err := os.WriteFile(filepath.Join(dir, "typo.cedar"), []byte("@id(\"typo\")\nforbid (principal, action == Web::Action::\"browse\", resource)\nwhen { resource.risk_tier == 3 };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := repoPath("examples/demo.toml")
	out, code := runBinary(t, "check", "--manifest", manifest, "--policies", dir)
	if code != 1 || !strings.Contains(out, filepath.Join(dir, "typo.cedar")+":") || !strings.Contains(out, `policy "typo"`) {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, "serve", "--manifest", manifest, "--policies", dir, "--evidence", filepath.Join(t.TempDir(), "e.db"))
	if code != 1 || !strings.Contains(out, "typo.cedar") || !strings.Contains(out, "Long and String") {
		t.Errorf("serve: exit %d\n%s", code, out)
	}
}
