package toolclad

// AnsweredSecret is a secret whose value a human gave while a session ran
// (the operator's secret answer to await_human), not read from the
// manifest: the agent types it as <name> like a manifest's secret, into any
// text field (a one-time code's field is seldom a password field) of a
// page on domains. value must be MinSecretLen characters or more.
func AnsweredSecret(name, value string, domains []string) *Secret {
	return &Secret{Name: name, Domains: domains, Fields: SecretFieldsText, value: value, answered: true}
}

// Answered reports whether the secret is an operator's answer
// (AnsweredSecret): a value that may be short and guessable, a one-time
// code, which the masker never leaves in clear for the agent's own text.
func (s *Secret) Answered() bool { return s.answered }

// MinSecretLen is the shortest secret value browsergate masks (shorter
// ones would mangle ordinary output and hide nothing worth hiding).
const MinSecretLen = minSecretLen
