package cedar

import (
	"errors"
	"fmt"
)

// ErrNoPolicies is returned by LoadDir when the directory holds no policy at
// all. Cedar denies by default, so an empty set would refuse every command:
// that is surely a misconfiguration, not an intent, and is refused at load.
var ErrNoPolicies = errors.New("cedar: no policies found")

// ErrDuplicateID is returned (wrapped) when two policies share an id, from
// two @id annotations or an @id colliding with a "file.cedar:line" name.
// Ids name policies in decisions and evidence, so they must be unique.
var ErrDuplicateID = errors.New("duplicate policy id")

// ErrParse is matched by every *ParseError, so callers can tell a bad policy
// file from an unreadable directory with errors.Is.
var ErrParse = errors.New("cedar: policy parse error")

// ErrInvalidRequest marks a Request that cannot be turned into a Cedar
// request (an args value nested too deeply, a counter shadowing a built-in
// attribute). Decide denies such requests and reports this error's text.
var ErrInvalidRequest = errors.New("cedar: invalid request")

// ParseError reports a policy file that cedar-go could not parse or
// compile, at the position cedar-go reported, so an operator (and
// `browsergate check`) can point at the exact line.
type ParseError struct {
	File   string // path as given to LoadDir, joined with the file name
	Line   int    // 1-based; 0 when cedar-go gave no position
	Column int    // 1-based; 0 when unknown
	Msg    string // cedar-go's description of the problem
}

// Error formats the error as file:line:col: problem, the form editors and
// CI annotations understand.
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Unwrap lets errors.Is(err, ErrParse) match any parse error.
func (e *ParseError) Unwrap() error { return ErrParse }
