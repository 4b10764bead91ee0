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
		{"a held call given text", call, approval.Outcome{Approved: true, Answer: "yes"}, "not a question: approve or deny it"},
		{"a held call marked secret", call, approval.Outcome{Approved: true, Secret: true}, "not a question"},
		{"a question answered", question, approval.Outcome{Approved: true, Answer: "the work one"}, ""},
		{"a question declined", question, approval.Outcome{}, ""},
		{"a question approved without text", question, approval.Outcome{Approved: true}, "is a question: answer it with text"},
		{"a question declined with text", question, approval.Outcome{Answer: "x"}, "answered with text or declined, not both"},
		{"an answer too long", question, approval.Outcome{Approved: true, Answer: strings.Repeat("a", approval.MaxAnswer+1)}, "longer than 4000 characters"},
		{"an answer not UTF-8", question, approval.Outcome{Approved: true, Answer: "\xff\xfe"}, "not valid UTF-8"},
		{"a secret question, a short answer", secret, approval.Outcome{Approved: true, Answer: "12345"}, "at least 6 characters"},
		{"a short answer the operator marks secret", question, approval.Outcome{Approved: true, Answer: "12345", Secret: true}, "at least 6 characters"},
		{"a short answer, not secret", question, approval.Outcome{Approved: true, Answer: "12345"}, ""},
		{"a secret answer long enough", secret, approval.Outcome{Approved: true, Answer: "123456"}, ""},
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
				fits.Answer = "123456-fits"
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
