package operator_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
)

// TestAnswerAQuestionOnTheSocket: the operator answers a question with
// text, which reaches the waiting call with who answered and whether it
// is a secret; the socket refuses an approval without text for a
// question, and text for a held call, leaving both waiting.
func TestAnswerAQuestionOnTheSocket(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	ctx := context.Background()
	q := ch.broker.Open(approval.Request{Session: "s1", Tool: "t.await_human", Command: "await_human",
		Question: "The code?", Page: "https://login.example/"}, time.Minute)
	held := ch.hold("t.submit_form")

	listed, err := ch.client.List(ctx)
	if err != nil || len(listed) != 2 || listed[0].Question != "The code?" || !listed[0].IsQuestion() || listed[1].IsQuestion() {
		t.Fatalf("List = %+v, %v", listed, err)
	}
	if _, err := ch.client.Decide(ctx, q.ID, operator.Decision{Approve: true}); !errors.Is(err, operator.ErrBadRequest) || !strings.Contains(err.Error(), "is a question") {
		t.Errorf("approving a question without text: %v", err)
	}
	if _, err := ch.client.AnswerQuestion(ctx, held.ID, operator.Reply{Text: "yes"}); !errors.Is(err, operator.ErrBadRequest) || !strings.Contains(err.Error(), "not a question") {
		t.Errorf("answering a held call with text: %v", err)
	}
	if q.Answered() || held.Answered() {
		t.Fatal("a refused answer answered a request")
	}
	ans, err := ch.client.AnswerQuestion(ctx, q.ID, operator.Reply{Text: "OTP-731904", Secret: true, By: "alice", Note: "from the phone"})
	if err != nil || !ans.Approved || !ans.Answered || !strings.HasPrefix(ans.By, "alice (uid ") {
		t.Fatalf("AnswerQuestion = %+v, %v", ans, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	o := q.Wait(wctx)
	if !o.Approved || o.Answer != "OTP-731904" || !o.Secret || o.Channel != approval.ChannelOperator || o.Note != "from the phone" {
		t.Errorf("the waiting call got %+v", o)
	}
}

// TestEmptyAnswerDoesNotApproveAHeldCall: {"answer": ""} is an answer, not
// an approval: on a held call it is refused, and the call waits on.
func TestEmptyAnswerDoesNotApproveAHeldCall(t *testing.T) {
	t.Parallel()
	ch := newChannel(t)
	ctx := context.Background()
	held := ch.hold("t.submit_form")
	q := ch.broker.Open(approval.Request{Session: "s1", Tool: "t.await_human", Command: "await_human", Question: "The code?"}, time.Minute)
	if _, err := ch.client.AnswerQuestion(ctx, held.ID, operator.Reply{Text: ""}); !errors.Is(err, operator.ErrBadRequest) || !strings.Contains(err.Error(), "not a question") {
		t.Errorf("an empty answer to a held call: %v", err)
	}
	if _, err := ch.client.AnswerQuestion(ctx, q.ID, operator.Reply{Text: ""}); !errors.Is(err, operator.ErrBadRequest) || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("an empty answer to a question: %v", err)
	}
	if held.Answered() || q.Answered() {
		t.Fatal("an empty answer answered a request")
	}
}
