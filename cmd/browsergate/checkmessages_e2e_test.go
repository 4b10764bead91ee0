package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNamesTheNearestValidName: check, given a manifest with a
// misspelt key, command and argument, names the valid one nearest to each
// at its file:line:col, and exits 1.
func TestCheckNamesTheNearestValidName(t *testing.T) {
	t.Parallel()
	m := writeManifest(t, "typos.toml", `[tool]
name = "typos"
mode = "browser"

[browser.scope]
alowed_domains = ["docs.example.com"]

[browser.commands.clik]

[browser.commands.navigate]
args.ulr = { type = "url" }
`)
	out, code := runBinary(t, "check", "--manifest", m, "--policies", repoPath("policies"))
	if code != 1 {
		t.Fatalf("check: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		m + ":6:1: browser.scope.alowed_domains: unknown key; did you mean `allowed_domains`?",
		m + ":8:19: browser.commands.clik: unknown command; did you mean `click`? (known: ",
		m + ":11:6: browser.commands.navigate.args.ulr: unknown argument for navigate; did you mean `url`? (known: url)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
}

// TestCheckSaysWhereAPolicyFailsToParse: check, given a policy directory
// with a syntax error, names the file, the line and column of the wrong
// token, and what was expected there, and exits 1.
func TestCheckSaysWhereAPolicyFailsToParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shipped, err := filepath.Glob(repoPath("policies/*.cedar"))
	if err != nil || len(shipped) == 0 {
		t.Fatalf("shipped policies: %v", err)
	}
	for _, f := range shipped {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken := filepath.Join(dir, "mine.cedar")
	if err := os.WriteFile(broken, []byte("// mine\n@id(\"mine\")\npermit (principal action, resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "check", "--manifest", repoPath("examples/web-scraping.toml"), "--policies", dir)
	if want := broken + `:3:19: expected ",", found "action"`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("check: exit %d, want 1 and %q:\n%s", code, want, out)
	}
}

// TestHelpAboutHelpInTheBinary: the built binary answers `help help` and
// `help --help` with the usage, and --version with its version.
func TestHelpAboutHelpInTheBinary(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help", "help"}, {"help", "-h"}, {"help", "--help"}} {
		if out, code := runBinary(t, args...); code != 0 || !strings.HasPrefix(out, "usage: browsergate COMMAND") {
			t.Errorf("browsergate %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	if out, code := runBinary(t, "--version"); code != 0 || !strings.HasPrefix(out, "browsergate "+version+"\n") {
		t.Errorf("browsergate --version: exit %d\n%s", code, out)
	}
}
