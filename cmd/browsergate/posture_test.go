package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsOfRiskyChoices: check validates a set that serve would
// run, and warns of each risky choice in it (an open scope, a grant of
// every address, submit_form without approval, a command no policy can
// ever permit, policy names nothing matches); --matrix prints each
// command's decision alone and approved. A plain set gets no warning.
func TestCheckWarnsOfRiskyChoices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shippedPoliciesWith(t, dir, `
// resource.command == "in-a-comment" is not looked at
forbid (principal, action, resource) when { resource.command == "scroll" };
forbid (principal, action, resource) when { resource.url_domain in Web::DomainSet::"internal" && ["clik", "navigate"].contains(resource.command) };
`)
	risky := write("risky.toml", `
[tool]
name = "risky"
mode = "browser"
description = "a risky manifest"
[browser]
[browser.scope]
allowed_domains = ["*"]
allow_external = true
allow_private_cidrs = ["0.0.0.0/0", "10.1.2.0/24"]
[browser.commands.navigate]
[browser.commands.submit_form]
[browser.commands.scroll]
`)
	var out strings.Builder
	if err := check([]string{risky}, filepath.Join(dir, "policies"), ".", true, serveChoices{}, &out); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"warning: " + risky + ": allow_external = true",
		`allow_private_cidrs "0.0.0.0/0" grants every address`,
		`allowed_domains "*" takes in every site`,
		"risky.submit_form can run without a human's approval (for local, on a page in the scope not signed in)",
		"no policy permits risky.scroll on a page in the scope for the stdio agent, even with a human's approval",
		`extra.cedar:4: Web::DomainSet::"internal" is defined by no manifest`,
		`extra.cedar:4: command "clik" is not a built-in command`,
		"risky.scroll                       deny      deny      refused",
		"risky.submit_form                  allow     allow     runs",
		"ok (7 warning(s))",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check does not say %q:\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		for _, not := range []string{"10.1.2.0/24", "in-a-comment", `command "navigate"`} {
			if strings.HasPrefix(line, "warning: ") && strings.Contains(line, not) {
				t.Errorf("check warns of %q: %s", not, line)
			}
		}
	}
	out.Reset()
	if err := check([]string{repoPath("examples/web-app-testing.toml")}, repoPath("policies"), ".", false, serveChoices{}, &out); err != nil || !strings.HasSuffix(out.String(), "ok (0 warning(s))\n") {
		t.Errorf("the plain example: %v\n%s", err, out.String())
	}
}
