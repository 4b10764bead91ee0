package toolclad

import (
	"strings"

	"github.com/browsergate/browsergate/scope"
)

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

// decodeSecretAnswerDomains reads await_human's secret_answer_domains:
// domain globs, as in allowed_domains, each inside the scope (a secret
// answer bound to a site the session cannot reach could be typed nowhere,
// and the key would only look like a limit). An empty list is refused:
// leave the key out for the page's own host.
func decodeSecretAnswerDomains(t *table, c *Command, m *Manifest) {
	pats, ok := domainPatterns(t, "secret_answer_domains")
	if !ok {
		return
	}
	if len(pats) == 0 {
		t.r.errorf(t.at("secret_answer_domains"), "is empty: a secret answer could be typed nowhere; leave the key out to bind each secret answer to the host it was asked on")
		return
	}
	good := true
	for i, p := range pats {
		pat, err := scope.ParsePattern(p)
		if err != nil {
			good = false // domainPatterns said so
			continue
		}
		if why := patternOutside(m.Scope(), pat); why != "" {
			t.r.errorf(t.at("secret_answer_domains").index(i), "%q is outside [browser.scope], so no page of the session is on it: %s", p, why)
			good = false
		}
	}
	if good {
		c.SecretAnswerDomains = pats
	}
}

// patternOutside says why a host that pat matches is outside sc, or "":
// the pattern's own host when it names one, a host under it for a glob
// ("*.example.com": a.example.com). A host is inside when the scope lets
// it be reached on port 443 or 80 (the port is the scope's other rule).
func patternOutside(sc *scope.Scope, pat *scope.Pattern) string {
	if sc == nil {
		return "" // the scope has its own errors
	}
	host := pat.Canonical()
	if host == "*" {
		host = "a.invalid"
	}
	host = strings.ReplaceAll(host, "*", "a")
	v := sc.CheckHost(host, 443)
	if v.Allowed {
		return ""
	}
	if v80 := sc.CheckHost(host, 80); v80.Allowed {
		return ""
	}
	return v.Reason
}
