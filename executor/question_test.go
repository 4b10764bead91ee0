package executor

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestSecretAnswerIsTheSessionsOwn: a secret answer becomes a secret of
// the session that asked, named after the next free ANSWER_n (never a
// manifest secret's name): the session types and masks it, its backend's
// log lines and the daemon's mask it, and another session of the same
// manifest neither fills it in nor sees it masked as its own.
func TestSecretAnswerIsTheSessionsOwn(t *testing.T) {
	m := testkit.SecretManifest(t, "Manifest-Value-1")
	m.Secrets[0].Name = "ANSWER_1" // a manifest secret already has the first answer's name
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: testkit.Policies(t), Evidence: testkit.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	asked, err := e.session(&toolclad.Call{SessionID: "mcp-1", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.session(&toolclad.Call{SessionID: "mcp-2", Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	const code = "OTP-731904-Zq"
	sec, err := e.keepAnswer(asked, code, []string{"login.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Name != "ANSWER_2" || sec.Placeholder() != "<ANSWER_2>" {
		t.Errorf("the answer is named %s, want ANSWER_2 (ANSWER_1 is the manifest's)", sec.Name)
	}
	if got := asked.secrets.Load().Fill("<ANSWER_2>"); got != code {
		t.Errorf("the asking session fills in %q", got)
	}
	if got := asked.masker.Load().Mask("sent " + code); got != "sent [secret ANSWER_2]" {
		t.Errorf("the asking session's record masker left %q", got)
	}
	if got := asked.maskPage("sent "+code, "login.example.com"); strings.Contains(got, code) {
		t.Errorf("the agent is shown the answer its page echoes: %q", got)
	}
	if got := asked.backend.logMasker.Load().Mask(code); got != "[secret ANSWER_2]" {
		t.Errorf("the backend's log masker left %q", got)
	}
	if got := e.allSecrets.Load().Mask(code); got != "[secret ANSWER_2]" {
		t.Errorf("the daemon's log masker left %q", got)
	}
	if got := other.secrets.Load().Fill("<ANSWER_2>"); got != "<ANSWER_2>" {
		t.Errorf("another session fills the answer in: %q", got)
	}
	if len(other.secrets.Load().All()) != 1 {
		t.Errorf("another session holds %d secrets, want the manifest's one", len(other.secrets.Load().All()))
	}
	if got := e.maskers[m].Mask(code); got != code {
		t.Errorf("the manifest's masker, which new sessions take, masks the answer: %q", got)
	}
	if sec, err := e.keepAnswer(asked, "OTP-2-000000", []string{"login.example.com"}); err != nil || sec.Name != "ANSWER_3" {
		t.Errorf("the second answer: %v, %v", sec, err)
	}
}

// TestQuestionTimeout: the agent's timeout_seconds, else the daemon's
// approval timeout held to the bound the manifest declares.
func TestQuestionTimeout(t *testing.T) {
	m := testkit.Manifest(t, `
[tool]
name = "q"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.await_human]
args.question = {}
args.timeout_seconds = { max = 30 }
`)
	bounded := m.Command("await_human")
	if bounded == nil {
		t.Fatal("await_human is not declared")
	}
	cases := []struct {
		name string
		call *toolclad.Call
		want time.Duration
	}{
		{"given", &toolclad.Call{Command: bounded, Args: map[string]any{"timeout_seconds": int64(12)}}, 12 * time.Second},
		{"the default, bounded by the manifest", &toolclad.Call{Command: bounded, Args: map[string]any{}}, 30 * time.Second},
		{"the default, unbounded", &toolclad.Call{Command: &toolclad.Command{Name: "await_human"}, Args: map[string]any{}}, 55 * time.Second},
	}
	for _, c := range cases {
		if got := QuestionTimeout(c.call, 55*time.Second); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSecretAnswerDomains: without secret_answer_domains a secret answer
// is bound to the host the question was asked on; with it, only a page on
// one of them may ask for one, and the answer is bound to all of them; a
// page without a host never may.
func TestSecretAnswerDomains(t *testing.T) {
	bound := &toolclad.Command{Name: "await_human", SecretAnswerDomains: []string{"login.example.com", "*.sso.example.com"}}
	free := &toolclad.Command{Name: "await_human"}
	cases := []struct {
		name     string
		cmd      *toolclad.Command
		page     string
		want     []string
		noSecret string // a piece of why no secret answer can be given
	}{
		{"unbound: the page's host", free, "https://user:pw@bücher.example/otp", []string{"xn--bcher-kva.example"}, ""},
		{"on the declared host", bound, "https://login.example.com/otp", []string{"login.example.com", "*.sso.example.com"}, ""},
		{"on the declared glob", bound, "https://eu.sso.example.com/", []string{"login.example.com", "*.sso.example.com"}, ""},
		{"elsewhere", bound, "https://www.example.com/", nil, "only be asked for on a page of await_human's secret_answer_domains (login.example.com, *.sso.example.com), and the tab is on www.example.com"},
		{"no host", free, "about:blank", nil, "which has no host"},
	}
	for _, c := range cases {
		got, noSecret := secretAnswerDomains(c.cmd, c.page, hostOf(c.page))
		if !slices.Equal(got, c.want) || (c.noSecret == "") != (noSecret == "") || !strings.Contains(pagetext.Unmarked(noSecret), c.noSecret) {
			t.Errorf("%s: %q, %q; want %q, %q", c.name, got, noSecret, c.want, c.noSecret)
		}
	}
}
