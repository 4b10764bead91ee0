package approval_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
)

// TestAnswerMustFitTheRequest: a held call takes an approval or a denial,
// never text; a question takes text or a denial, never a bare approval; a
// secret answer must be long enough to mask. An answer that does not fit
// is ErrBadAnswer and leaves the request waiting for one that does.
func TestAnswerMustFitTheRequest(t *testing.T) {
	call := approval.Request{Tool: "t.submit_form", Why: []string{"policy p"}}
	question := approval.Request{Tool: "t.await_human", Question: "Which account?"}
	secret := approval.Request{Tool: "t.await_human", Question: "The code?", SecretAnswer: true}
	cases := []struct {
		name string
		req  approval.Request
		o    approval.Outcome
		bad  string // "" when the answer fits
	}{
		{"a held call approved", call, approval.Outcome{Approved: true}, ""},
		{"a held call denied", call, approval.Outcome{}, ""},
		{"a held call given text", call, approval.Outcome{Approved: true, Answering: true, Answer: "yes"}, "not a question: approve or deny it"},
		{"a held call marked secret", call, approval.Outcome{Approved: true, Secret: true}, "not a question"},
		{"a question answered", question, approval.Outcome{Approved: true, Answering: true, Answer: "the work one"}, ""},
		{"a question declined", question, approval.Outcome{}, ""},
		{"a question approved without text", question, approval.Outcome{Approved: true}, "is a question: answer it with text"},
		{"a question declined with text", question, approval.Outcome{Answer: "x"}, "answered with text or declined, not both"},
		{"an answer too long", question, approval.Outcome{Approved: true, Answering: true, Answer: strings.Repeat("a", approval.MaxAnswer+1)}, "longer than 4000 characters"},
		{"an answer not UTF-8", question, approval.Outcome{Approved: true, Answering: true, Answer: "\xff\xfe"}, "not valid UTF-8"},
		{"a secret question, a short answer", secret, approval.Outcome{Approved: true, Answering: true, Answer: "12345"}, "at least 6 characters"},
		{"a short answer the operator marks secret", question, approval.Outcome{Approved: true, Answering: true, Answer: "12345", Secret: true}, "at least 6 characters"},
		{"a short answer, not secret", question, approval.Outcome{Approved: true, Answering: true, Answer: "12345"}, ""},
		{"a secret answer long enough", secret, approval.Outcome{Approved: true, Answering: true, Answer: "123456"}, ""},
		{"a secret answer where none can be typed", approval.Request{Question: "code?", NoSecret: "the page is not on secret_answer_domains"},
			approval.Outcome{Approved: true, Answering: true, Answer: "123456", Secret: true}, "cannot take a secret answer: the page is not on secret_answer_domains"},
		{"a plain answer where no secret can be typed", approval.Request{Question: "code?", NoSecret: "the page is not on secret_answer_domains"},
			approval.Outcome{Approved: true, Answering: true, Answer: "the work one"}, ""},
		{"a held call given an empty answer", call, approval.Outcome{Approved: true, Answering: true}, "not a question: approve or deny it"},
		{"a question given an empty answer", question, approval.Outcome{Approved: true, Answering: true}, "is empty"},
		{"a question given white space", question, approval.Outcome{Approved: true, Answering: true, Answer: " \t "}, "is empty"},
		{"a question given only spaces", question, approval.Outcome{Approved: true, Answering: true, Answer: "   "}, "is empty"},
		{"a question approved as a held call is", question, approval.Outcome{Approved: true, Answer: ""}, "a question is not approved"},
		{"a plain answer of two lines", question, approval.Outcome{Approved: true, Answering: true, Answer: "the work one\nand more"}, "control character (U+000A, at character 13)"},
		{"a secret answer with a newline inside", secret, approval.Outcome{Approved: true, Answering: true, Answer: "12345\n6"}, "control character"},
		{"a secret answer padded with NULs", secret, approval.Outcome{Approved: true, Answering: true, Answer: "1234\x00\x00"}, "control character (U+0000"},
		{"a secret answer padded with spaces", secret, approval.Outcome{Approved: true, Answering: true, Answer: " 1234 "}, "at least 6 characters"},
		{"a secret answer of five digits and a space", secret, approval.Outcome{Approved: true, Answering: true, Answer: "123 45"}, "at least 6 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := approval.NewBroker(nil)
			p := b.Open(c.req, time.Minute)
			err := b.Decide(p.ID, c.o)
			if c.bad == "" {
				if err != nil {
					t.Fatalf("Decide = %v, want the answer taken", err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if o := p.Wait(ctx); o.Approved != c.o.Approved || o.Answer != c.o.Answer || o.Secret != c.o.Secret {
					t.Errorf("the waiter got %+v, want %+v", o, c.o)
				}
				return
			}
			if !errors.Is(err, approval.ErrBadAnswer) || !strings.Contains(err.Error(), c.bad) {
				t.Fatalf("Decide = %v, want ErrBadAnswer saying %q", err, c.bad)
			}
			if p.Answered() || len(b.List()) != 1 {
				t.Fatal("a refused answer took the request off the list")
			}
			// Still waiting: an answer that fits is taken.
			fits := approval.Outcome{Approved: true}
			if c.req.IsQuestion() {
				fits.Answer, fits.Answering = "123456-fits", true
			}
			if err := b.Decide(p.ID, fits); err != nil {
				t.Errorf("a fitting answer after the refused one: %v", err)
			}
		})
	}
}

// TestKeptSecret: an answer is kept from the agent when the question asked
// for a secret or the operator marked it one; the operator cannot unmark
// a secret question.
func TestKeptSecret(t *testing.T) {
	plain := approval.Request{Question: "q"}
	secret := approval.Request{Question: "q", SecretAnswer: true}
	if plain.KeptSecret(approval.Outcome{}) {
		t.Error("a plain question's plain answer is kept secret")
	}
	if !plain.KeptSecret(approval.Outcome{Secret: true}) {
		t.Error("an answer the operator marked secret is not kept secret")
	}
	if !secret.KeptSecret(approval.Outcome{Secret: false}) {
		t.Error("the operator's unmarked answer to a secret question is not kept secret")
	}
}

// TestAnswerKeptTrimmed: the white space around an answer is not part of
// it (a code pasted with a newline), so the agent, or the field a secret
// is typed into, gets the text alone.
func TestAnswerKeptTrimmed(t *testing.T) {
	for _, secret := range []bool{false, true} {
		b := approval.NewBroker(nil)
		p := b.Open(approval.Request{Question: "The code?", SecretAnswer: secret}, time.Minute)
		if err := b.Decide(p.ID, approval.Outcome{Approved: true, Answering: true, Answer: "  731 904 "}); err != nil {
			t.Fatalf("secret %v: Decide = %v", secret, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		o := p.Wait(ctx)
		cancel()
		if o.Answer != "731 904" {
			t.Errorf("secret %v: the answer kept is %q, want %q", secret, o.Answer, "731 904")
		}
	}
}
