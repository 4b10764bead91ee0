package main

import (
	"strings"
	"testing"
)

// codeAnswer is a six-digit one-time code, the kind of secret answer an
// agent could list in full.
const codeAnswer = "731904"

// TestAwaitHumanSecretCodeAmongTheAgentsCodes: an agent that types a list
// of six-digit codes into a field of the answer's site does not see the
// operator's code among them, in clear (as its own text) or by where its
// label stands: the field's value is hidden whole. The operator was told
// where the answer may be typed; once it is typed, execute_js is refused
// on the site as for a manifest secret.
func TestAwaitHumanSecretCodeAmongTheAgentsCodes(t *testing.T) {
	t.Parallel()
	manifest := strings.Replace(questionManifest, "%s", "secret_answers = true", 1) +
		"[browser.commands.execute_js]\n[browser.commands.wait_for]\n"
	f := startWith(t, manifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "The code from the text message?"})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "list"); err != nil || !strings.Contains(out, "a secret answer can be typed on: 127.0.0.1") {
		t.Errorf("approvals list does not say where the secret answer may be typed (%v):\n%s", err, out)
	}
	if out, err := f.approvalsStdin(t, codeAnswer+"\n", "answer", id); err != nil {
		t.Fatalf("approvals answer: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); refused || !strings.Contains(text, "Type it as <ANSWER_1>") {
		t.Fatalf("the secret answer's reply:\n%s", text)
	}

	codes := "000000 731903 " + codeAnswer + " 731905 999999"
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#v", "text": codes})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	// The page's own echo of what was typed ("You typed: …") is the
	// residual docs/secrets.md names; the field's value is hidden whole.
	if strings.Contains(snap, codeAnswer) || strings.Contains(snap, `value="000000`) || !strings.Contains(snap, `value="[secret ANSWER_1]"`) {
		t.Errorf("the field holding the agent's codes is not hidden whole:\n%s", snap)
	}

	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#v", "text": "<ANSWER_1>"})
	f.mustRefuse(t, "e2e.execute_js", map[string]any{"expression": "document.querySelector('#v').value"}, "DENIED at secrets", "secret oracle")
	f.mustRefuse(t, "e2e.wait_for", map[string]any{"text": codeAnswer}, "DENIED at secrets", "secret oracle")
}

// TestAwaitHumanSecretAnswerDomains: with secret_answer_domains declared,
// a secret answer is asked for, and given, only on a page of them: a
// secret question elsewhere is refused before the operator hears of it,
// and the operator's secret mark on a question asked elsewhere is
// refused, leaving it waiting for a plain answer. The evidence records
// who answered, who declined and that nobody answered, on which channel.
func TestAwaitHumanSecretAnswerDomains(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(questionManifest, "%s", `secret_answer_domains = ["127.0.0.3"]`, 1))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	f.mustRefuse(t, "e2e.await_human", map[string]any{"question": "The code?", "secret": true}, "secret_answer_domains (127.0.0.3)", "the tab is on 127.0.0.1")

	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "Which account?"})
	plain := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); strings.Contains(out, "a secret answer can be typed on") {
		t.Errorf("the operator is told a secret answer can be typed where none can:\n%s", out)
	}
	if out, err := f.approvalsStdin(t, codeAnswer+"\n", "answer", plain, "--secret"); err == nil || !strings.Contains(out, "cannot take a secret answer") {
		t.Errorf("a secret answer off secret_answer_domains: %v\n%s", err, out)
	}
	if out, err := f.approvals(t, "answer", plain, "the work one", "--by", "alice"); err != nil {
		t.Fatalf("approvals answer: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); refused || !strings.Contains(text, ": the work one") {
		t.Fatalf("the plain answer:\n%s", text)
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.xsite + "/echo"})
	h = f.callAsync(t, "e2e.await_human", map[string]any{"question": "The code?", "secret": true})
	declined := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, "a secret answer can be typed on: 127.0.0.3") {
		t.Errorf("approvals list does not say where the secret answer may be typed:\n%s", out)
	}
	if out, err := f.approvals(t, "deny", declined, "--by", "bob"); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	h.wait(t)
	h = f.callAsync(t, "e2e.await_human", map[string]any{"question": "Anyone?", "timeout_seconds": 5})
	timedOut := f.pendingID(t, h)
	if text, refused := h.wait(t); !refused || !strings.Contains(text, "nobody answered") {
		t.Fatalf("an unanswered question:\n%s", text)
	}

	f.cs.Close()
	export := exportedRecords(t, f)
	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	for _, want := range []string{
		`"approval":{"approved":true,"at":"`, `"by":"alice (uid `, `"channel":"operator","id":"` + plain + `"`,
		`"approval":{"approved":false,"at":"`, `"by":"bob (uid `, `"channel":"operator","id":"` + declined + `"`,
		`"channel":"timeout","id":"` + timedOut + `"`,
	} {
		if !strings.Contains(export, want) {
			t.Errorf("the evidence lacks %s:\n%s", want, export)
		}
	}
	if !strings.Contains(show, "(approval "+plain+": approved by alice (uid ") || !strings.Contains(show, "(approval "+declined+": denied by bob (uid ") {
		t.Errorf("evidence show does not say who answered:\n%s", show)
	}
}
