package daemon

import (
	"strings"

	"github.com/browsergate/browsergate/toolclad"
)

// signInToken reads what an operator pasted into the sign-in form: their
// token, or their whole line of the operator token file ("NAME:TOKEN"),
// which is what a newcomer copies from the file. It returns the operator
// the token belongs to and the token itself ("" and "": not a token).
//
// The pasted text is first looked up whole, since a token may itself hold
// a colon. Only if it is no token is it read as a line: the part after the
// first colon must be a token and the part before it that token's
// operator's name, so a line naming another operator is refused rather
// than signing in whoever the token belongs to.
func signInToken(ops *toolclad.Operators, pasted string) (operator, token string) {
	pasted = strings.TrimSpace(pasted)
	if name := ops.Lookup(pasted); name != "" {
		return name, pasted
	}
	prefix, rest, ok := strings.Cut(pasted, ":")
	if !ok {
		return "", ""
	}
	rest = strings.TrimSpace(rest)
	if name := ops.Lookup(rest); name != "" && name == strings.TrimSpace(prefix) {
		return name, rest
	}
	return "", ""
}
