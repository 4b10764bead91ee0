package fleet

import "errors"

// ErrStore wraps every failure to read or write the fleet's tables: the
// caller refuses what it asked about (a session, a request), since the
// fleet's count is unknown.
var ErrStore = errors.New("the fleet's store did not answer")

// ErrTooLate is returned (wrapped, with the wait) by Schedule.Take when
// the host's next turn comes later than the request may wait: the turn is
// not taken.
var ErrTooLate = errors.New("its turn on the fleet's schedule comes after the request's deadline")
