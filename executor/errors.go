package executor

import (
	"errors"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
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

// ErrNoPDF is returned by save_pdf on a browser that cannot print a page
// to PDF (Page.printToPDF is not implemented there).
var ErrNoPDF = errors.New("save_pdf is not available on this browser")

// ErrLiveEndpoint is returned when a live endpoint cannot be resolved to a
// DevTools WebSocket URL.
var ErrLiveEndpoint = errors.New("live endpoint")

// ErrSessionNotOpen is returned by EndByOperator for a session that is
// not open (it ended, or never was).
var ErrSessionNotOpen = errors.New("no open session with that id")

// ErrEndNotRecorded is returned by EndByOperator when the session has
// ended but the evidence log did not take the record of its end: the
// operator is told it ended, and that its record is missing.
var ErrEndNotRecorded = errors.New("the session has ended, but its end could not be recorded in the evidence log")

// DenyError is a gate refusal: which stage refused, the rule that decided
// and why (gate.DenyError, where the stages are listed). It is a value the
// caller inspects (errors.As), never a crash.
type DenyError = gate.DenyError

// deny builds a refusal (gate.Deny), as the executor's own stages refuse:
// the format is browsergate's sentence, each argument marked as a page's
// value, which the masker may mask.
func deny(stage evidence.Stage, rule, format string, a ...any) *DenyError {
	return gate.Deny(stage, rule, format, a...)
}
