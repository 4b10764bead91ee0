package approval

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
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

// fit says whether o is an answer r can take, and returns it as it is
// kept: a held call is approved or denied, never answered (not even with
// no text); a question is answered with text (Answering), or declined
// (Approved false, no text), never approved bare. An answer's surrounding
// white space is dropped; what is left must be one line of text with no
// control character (a plain answer goes to the agent as one line; a
// secret one is typed into a field and masked, as a manifest secret is
// read), and a secret one must be long enough to mask.
func (r Request) fit(o Outcome) (Outcome, error) {
	answering := o.Answering || o.Answer != "" || o.Secret
	if !r.IsQuestion() {
		if answering {
			return o, fmt.Errorf("%w: %s is a call held for approval, not a question: approve or deny it, an answer (even an empty one) does not approve it", ErrBadAnswer, r.ID)
		}
		return o, nil
	}
	switch {
	case !o.Approved && answering:
		return o, fmt.Errorf("%w: question %s is either answered with text or declined, not both", ErrBadAnswer, r.ID)
	case !o.Approved:
		return o, nil
	case !o.Answering:
		return o, fmt.Errorf("%w: %s is a question: answer it with text (browsergate approvals answer %s), or decline it (deny); a question is not approved", ErrBadAnswer, r.ID, r.ID)
	case !utf8.ValidString(o.Answer):
		return o, fmt.Errorf("%w: the answer to %s is not valid UTF-8", ErrBadAnswer, r.ID)
	}
	o.Answer = strings.TrimSpace(o.Answer)
	if i := strings.IndexFunc(o.Answer, unicode.IsControl); i >= 0 {
		c, _ := utf8.DecodeRuneInString(o.Answer[i:])
		return o, fmt.Errorf("%w: the answer to %s holds a control character (%U, at character %d): an answer is one line of text, with no tab, newline or NUL", ErrBadAnswer, r.ID, c, utf8.RuneCountInString(o.Answer[:i])+1)
	}
	n := utf8.RuneCountInString(o.Answer)
	switch {
	case n == 0:
		return o, fmt.Errorf("%w: the answer to question %s is empty: answer it with text (browsergate approvals answer %s), or decline it (deny)", ErrBadAnswer, r.ID, r.ID)
	case n > MaxAnswer:
		return o, fmt.Errorf("%w: the answer to %s is longer than %d characters", ErrBadAnswer, r.ID, MaxAnswer)
	case r.KeptSecret(o) && r.NoSecret != "":
		return o, fmt.Errorf("%w: question %s cannot take a secret answer: %s; answer it without --secret, or decline it", ErrBadAnswer, r.ID, r.NoSecret)
	case r.KeptSecret(o) && utf8.RuneCountInString(strings.Join(strings.Fields(o.Answer), "")) < MinSecretAnswer:
		return o, fmt.Errorf("%w: a secret answer must be at least %d characters besides white space, or it cannot be masked where a page shows it (%s)", ErrBadAnswer, MinSecretAnswer, r.ID)
	}
	return o, nil
}
