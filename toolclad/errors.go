package toolclad

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidManifest is matched (errors.Is) by every *LoadError, so a caller
// can tell "the manifest is wrong" from "the file could not be read".
var ErrInvalidManifest = errors.New("invalid manifest")

// ErrDuplicateTool is returned when two manifests, or two commands of
// Register's input, would publish the same MCP tool name: one would silently
// shadow the other.
var ErrDuplicateTool = errors.New("duplicate tool name")

// ErrBadSeparator is returned by Register for a separator other than "." or
// "_": any other would produce names some MCP clients refuse.
var ErrBadSeparator = errors.New("tool name separator must be \".\" or \"_\"")

// ErrNoRunner is returned by Register when the Runner is nil: a tool without
// a runner could only fail, and would record no evidence.
var ErrNoRunner = errors.New("nil runner")

// Problem is one thing wrong in a manifest, at a position in its file.
type Problem struct {
	File string
	// Line and Col are 1-based; both are 1 when the problem has no better place
	// (a missing table).
	Line, Col int
	// Key is the dotted key path (empty for TOML syntax errors).
	Key     string
	Message string
	// Warning marks a manifest that loads but has a dead end (see
	// Manifest.Warnings): something declared that can never work.
	Warning bool
}

// String renders the problem as "file:line:col: key: message", the form
// editors and CI logs link to; a warning as "file:line:col: warning: key:
// message".
func (p Problem) String() string {
	msg := p.Message
	if p.Key != "" {
		msg = p.Key + ": " + msg
	}
	if p.Warning {
		msg = "warning: " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, msg)
}

// LoadError lists every problem found in one or more manifests, so that an
// operator fixes them all in one pass instead of one per run.
type LoadError struct {
	Problems []Problem
}

// Error renders one problem per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrInvalidManifest) true.
func (e *LoadError) Is(target error) bool { return target == ErrInvalidManifest }

// ArgError is one refused argument of a call. The runner turns it into the
// refusal the agent reads, so it names the argument and the rule.
type ArgError struct {
	// Command is the command name.
	Command string
	// Arg is the argument name; for a one_of problem, the names joined by "|";
	// empty when the arguments as a whole are wrong (not a JSON object).
	Arg string
	// Rule is one of unknown, required, type, pattern, max_len, url, schemes,
	// enum, min, max, one_of, sanitize.
	Rule    string
	Message string
}

// Error renders `argument "url": scheme "ftp" is not allowed (allowed: https)`.
func (e *ArgError) Error() string {
	if e.Arg == "" {
		return "arguments: " + e.Message
	}
	return fmt.Sprintf("argument %q: %s", e.Arg, e.Message)
}

// ArgErrors returns every *ArgError inside err (a single one, or several
// joined with errors.Join), in order.
func ArgErrors(err error) []*ArgError {
	var out []*ArgError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if ae, ok := err.(*ArgError); ok {
			out = append(out, ae)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	return out
}

// RefusalText renders an argument error as the text an agent reads, one
// argument per line after a heading naming the command, e.g.
//
//	invalid arguments for navigate:
//	argument "url": scheme "ftp" is not allowed (allowed: https)
func RefusalText(err error) string {
	if err == nil {
		return ""
	}
	aes := ArgErrors(err)
	if len(aes) == 0 {
		return "invalid arguments: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s:", aes[0].Command)
	for _, ae := range aes {
		b.WriteString("\n")
		b.WriteString(ae.Error())
	}
	return b.String()
}
