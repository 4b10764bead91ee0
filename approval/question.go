package approval

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrBadAnswer means an answer does not fit what was asked: text for a
// call held for approval, no text for a question, or a secret answer too
// short to be masked. The request still waits for a fitting answer.
var ErrBadAnswer = errors.New("answer does not fit the request")

// MaxAnswer is the longest answer to a question, in characters.
const MaxAnswer = 4000

// MinSecretAnswer is the shortest answer kept secret: the masker hides a
// secret's runs of this many characters or more, and a shorter value
// could not be hidden where a page echoes it (as for the manifest's
// secrets).
const MinSecretAnswer = 6

// IsQuestion reports whether the request is the agent's question to the
// operator rather than a call held for approval.
func (r Request) IsQuestion() bool { return r.Question != "" }

// KeptSecret reports whether the answer o gives to r is kept from the
// agent: the question asked for a secret, or the operator marked it one.
func (r Request) KeptSecret(o Outcome) bool { return r.SecretAnswer || o.Secret }

// check says whether o is an answer r can take: a held call is approved
// or denied, never given text; a question is answered with text, or
// declined (Approved false, no text).
func (r Request) check(o Outcome) error {
	if !r.IsQuestion() {
		if o.Answer != "" || o.Secret {
			return fmt.Errorf("%w: %s is a call held for approval, not a question: approve or deny it", ErrBadAnswer, r.ID)
		}
		return nil
	}
	switch {
	case !o.Approved && (o.Answer != "" || o.Secret):
		return fmt.Errorf("%w: question %s is either answered with text or declined, not both", ErrBadAnswer, r.ID)
	case !o.Approved:
		return nil
	case o.Answer == "":
		return fmt.Errorf("%w: %s is a question: answer it with text (browsergate approvals answer %s), or decline it (deny)", ErrBadAnswer, r.ID, r.ID)
	case !utf8.ValidString(o.Answer):
		return fmt.Errorf("%w: the answer to %s is not valid UTF-8", ErrBadAnswer, r.ID)
	case utf8.RuneCountInString(o.Answer) > MaxAnswer:
		return fmt.Errorf("%w: the answer to %s is longer than %d characters", ErrBadAnswer, r.ID, MaxAnswer)
	case r.KeptSecret(o) && utf8.RuneCountInString(o.Answer) < MinSecretAnswer:
		return fmt.Errorf("%w: a secret answer must be at least %d characters, or it cannot be masked where a page shows it (%s)", ErrBadAnswer, MinSecretAnswer, r.ID)
	}
	return nil
}
