package operator

import "errors"

// ErrInUse means another live daemon already listens on the socket: two
// daemons cannot share one operator channel.
var ErrInUse = errors.New("approvals socket in use")

// ErrUnauthorized means the daemon refused the request: the token was
// missing or wrong, or the caller runs as another user.
var ErrUnauthorized = errors.New("not authorised on the approvals socket")

// ErrNotPending means the id names no call waiting for approval: it was
// already answered, it expired, or it was never held.
var ErrNotPending = errors.New("no such pending approval")

// ErrBadRequest means the daemon could not read the request body.
var ErrBadRequest = errors.New("bad approvals request")

// statusError is an error the daemon sent back: its message is the
// daemon's own words, and it matches the sentinel for its status.
type statusError struct {
	kind error
	msg  string
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.kind }
