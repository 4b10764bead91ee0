package executor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// typedPasswordName is the name the evidence and the logs give the nth
// password the agent typed: [secret TYPED_PASSWORD_1].
func typedPasswordName(n int) string { return fmt.Sprintf("TYPED_PASSWORD_%d", n) }

// keepTypedPassword makes the masker of the session's record and logs,
// and the daemon's log, mask what the call types into a password field,
// before the call is recorded. A placeholder in the text is a declared
// secret's, masked already; of the rest, pieces shorter than a secret may
// be (toolclad.MinSecretLen) are left as they are: masking them would
// mangle ordinary text and hide little.
func (e *Executor) keepTypedPassword(s *session, t *turn) {
	if t.call == nil || !t.verdict.Masked {
		return
	}
	args := t.call.Args
	if t.call.ArgErr != nil || args == nil {
		args = t.call.RawArgs
	}
	texts := []string{}
	if text, ok := args["text"].(string); ok {
		texts = append(texts, text)
	}
	all := gate.FieldTexts(args)
	for _, i := range t.verdict.MaskedFields {
		if i < len(all) {
			texts = append(texts, all[i])
		}
	}
	var pieces []string
	for _, text := range texts {
		var placeholders []string
		for _, sec := range s.secrets.Load().Placeholders(text) {
			placeholders = append(placeholders, sec.Placeholder())
		}
		pieces = append(pieces, typedPieces(text, placeholders)...)
	}
	s.answers.mu.Lock()
	defer s.answers.mu.Unlock()
	var kept []*toolclad.Secret
	for _, p := range pieces {
		if slices.ContainsFunc(s.passwords.list, func(sec *toolclad.Secret) bool { return sec.Value() == p }) {
			continue
		}
		sec := toolclad.AnsweredSecret(typedPasswordName(len(s.passwords.list)+1), p, nil)
		s.passwords.list = append(s.passwords.list, sec)
		kept = append(kept, sec)
	}
	if len(kept) == 0 {
		return
	}
	s.masker.Store(mask.New(append(s.secrets.Load().All(), s.passwords.list...)))
	for _, sec := range kept {
		s.backend.keepAnswer(s.manifest, sec) // the backend's log lines
	}
	e.mu.Lock()
	e.secretAnswers = append(e.secretAnswers, kept...) // the daemon's
	e.allSecrets.Store(mask.New(append(secretsOf(e.cfg.Manifests), e.secretAnswers...)))
	e.mu.Unlock()
}

// typedPieces are the literal pieces of text typed into a password field
// that the record and the logs mask: text split at the declared secrets'
// placeholders in it (whose values are masked already), without the
// pieces shorter than a secret may be.
func typedPieces(text string, placeholders []string) []string {
	pieces := []string{text}
	for _, ph := range placeholders {
		var split []string
		for _, p := range pieces {
			split = append(split, strings.Split(p, ph)...)
		}
		pieces = split
	}
	return slices.DeleteFunc(pieces, func(p string) bool { return len([]rune(p)) < toolclad.MinSecretLen })
}
