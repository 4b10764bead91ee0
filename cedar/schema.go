package cedar

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	cedargo "github.com/cedar-policy/cedar-go"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// SchemaExt is the extension of the one schema file a policy directory must
// hold (Cedar's human-readable schema format).
const SchemaExt = ".cedarschema"

// ShippedSchema names the schema browsergate ships in its policies/
// directory; error messages tell operators to copy it.
const ShippedSchema = "policies/browsergate.cedarschema"

// loadSchema parses and resolves a schema file and returns a strict
// validator for it.
func loadSchema(path string, src []byte) (*validate.Validator, error) {
	var s schema.Schema
	s.SetFilename(path)
	if err := s.UnmarshalCedar(src); err != nil {
		return nil, newSchemaError(path, src, err, true)
	}
	rs, err := s.Resolve()
	if err != nil {
		return nil, newSchemaError(path, src, err, false)
	}
	return validate.New(rs, validate.WithStrict()), nil
}

// schemaPosRE matches the "line:col: message" that follows the file name in
// cedar-go's schema parser errors.
var schemaPosRE = regexp.MustCompile(`^(\d+):(\d+): (?s)(.*)$`)

// quotedRE finds the names cedar-go's resolver quotes in its errors.
var quotedRE = regexp.MustCompile(`"([^"]+)"`)

func newSchemaError(path string, src []byte, err error, parsed bool) *SchemaError {
	msg := err.Error()
	if parsed {
		if m := schemaPosRE.FindStringSubmatch(strings.TrimPrefix(msg, path+":")); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			return &SchemaError{File: path, Line: line, Column: col, Msg: m[3]}
		}
		return &SchemaError{File: path, Msg: msg}
	}
	// The resolver gives no position: point at the first use of the name
	// it complains about (the last one it quotes: `entity "A" shape:
	// attribute "x": undefined type "Strin"`), when the file has it.
	se := &SchemaError{File: path, Msg: msg}
	if q := quotedRE.FindAllStringSubmatch(msg, -1); len(q) > 0 {
		name := q[len(q)-1][1]
		candidates := []string{name}
		if i := strings.LastIndex(name, "::"); i >= 0 {
			candidates = append(candidates, name[i+2:])
		}
		for _, c := range candidates {
			if off, ok := findToken(src, 0, len(src), c); ok {
				se.Line, se.Column = lineCol(src, off)
				break
			}
		}
	}
	return se
}

