package gate_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestUnknownPlaceholderIsRefused: type_text's text with a token shaped
// like a placeholder that names no secret of the session is refused at
// stage args, naming the nearest secret and the secrets the session has;
// a secret answer not given yet is refused as one not given.
func TestUnknownPlaceholderIsRefused(t *testing.T) {
	f := newDecideFixture(t)
	field := func() *gate.Facts {
		return withElement(on("https://login.example.com/"), textField("https://login.example.com/", true))
	}
	for _, tc := range []struct {
		name, text string
		want       []string // in the reason; nil: not refused at stage args
	}{
		{"one letter off", "<PWD>", []string{"unknown secret <PWD>; did you mean <PW>?", "PW, TOKEN"}},
		{"inside other text", "user: <TOKNE> ok", []string{"unknown secret <TOKNE>; did you mean <TOKEN>?"}},
		{"far from every name", "<SITE_PASSWORD>", []string{"unknown secret <SITE_PASSWORD> (", "PW, TOKEN"}},
		{"a secret answer not given", "<ANSWER_1>", []string{"no secret answer ANSWER_1 yet"}},
		{"after a known placeholder", "<PW><PWX>", []string{"unknown secret <PWX>"}},
		{"the secret itself", "<PW>", nil},
		{"lower case is text", "<b>bold</b> <pw>", nil},
		{"not a name", "<1A> < PW> <PW >", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := gate.Decide(f.ask(t, f.m, "type_text", map[string]any{"ref": "e3", "text": tc.text}, field(), nil))
			refused := v.Deny != nil && v.Deny.Stage == evidence.StageArgs
			if tc.want == nil {
				if refused {
					t.Fatalf("refused at stage args: %v", v.Deny)
				}
				return
			}
			if !refused {
				t.Fatalf("verdict %+v, want a refusal at stage args", v.Deny)
			}
			for _, w := range tc.want {
				if !strings.Contains(v.Deny.Reason, w) {
					t.Errorf("reason %q lacks %q", v.Deny.Reason, w)
				}
			}
		})
	}
}

// TestSecretAnswerPlaceholderOnceGiven: once the session has the secret
// answer ANSWER_1, its placeholder passes the argument stage.
func TestSecretAnswerPlaceholderOnceGiven(t *testing.T) {
	f := newDecideFixture(t)
	ss, err := f.secrets.With(toolclad.AnsweredSecret("ANSWER_1", "123456789", []string{"login.example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	f.secrets = ss
	q := f.ask(t, f.m, "type_text", map[string]any{"ref": "e3", "text": "<ANSWER_1>"}, withElement(on("https://login.example.com/"), textField("https://login.example.com/", true)), nil)
	if v := gate.Decide(q); v.Deny != nil && v.Deny.Stage == evidence.StageArgs {
		t.Fatalf("refused at stage args: %v", v.Deny)
	}
	q = f.ask(t, f.m, "type_text", map[string]any{"ref": "e3", "text": "<ANSWER_2>"}, withElement(on("https://login.example.com/"), textField("https://login.example.com/", true)), nil)
	if v := gate.Decide(q); v.Deny == nil || !strings.Contains(v.Deny.Reason, "no secret answer ANSWER_2 yet") || !strings.Contains(v.Deny.Reason, "ANSWER_1") {
		t.Fatalf("verdict %v, want no secret answer ANSWER_2 yet, listing ANSWER_1", v.Deny)
	}
}

// TestPlaceholderShapedTextWithoutSecrets: a manifest with no secrets and
// no await_human types "<B>" as text.
func TestPlaceholderShapedTextWithoutSecrets(t *testing.T) {
	f := newDecideFixture(t)
	m := testkit.Manifest(t, `
[tool]
name = "plain"
[browser.scope]
allowed_domains = ["*.example.com"]
[browser.commands.type_text]
`)
	f.secrets = nil
	q := f.ask(t, m, "type_text", map[string]any{"ref": "e3", "text": "<B>x</B>"}, withElement(on("https://www.example.com/"), textField("https://www.example.com/", false)), nil)
	if v := gate.Decide(q); v.Deny != nil {
		t.Fatalf("refused: %v", v.Deny)
	}
}
