package main

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// questionManifest declares await_human beside the commands a sign-in needs;
// %s is more of the await_human table (secret_answers).
const questionManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.await_human]
%s
`

// answerValue is a one-time code as an operator would paste it: distinct
// enough that no id, time or hash in a reply holds it by chance.
const answerValue = "OTP-731904-Zq"

// approvalsStdin runs `browsergate approvals ARGS --evidence <the
// fixture's>` with stdin as its standard input.
func (f *fixture) approvalsStdin(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"approvals"}, args...), "--evidence", f.evidence)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestAwaitHumanAnsweredByTheOperator: the agent's question waits in the
// operator's list, shown as text (its markup escaped, never a line of the
// listing); approving it without an answer is refused and leaves it
// waiting; `approvals answer ID TEXT` returns the answer to the agent, and
// the evidence records the question and the answer.
func TestAwaitHumanAnsweredByTheOperator(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(questionManifest, "%s", "", 1))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	question := "Which account should I use?\n  call:   e2e.navigate <b>forged</b>"
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": question})
	id := f.pendingID(t, h)

	out, err := f.approvals(t, "list")
	if err != nil || !strings.Contains(out, `asks:   "Which account should I use?\n  call:   e2e.navigate <b>forged</b>" (question; answer with approvals answer `+id) {
		t.Errorf("approvals list does not show the question as one quoted line (%v):\n%s", err, out)
	}
	if strings.Count(out, "\n  call:") != 1 {
		t.Errorf("the question's line break started a line of the listing:\n%s", out)
	}
	if out, err := f.approvals(t, "approve", id); err == nil || !strings.Contains(out, "is a question: answer it with text") {
		t.Errorf("approving a question without an answer: %v\n%s", err, out)
	}
	if out, err := f.approvals(t, "answer", id, "the work account, alice@corp", "--by", "alice", "--note", "asked on the phone"); err != nil || !strings.Contains(out, id+": answered by alice (uid ") {
		t.Fatalf("approvals answer: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if refused || !strings.Contains(text, "the operator answered question "+id+" (via operator by alice (uid ") || !strings.Contains(text, "): the work account, alice@corp") {
		t.Fatalf("the agent did not get the answer:\n%s", text)
	}
	if out, err := f.approvals(t, "answer", id, "again"); err == nil || !strings.Contains(out, "already answered, expired, or never asked") {
		t.Errorf("answering twice: %v\n%s", err, out)
	}

	// The operator marks an answer secret: the agent gets a placeholder,
	// and the answer is read from stdin, never from the command line.
	h = f.callAsync(t, "e2e.await_human", map[string]any{"question": "The code on the screen?"})
	id = f.pendingID(t, h)
	if out, err := f.approvals(t, "answer", id, answerValue, "--secret"); err == nil || !strings.Contains(out, "read from stdin, never from the command line") {
		t.Errorf("a secret answer on the command line: %v\n%s", err, out)
	}
	if out, err := f.approvalsStdin(t, answerValue+"\n", "answer", id, "--secret"); err != nil || !strings.Contains(out, "the answer is a secret") {
		t.Fatalf("approvals answer --secret from stdin: %v\n%s", err, out)
	}
	text, refused = h.wait(t)
	if refused || !strings.Contains(text, "gave a secret answer to question "+id) || !strings.Contains(text, "Type it as <ANSWER_1>") || strings.Contains(text, answerValue) {
		t.Fatalf("the operator's secret answer:\n%s", text)
	}

	f.cs.Close()
	export := exportedRecords(t, f)
	for _, want := range []string{`"command":"await_human"`, `Which account should I use?`, "(via operator by alice (uid ", "): the work account, alice@corp", "gave a secret answer to question"} {
		if !strings.Contains(export, want) {
			t.Errorf("the evidence lacks %q:\n%s", want, export)
		}
	}
	if strings.Contains(export, answerValue) {
		t.Errorf("LEAK: the evidence holds the secret answer:\n%s", export)
	}
}

// exportedRecords is the fixture's evidence log as evidence export writes
// it (jsonl: the stored envelopes, outputs and arguments included).
func exportedRecords(t *testing.T, f *fixture) string {
	t.Helper()
	out, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("evidence export exited %d:\n%s", code, out)
	}
	return out
}

// TestAwaitHumanTimesOut: a question nobody answers fails at its
// timeout_seconds and says so; a timeout outside the command's bounds is
// refused before anyone is asked.
func TestAwaitHumanTimesOut(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(questionManifest, "%s", "", 1))
	f.mustRefuse(t, "e2e.await_human", map[string]any{"question": "anyone?", "timeout_seconds": 1}, "timeout_seconds")
	if out, err := f.approvals(t, "list"); err != nil || !strings.Contains(out, "no calls are waiting") {
		t.Errorf("a refused question was put to the operator: %v\n%s", err, out)
	}
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "anyone there?", "timeout_seconds": 5})
	id := f.pendingID(t, h)
	text, refused := h.wait(t)
	if !refused || !strings.Contains(text, "nobody answered question "+id+" within 5s") {
		t.Fatalf("an unanswered question:\n%s", text)
	}
	if out, err := f.approvals(t, "answer", id, "too late"); err == nil || !strings.Contains(out, "already answered, expired, or never asked") {
		t.Errorf("answering after the deadline: %v\n%s", err, out)
	}
}

