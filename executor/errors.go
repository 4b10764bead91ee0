package executor

import (
	"errors"
	"fmt"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/evidence"
)

// ErrNoSuchRef is returned when a ref is not in the session's latest
// snapshot: refs are only valid until the next snapshot or navigation.
var ErrNoSuchRef = errors.New("unknown element ref")

// ErrNoElement is returned when a CSS selector matches nothing.
var ErrNoElement = errors.New("no element matches")

// ErrBrowserStart is returned when the browser cannot be launched or
// attached to within startup_timeout_seconds.
var ErrBrowserStart = errors.New("browser unavailable")

// ErrNoHistory is returned by go_back on a tab with no previous page.
var ErrNoHistory = errors.New("no previous page in this tab")

// ErrNoForward is returned by go_forward on a tab with no next page.
var ErrNoForward = errors.New("no next page in this tab: go_forward follows a go_back")

// ErrLiveEndpoint is returned when a live endpoint cannot be resolved to a
// DevTools WebSocket URL.
var ErrLiveEndpoint = errors.New("live endpoint")

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

// deny builds a DenyError. The format is browsergate's sentence; each
// argument is marked as a page's value (pageArg), which the masker may
// mask, and the sentence around it is never masked (package pagetext). An
// argument of browsergate's own (a command's name) is marked too: only
// what deny is given as its format is certainly browsergate's.
func deny(stage evidence.Stage, rule, format string, a ...any) *DenyError {
	return &DenyError{Stage: stage, Rule: rule, Reason: fmt.Sprintf(format, pagetext.Args(a)...)}
}
