package daemon

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
)

// TestConsoleAnswersAQuestion: the agent's question is shown as text (its
// markup escaped, never rendered), with a field for the answer and a
// checkbox to keep it secret; a question that asks for a secret gets a
// password field. The answer reaches the waiting call as the console's,
// with the operator's name; an empty answer is refused and the question
// goes on waiting.
func TestConsoleAnswersAQuestion(t *testing.T) {
	f, broker, _ := consoleFront(t)
	b := &browser{t: t, base: f.URL()}
	_, h, _ := b.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
	home := h.Get("Location")

	q := broker.Open(approval.Request{Session: "s1", Agent: "alice", Tool: "t.await_human", Command: "await_human",
		Question: `Which account? <script>alert(1)</script><form action="/x"><input name="answer">`, Why: []string{"the agent asks the operator a question"},
		Page: "https://a.example/"}, time.Minute)
	secret := broker.Open(approval.Request{Session: "s1", Tool: "t.await_human", Command: "await_human",
		Question: "The code?", SecretAnswer: true, Why: []string{"the agent asks the operator a question"}}, time.Minute)
	_, _, page := b.do("GET", home, nil, nil)
	csrf := between(page, `name="csrf" value="`, `"`)
	if strings.Contains(page, "<script>alert(1)") || strings.Contains(page, `<form action="/x">`) ||
		!strings.Contains(page, `Which account? &lt;script&gt;alert(1)&lt;/script&gt;&lt;form action=&#34;/x&#34;&gt;`) {
		t.Errorf("the question is not shown as escaped text:\n%s", page)
	}
	section := between(page, `id="held-`+q.ID+`"`, "</section>")
	if !strings.Contains(section, `<input name="answer"`) || !strings.Contains(section, `name="secret" value="yes"`) || !strings.Contains(section, `value="answer"`) {
		t.Errorf("the question has no answer field and secret checkbox:\n%s", section)
	}
	if s := between(page, `id="held-`+secret.ID+`"`, "</section>"); !strings.Contains(s, `type="password" name="answer"`) {
		t.Errorf("a secret question's answer field is not a password field:\n%s", s)
	}

	post := func(id string, form url.Values) int {
		form.Set("csrf", csrf)
		code, _, _ := b.do("POST", home+"approvals/"+id, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
		return code
	}
	if code := post(q.ID, url.Values{"decision": {"answer"}, "answer": {""}}); code != http.StatusBadRequest || q.Answered() {
		t.Errorf("an empty answer: %d, answered %v", code, q.Answered())
	}
	if code := post(q.ID, url.Values{"decision": {"approve"}}); code != http.StatusBadRequest || q.Answered() {
		t.Errorf("approving a question: %d, answered %v", code, q.Answered())
	}
	if code := post(q.ID, url.Values{"decision": {"answer"}, "answer": {"the work account"}, "secret": {"yes"}}); code != http.StatusSeeOther {
		t.Fatalf("answering: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if o := q.Wait(ctx); !o.Approved || o.Answer != "the work account" || !o.Secret || o.Channel != approval.ChannelConsole || o.By != "olga" {
		t.Errorf("the outcome: %+v", o)
	}
}

// TestConsoleEmptyAnswerDoesNotApproveAHeldCall: the "answer" verdict with
// no text, posted for a call held for approval, is refused and the call
// waits on: only "approve" approves it.
func TestConsoleEmptyAnswerDoesNotApproveAHeldCall(t *testing.T) {
	f, broker, _ := consoleFront(t)
	b := &browser{t: t, base: f.URL()}
	_, h, _ := b.do("POST", "/console/login", url.Values{"token": {olgaToken}}, nil)
	home := h.Get("Location")
	held := broker.Open(approval.Request{Session: "s1", Tool: "t.submit_form", Command: "submit_form", Why: []string{"policy p"}}, time.Minute)
	_, _, page := b.do("GET", home, nil, nil)
	csrf := between(page, `name="csrf" value="`, `"`)
	form := url.Values{"csrf": {csrf}, "decision": {"answer"}, "answer": {""}}
	code, _, body := b.do("POST", home+"approvals/"+held.ID, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if code != http.StatusBadRequest || !strings.Contains(body, "not a question") || held.Answered() {
		t.Errorf("an empty answer to a held call: %d %q, answered %v", code, body, held.Answered())
	}
}
