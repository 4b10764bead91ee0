package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// DenyError is a gate refusal: which stage refused, the rule that decided
// and why. It is a value the caller inspects (errors.As), never a crash.
//
// Stage is one of (see evidence.Stage for each one's meaning):
//
//	manifest  the tool is not declared; a click would submit a form and submit_form is not declared
//	args      the arguments, or the element they name, do not fit the command
//	limits    the session expired or used up max_interactions
//	observe   the page state or the tab's history could not be read
//	scope     a URL the call is about, or the page a tab is on, is out of scope
//	secrets   a secret would be typed or sent outside its domains
//	cedar     the policies deny the call
//	approval  a human's approval was needed and not given
//	act       the browser could not be reached
//	destination the action's navigation or form submission went somewhere not judged; stopped at the request
//	final_url the action left a tab out of scope (or unreadable); it was reset
type DenyError struct {
	Stage     evidence.Stage
	Rule      string   // scope pattern, policy id or limit name
	Reason    string   // one human sentence
	PolicyIDs []string // Cedar policies that determined a cedar denial
}

func (e *DenyError) Error() string {
	return fmt.Sprintf("denied by %s (%s): %s", e.Stage, e.Rule, e.Reason)
}

// Deny builds a DenyError. The format is browsergate's sentence; each
// argument is marked as a page's value (pagetext.Args), which the masker
// may mask, and the sentence around it is never masked (package
// pagetext). An argument of browsergate's own (a command's name) is
// marked too: only what Deny is given as its format is certainly
// browsergate's.
func Deny(stage evidence.Stage, rule, format string, a ...any) *DenyError {
	return &DenyError{Stage: stage, Rule: rule, Reason: fmt.Sprintf(format, pagetext.Args(a)...)}
}

// ErrNoDialog is returned by handle_dialog when no dialog is waiting.
var ErrNoDialog = errors.New("no JavaScript dialog is waiting for an answer")

// BesideError refuses to type secret into a page that the pages named in
// beside could reach unguarded (pages of the field's browsing-context group
// or site that are not the session's, as the executor found them).
func BesideError(secret string, beside []string) error {
	return pagetext.Ownf("secret %s is typed only into a page whose browsing-context group and site are wholly the session's, and %s could reach this one unguarded; close it (a worker of the user's stops by itself about 30 seconds after its last page of the site closes, then try again), or use a manifest with context = \"isolated\"",
		secret, strings.Join(beside, " and "))
}
