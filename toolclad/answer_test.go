package toolclad_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// answerDomainsManifest is a manifest whose await_human declares
// secret_answer_domains = list.
func answerDomainsManifest(list string) string {
	return "[tool]\nname = \"q\"\n\n[browser.scope]\nallowed_domains = [\"login.example.com\", \"*.sso.example.com\"]\n\n" +
		"[browser.commands.await_human]\nsecret_answer_domains = " + list + "\n"
}

// TestSecretAnswerDomainsLoad: await_human's secret_answer_domains loads
// as written, a glob too; without the key the command has none.
func TestSecretAnswerDomainsLoad(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("q.toml", []byte(answerDomainsManifest(`["login.example.com", "*.sso.example.com"]`)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := m.Command("await_human").SecretAnswerDomains; !slices.Equal(got, []string{"login.example.com", "*.sso.example.com"}) {
		t.Errorf("SecretAnswerDomains = %q", got)
	}
	m, err = toolclad.Parse("q.toml", []byte("[tool]\nname = \"q\"\n\n[browser.scope]\nallowed_domains = [\"login.example.com\"]\n\n[browser.commands.await_human]\n"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := m.Command("await_human").SecretAnswerDomains; got != nil {
		t.Errorf("without the key, SecretAnswerDomains = %q", got)
	}
}

// TestSecretAnswerDomainsProblems: an entry outside the scope, one that is
// not a pattern, an empty list, and the key on another command are load
// problems at the entry or key, saying what is wrong.
func TestSecretAnswerDomainsProblems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, manifest string
		want           []string
	}{
		{"outside the scope", answerDomainsManifest(`["login.example.com", "evil.example.net"]`),
			[]string{"secret_answer_domains[1]", `"evil.example.net" is outside [browser.scope]`}},
		{"a glob outside the scope", answerDomainsManifest(`["*.example.org"]`),
			[]string{"secret_answer_domains[0]", `"*.example.org" is outside [browser.scope]`}},
		{"not a pattern", answerDomainsManifest(`["login.example.com/path"]`),
			[]string{"secret_answer_domains[0]"}},
		{"empty", answerDomainsManifest(`[]`),
			[]string{"secret_answer_domains", "is empty: a secret answer could be typed nowhere"}},
		{"on another command", "[tool]\nname = \"q\"\n\n[browser.scope]\nallowed_domains = [\"login.example.com\"]\n\n[browser.commands.type_text]\nsecret_answer_domains = [\"login.example.com\"]\n",
			[]string{"secret_answer_domains"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := toolclad.Parse("q.toml", []byte(c.manifest))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
