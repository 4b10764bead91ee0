package executor

import (
	"errors"
	"fmt"
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

// ErrLiveEndpoint is returned when a live endpoint cannot be resolved to a
// DevTools WebSocket URL.
var ErrLiveEndpoint = errors.New("live endpoint")

// DenyError is a gate refusal: which stage refused, the rule that decided
// and why. It is a value the caller inspects (errors.As), never a crash.
type DenyError struct {
	Stage     string   // "args", "limits", "scope", "cedar", "approval", "act"
	Rule      string   // scope pattern, policy id or limit name
	Reason    string   // one human sentence
	PolicyIDs []string // Cedar policies that determined a cedar denial
}

func (e *DenyError) Error() string {
	return fmt.Sprintf("denied by %s (%s): %s", e.Stage, e.Rule, e.Reason)
}
