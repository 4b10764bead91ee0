package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckExplainsAskExternal: check says what ask_external asks about,
// what an approval leaves reachable and what is never asked about; it
// warns when no navigate can be asked about (navigate not declared) and
// when the policies would deny an approved one anyway. A manifest that
// asks, under the shipped policies, gets no warning.
func TestCheckExplainsAskExternal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "[tool]\nname = %q\n[browser.scope]\nallowed_domains = [\"docs.example.com\"]\nask_external = true\n"
	asks := write("asks.toml", strings.Replace(head, "%q", `"asks"`, 1)+"[browser.commands.navigate]\n[browser.commands.snapshot]\n")
	mute := write("mute.toml", strings.Replace(head, "%q", `"mute"`, 1)+"[browser.commands.snapshot]\n")

	var out strings.Builder
	if err := check([]string{asks}, repoPath("policies"), ".", false, serveChoices{}, &out); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"other public sites only with a human's approval: navigate to one waits for it",
		"ask_external: a navigate to a public host outside allowed_domains waits for a human's approval",
		"its origin (scheme, host, port) is reachable by the session's pages until the session ends",
		"private, loopback, link-local and metadata addresses are refused at once and never asked about",
		"ok (0 warning(s))",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := check([]string{mute}, repoPath("policies"), ".", false, serveChoices{}, &out); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	if want := "warning: " + mute + ": ask_external = true, but navigate is not declared with a scope-checked url"; !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %q:\n%s", want, out.String())
	}

	policies := shippedPoliciesWith(t, dir, `@id("never-outside")
forbid (principal, action, resource) when { resource.url_domain in Web::DomainSet::"ask_external" };
`)
	// The shipped policy tests expect the shipped decisions; this set
	// differs on purpose.
	if err := os.Remove(filepath.Join(policies, "policy-tests.json")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := check([]string{asks}, policies, ".", false, serveChoices{}, &out); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	if want := "warning: " + asks + `: ask_external = true, but the policies deny a navigate outside allowed_domains even when a human approved it (forbidden by policy "never-outside"`; !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %q:\n%s", want, out.String())
	}
}
