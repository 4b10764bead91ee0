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

// ErrNoSchema is returned by LoadDir when the directory holds no
// *.cedarschema file. Policies are checked against the schema at load, so
// that a misspelt attribute or a type error stops the daemon at start
// instead of denying every matching call at run time; without a schema
// that check cannot run, and the directory is refused.
var ErrNoSchema = errors.New("cedar: no schema")

// ErrSchema is matched by every *SchemaError, and by the error for a
// directory holding more than one *.cedarschema file.
var ErrSchema = errors.New("cedar: invalid schema")

// ErrSchemaMismatch is returned (wrapped) by LoadDirWith when the schema in
// use does not accept a request the caller said it sends (see
// LoadOptions.Shapes): policies checked against it would be checked
// against requests that never occur.
var ErrSchemaMismatch = errors.New("cedar: schema does not match the daemon's requests")

// ErrValidation is matched by every *ValidationError: a policy that parses
// but does not type-check against the schema.
var ErrValidation = errors.New("cedar: policy does not match the schema")

// ErrRequestSchema is returned (wrapped) by Engine.ValidateRequest when the
// request or the entities Decide would build from it do not conform to the
// schema.
var ErrRequestSchema = errors.New("cedar: request does not match the schema")

// ErrPolicyTests is matched by the errors of Engine.RunTests about a
// policy-tests file that cannot be read: bad JSON, an unknown key, a value
// of the wrong type, a duplicate case name.
var ErrPolicyTests = errors.New("cedar: invalid policy tests")

// ErrRequestJSON is matched by the errors of ParseRequestJSON: JSON that is
// not an object, an unknown key, a value of the wrong type.
var ErrRequestJSON = errors.New("cedar: invalid request JSON")

// SchemaError reports a schema file that cedar-go could not parse or
// resolve. Line and Column come from the parser; for a resolution error
// (an undefined type) they point at the first use of the name when it can
// be found in the file, and are 0 otherwise.
type SchemaError struct {
	File   string // path of the *.cedarschema file
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Msg    string // cedar-go's description of the problem
}

// Error formats the error as file:line:col: schema: problem.
func (e *SchemaError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: schema: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: schema: %s", e.File, e.Line, e.Column, e.Msg)
}

// Unwrap lets errors.Is(err, ErrSchema) match any schema error.
func (e *SchemaError) Unwrap() error { return ErrSchema }

// ValidationError reports one type error the schema validator found in a
// policy. cedar-go's validator gives no position inside the policy, so Line
// and Column point at the offending name (the misspelt attribute, the
// unknown entity type) when it occurs once in the policy's text, and at the
// start of the policy otherwise.
type ValidationError struct {
	File     string // path of the *.cedar file
	Line     int    // 1-based
	Column   int    // 1-based
	PolicyID string // the policy's id (see PolicyInfo.ID)
	Msg      string // the validator's message
}

// Error formats the error as file:line:col: policy "id": problem.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s:%d:%d: policy %q: %s", e.File, e.Line, e.Column, e.PolicyID, e.Msg)
}

// Unwrap lets errors.Is(err, ErrValidation) match any validation error.
func (e *ValidationError) Unwrap() error { return ErrValidation }
