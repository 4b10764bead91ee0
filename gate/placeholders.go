package gate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// placeholderToken is a token shaped like a secret placeholder: "<" and
// a name of the secrets' syntax (toolclad: an upper-case letter, then
// upper-case letters, digits and underscores) and ">".
var placeholderToken = regexp.MustCompile(`<([A-Z][A-Z0-9_]{0,63})>`)

// answerToken is the name of a secret answer (executor: ANSWER_n).
var answerToken = regexp.MustCompile(`^ANSWER_[0-9]+$`)

// placeholdersApply says whether a text typed in the session is held to
// its placeholders: when the manifest declares a secret, or await_human
// (whose answers may be secrets), or the session has a secret already.
// Elsewhere a "<B>" typed into a code editor is only text.
func placeholdersApply(m *toolclad.Manifest, ss *Secrets) bool {
	return len(m.Secrets) > 0 || m.Command("await_human") != nil || len(ss.All()) > 0
}

// unknownPlaceholder refuses a text that holds a placeholder-shaped token
// naming no secret of the session: typed as it is, a mistyped "<SITE_PWD>"
// would put its own letters into a password field, and a sign-in would
// fail, or worse, the agent would try again with the letters it sees.
func (ss *Secrets) unknownPlaceholder(text string) error {
	var names []string
	for _, sec := range ss.All() {
		names = append(names, sec.Name)
	}
	for _, m := range placeholderToken.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if ss.named(name) {
			continue
		}
		have := "the session has no secrets"
		if len(names) > 0 {
			have = "the session's secrets are " + strings.Join(names, ", ")
		}
		if answerToken.MatchString(name) {
			return pagetext.Ownf("no secret answer %s yet: it is given by the operator's secret answer to await_human (%s)", name, have)
		}
		hint := ""
		if near := toolclad.NearestName(name, names); near != "" {
			hint = fmt.Sprintf("; did you mean <%s>?", near)
		}
		return pagetext.Ownf("unknown secret <%s>%s (%s; a text that holds <NAME> in capitals is taken as a secret placeholder)", name, hint, have)
	}
	return nil
}

// named reports whether the session has a secret called name.
func (ss *Secrets) named(name string) bool {
	for _, sec := range ss.All() {
		if sec.Name == name {
			return true
		}
	}
	return false
}

// placeholderArgs is the argument stage's check of type_text's text: every
// placeholder-shaped token must name a secret of the session.
func placeholderArgs(q *Question) *DenyError {
	call := q.Call
	if call.Command == nil || call.Command.Name != "type_text" || !placeholdersApply(call.Manifest, q.Secrets) {
		return nil
	}
	text, _ := call.Args["text"].(string)
	if err := q.Secrets.unknownPlaceholder(text); err != nil {
		return Deny(evidence.StageArgs, "unknown secret", "argument \"text\": %v", err)
	}
	return nil
}