// validatePolicy type-checks one policy against the schema and returns one
// *ValidationError per problem the validator reports. span is the
// policy's text within src, used to point at the offending name.
func validatePolicy(v *validate.Validator, info PolicyInfo, p *cedargo.Policy, src []byte, start, end int) []error {
	err := v.Policy("", (*xast.Policy)(p.AST()))
	if err == nil {
		return nil
	}
	pos := p.Position()
	var ves []*ValidationError
	for _, e := range flatten(err) {
		ve := &ValidationError{File: info.File, Line: pos.Line, Column: pos.Column, PolicyID: info.ID, Msg: e.Error()}
		if off, ok := locateProblem(src, start, end, ve.Msg); ok {
			ve.Line, ve.Column = lineCol(src, off)
		}
		ves = append(ves, ve)
	}
	// In source order, as an editor lists problems.
	slices.SortStableFunc(ves, func(a, b *ValidationError) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	errs := make([]error, len(ves))
	for i, ve := range ves {
		errs[i] = ve
	}
	return errs
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// backquotedRE finds the names the validator quotes in its messages.
var backquotedRE = regexp.MustCompile("`([^`]+)`")

// locateProblem finds, within src[start:end], the text a validator message
// is about: the attribute of "attribute `x` ... not found" and "optional
// attribute `a.b`", or the type of "unrecognized entity type `T`" and the
// action of "unrecognized action `A`". It reports the first occurrence.
func locateProblem(src []byte, start, end int, msg string) (int, bool) {
	q := backquotedRE.FindStringSubmatch(msg)
	if q == nil {
		return 0, false
	}
	name := q[1]
	var needles []string
	switch {
	case strings.HasPrefix(msg, "attribute `"),
		strings.HasPrefix(msg, "unable to guarantee safety of access to optional attribute `"):
		// "args.url": prefer the whole path (resource.args.url), then the
		// last attribute alone, then `has x` and `["x"]`.
		last := name[strings.LastIndex(name, ".")+1:]
		if last != name {
			needles = append(needles, "."+name)
		}
		needles = append(needles, "."+last, "has "+last, `["`+last+`"]`)
	case strings.HasPrefix(msg, "unrecognized entity type `"),
		strings.HasPrefix(msg, "unrecognized action `"):
		needles = append(needles, name)
	default:
		return 0, false
	}
	for _, n := range needles {
		if off, ok := findToken(src, start, end, n); ok {
			if n[0] == '.' {
				off++ // point at the attribute name, not the dot
			}
			return off, true
		}
	}
	return 0, false
}

// findToken returns the offset of the first occurrence of needle in
// src[start:end] that begins in code (not in a comment or a string literal)
// and is not part of a longer name.
func findToken(src []byte, start, end int, needle string) (int, bool) {
	inString := false
	for i := start; i < end; i++ {
		c := src[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		case c == '/' && i+1 < end && src[i+1] == '/':
			for i < end && src[i] != '\n' {
				i++
			}
			continue
		}
		if bytes.HasPrefix(src[i:end], []byte(needle)) &&
			(i == 0 || !isNameByte(src[i-1]) || !isNameByte(needle[0])) &&
			endsName(src[i+len(needle):], needle) {
			return i, true
		}
		if c == '"' {
			inString = true
		}
	}
	return 0, false
}

// endsName reports whether a match of needle followed by rest ends where a
// name ends: the next byte cannot continue it, or it is the type of an
// entity reference (`Web::Foo::"id"`).
func endsName(rest []byte, needle string) bool {
	if len(rest) == 0 || !isNameByte(needle[len(needle)-1]) {
		return true
	}
	return !isNameByte(rest[0]) || bytes.HasPrefix(rest, []byte(`::"`))
}

// isNameByte reports whether b can continue a Cedar name (including the
// "::" of a path), so that "Foo" is not found inside "Web::FooBar".
func isNameByte(b byte) bool {
	return b == '_' || b == ':' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// lineCol converts a byte offset into a 1-based line and a 1-based column
// counted in characters, as cedar-go counts them.
func lineCol(src []byte, off int) (int, int) {
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(src[lineStart:off])
}

// ValidateRequest checks r against the engine's schema exactly as Decide
// would send it: the request (principal and resource types, action,
// context) and each entity Decide builds (the resource with all its
// attributes and their types, the url_domain entity and its parents). It
// returns nil when r conforms, else every problem found, each wrapping
// ErrRequestSchema. Decide itself does not call it (a request that lacks
// an attribute a policy reads is denied at evaluation anyway); it is for
// tests, of this package and of the packages that build requests, to prove
// their requests conform.
func (e *Engine) ValidateRequest(r *Request) error {
	if e == nil || e.validator == nil {
		return fmt.Errorf("%w: no schema loaded", ErrRequestSchema)
	}
	if r == nil {
		return fmt.Errorf("%w: no request", ErrRequestSchema)
	}
	req, entities, err := r.toCedar(r.when())
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRequestSchema, err)
	}
	var errs []error
	if err := e.validator.Request(req); err != nil {
		errs = append(errs, fmt.Errorf("%w: request: %v", ErrRequestSchema, err))
	}
	uids := make([]cedargo.EntityUID, 0, len(entities))
	for uid := range entities {
		uids = append(uids, uid)
	}
	slices.SortFunc(uids, func(a, b cedargo.EntityUID) int { return strings.Compare(a.String(), b.String()) })
	for _, uid := range uids {
		if err := e.validator.Entity(entities[uid]); err != nil {
			errs = append(errs, fmt.Errorf("%w: entity %s: %v", ErrRequestSchema, uid, err))
		}
	}
	return errors.Join(errs...)
}

// SchemaFile names the schema the engine's policies were validated
// against: its path, or "built-in schema (<name>)" when the directory had
// none and LoadOptions.DefaultSchema was used, so that `check` can say
// which one it was.
func (e *Engine) SchemaFile() string {
	if e == nil {
		return ""
	}
	return e.schemaFile
}

// BuiltinSchema reports whether the directory had no schema of its own and
// the engine uses LoadOptions.DefaultSchema.
func (e *Engine) BuiltinSchema() bool {
	return e != nil && e.builtinSchema
}