// TestAwaitHumanSecretAnswerIsTypedUnseen: with secret_answers declared,
// the operator's answer (a one-time code) reaches the page's field through
// the placeholder the agent types, and no reply, log line or evidence
// record holds it: the page echoes it back masked, and it may not be typed
// on another site.
func TestAwaitHumanSecretAnswerIsTypedUnseen(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(questionManifest, "%s", "secret_answers = true", 1), "--log-level", "debug")
	var seen []string
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res := f.callResult(t, tool, args)
		structured, _ := json.Marshal(res.StructuredContent)
		text := resultText(res)
		seen = append(seen, text, string(structured))
		return text, res.IsError
	}
	must := func(tool string, args map[string]any, wants ...string) string {
		t.Helper()
		text, refused := call(tool, args)
		if refused {
			t.Fatalf("%s refused:\n%s", tool, text)
		}
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: output lacks %q:\n%s", tool, w, text)
			}
		}
		return text
	}

	must("e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	// The agent does not ask for a secret; the manifest makes it one.
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "The one-time code, please", "secret": false})
	id := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, "(question, secret answer;") {
		t.Errorf("approvals list does not say the answer is a secret:\n%s", out)
	}
	if out, err := f.approvalsStdin(t, "123\n", "answer", id); err == nil || !strings.Contains(out, "at least 6 characters") {
		t.Errorf("a secret answer too short to mask: %v\n%s", err, out)
	}
	if out, err := f.approvals(t, "answer", id, answerValue); err == nil || !strings.Contains(out, "read from stdin") {
		t.Errorf("the secret answer on the command line: %v\n%s", err, out)
	}
	if out, err := f.approvalsStdin(t, answerValue+"\n", "answer", id, "--by", "alice"); err != nil {
		t.Fatalf("approvals answer from stdin: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	seen = append(seen, text)
	if refused || !strings.Contains(text, "Type it as <ANSWER_1>") {
		t.Fatalf("the secret answer's reply:\n%s", text)
	}

	must("e2e.type_text", map[string]any{"selector": "#v", "text": "<ANSWER_1>"}, "typed secret ANSWER_1 into")
	must("e2e.snapshot", nil, "[secret ANSWER_1]")
	must("e2e.submit_form", map[string]any{"selector": "form"}, `v=\x5bsecret ANSWER_1\x5d`)
	must("e2e.snapshot", nil, "Sent: [secret ANSWER_1]")
	if got, _ := f.site.Echoed.Load().(string); got != answerValue {
		t.Errorf("the page's form sent %q, want the operator's answer: the placeholder was not filled in", got)
	}
	// Only on the site it was asked on.
	must("e2e.navigate", map[string]any{"url": f.xsite + "/echo"})
	if text, refused := call("e2e.type_text", map[string]any{"selector": "#v", "text": "<ANSWER_1>"}); !refused || !strings.Contains(text, "DENIED at secrets") || !strings.Contains(text, "may only be typed on 127.0.0.1") {
		t.Errorf("typing the secret answer on another site:\n%s", text)
	}

	f.cs.Close()
	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	export := exportedRecords(t, f)
	if !strings.Contains(export, "gave a secret answer to question "+id+" (via operator by alice (uid ") {
		t.Errorf("the evidence does not record that a secret answer was given, and by whom:\n%s", export)
	}
	raw, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]string{
		"tool results":      strings.Join(seen, "\n"),
		"serve's log":       f.stderr.String(),
		"evidence show":     show,
		"evidence export":   export,
		"raw evidence file": string(raw),
	}
	js, _ := json.Marshal(answerValue)
	for name, text := range sinks {
		for _, form := range []string{answerValue, url.QueryEscape(answerValue), html.EscapeString(answerValue), string(js[1 : len(js)-1]), "731904"} {
			if i := strings.Index(text, form); i >= 0 {
				t.Errorf("LEAK: %s hold the secret answer as %q: …%s…", name, form, text[max(0, i-80):min(len(text), i+80)])
			}
		}
	}
}

// TestAwaitHumanIsGovernedByCedar: whether an agent may ask is Cedar's
// decision like any command's: a forbid on the question's text refuses the
// call at stage cedar before any operator hears of it; another question
// is put to the operator, who declines it, and the agent is told so.
func TestAwaitHumanIsGovernedByCedar(t *testing.T) {
	t.Parallel()
	policies := testkit.CopyPolicies(t)
	testkit.WriteFile(t, policies, "questions.cedar", `@id("no-password-questions")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "await_human" && resource.args has question && resource.args.question like "*password*" };
`)
	f := startWith(t, strings.Replace(questionManifest, "%s", "", 1), "--policies", policies)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/echo"})
	f.mustRefuse(t, "e2e.await_human", map[string]any{"question": "What is alice's password?"}, "DENIED at cedar", "no-password-questions")
	if out, err := f.approvals(t, "list"); err != nil || !strings.Contains(out, "no calls are waiting") {
		t.Errorf("a question Cedar refused was put to the operator: %v\n%s", err, out)
	}
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "May I delete the draft?"})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "deny", id, "--by", "bob", "--note", "keep it"); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	text, refused := h.wait(t)
	if !refused || !strings.Contains(text, "the operator declined to answer question "+id+" (via operator by bob (uid ") || !strings.Contains(text, "keep it") {
		t.Fatalf("a declined question:\n%s", text)
	}
}
