package main

import (
	"strings"
	"testing"
)

// TestMistypedSecretPlaceholderIsRefused: with secrets APP_PASSWORD and
// TILDE, type_text of "<APP_PASWORD>" is refused at stage args, naming the
// nearest secret and the session's secrets, and nothing is typed (the site
// receives no value when the form is sent); "<ANSWER_1>" before any
// secret answer is refused as an answer not given; lower-case tags are
// typed as text.
func TestMistypedSecretPlaceholderIsRefused(t *testing.T) {
	t.Parallel()
	f := startWith(t, secretsManifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})

	text, refused := f.call(t, "e2e.type_text", map[string]any{"selector": "#v", "text": "<APP_PASWORD>"})
	for _, w := range []string{"DENIED at args", "unknown secret <APP_PASWORD>; did you mean <APP_PASSWORD>?", "APP_PASSWORD, TILDE"} {
		if !refused || !strings.Contains(text, w) {
			t.Errorf("type_text of a mistyped placeholder: want a refusal with %q:\n%s", w, text)
		}
	}
	text, refused = f.call(t, "e2e.type_text", map[string]any{"selector": "#v", "text": "code <ANSWER_1>"})
	if !refused || !strings.Contains(text, "no secret answer ANSWER_1 yet") {
		t.Errorf("type_text of a secret answer not given: want a refusal, no secret answer ANSWER_1 yet:\n%s", text)
	}
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "form"})
	if got, _ := f.site.Echoed.Load().(string); got != "" {
		t.Errorf("the site received %q: a refused placeholder was typed", got)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#v", "text": "<b>bold</b>"})
	f.mustAllow(t, "e2e.submit_form", map[string]any{"selector": "form"})
	if got, _ := f.site.Echoed.Load().(string); got != "<b>bold</b>" {
		t.Errorf("the site received %q, want the lower-case tags typed as text", got)
	}
}
