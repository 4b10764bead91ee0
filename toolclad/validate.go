package toolclad

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate checks the arguments of one call against the command's effective
// signature. raw is the JSON-decoded arguments object; numbers may be
// float64 or json.Number. It returns the canonical values (string, int64,
// bool) with defaults applied and integers clamped where the argument says
// so, or an error made of *ArgError values (errors.Join when several), every
// problem reported. It never panics, whatever raw holds.
func (c *Command) Validate(raw map[string]any) (map[string]any, error) {
	var errs []error
	fail := func(arg, rule, format string, a ...any) {
		errs = append(errs, &ArgError{Command: c.Name, Arg: arg, Rule: rule, Message: fmt.Sprintf(format, a...)})
	}

	unknown := make([]string, 0)
	for k := range raw {
		if c.Arg(k) == nil {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if c.builtin != nil && c.builtin.notHere[k] != "" {
			fail(k, "unknown", "%s does not take %s: %s", c.Name, k, c.builtin.notHere[k])
			continue
		}
		if len(c.Args) == 0 {
			fail(k, "unknown", "unknown argument (%s takes no arguments)", c.Name)
		} else {
			fail(k, "unknown", "unknown argument (%s accepts: %s)", c.Name, strings.Join(c.argNames(), ", "))
		}
	}

	out := make(map[string]any, len(c.Args))
	given := make(map[string]bool, len(c.Args))
	for _, a := range c.Args {
		v, ok := raw[a.Name]
		if !ok || v == nil {
			if a.Required {
				fail(a.Name, "required", "is required")
			} else if a.Default != nil {
				out[a.Name] = a.Default
			}
			continue
		}
		given[a.Name] = true
		cv, err := a.check(v)
		if err != nil {
			err.Command = c.Name
			errs = append(errs, err)
			continue
		}
		out[a.Name] = cv
	}

	for _, g := range c.groups {
		n := 0
		for _, name := range g.names {
			if given[name] {
				n++
			}
		}
		switch {
		case g.exactlyOne && n != 1:
			fail(strings.Join(g.names, "|"), "one_of", "exactly one of %s must be given (got %d)", strings.Join(g.names, ", "), n)
		case !g.exactlyOne && n > 1:
			fail(strings.Join(g.names, "|"), "one_of", "at most one of %s may be given", strings.Join(g.names, ", "))
		}
	}

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func (c *Command) argNames() []string {
	names := make([]string, len(c.Args))
	for i, a := range c.Args {
		names[i] = a.Name
	}
	return names
}

// check validates one present, non-null value and returns its canonical
// form. The returned error has no Command set.
func (a *Arg) check(v any) (any, *ArgError) {
	fail := func(rule, format string, args ...any) (any, *ArgError) {
		return nil, &ArgError{Arg: a.Name, Rule: rule, Message: fmt.Sprintf(format, args...)}
	}
	switch a.Type {
	case TypeList:
		return a.checkList(v)
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return fail("type", "must be a boolean, got %s", jsonType(v))
		}
		return b, nil
	case TypeInteger:
		n, ok := toInt64(v)
		if !ok {
			return fail("type", "must be an integer, got %s", jsonType(v))
		}
		if a.Min != nil && n < *a.Min {
			if !a.Clamp {
				return fail("min", "value %d is below the minimum %d", n, *a.Min)
			}
			n = *a.Min
		}
		if a.Max != nil && n > *a.Max {
			if !a.Clamp {
				return fail("max", "value %d is above the maximum %d", n, *a.Max)
			}
			n = *a.Max
		}
		return n, nil
	}

	s, ok := v.(string)
	if !ok {
		return fail("type", "must be a string, got %s", jsonType(v))
	}
	if a.MaxLen > 0 {
		if n := utf8.RuneCountInString(s); n > a.MaxLen {
			return fail("max_len", "is %d characters long (max %d)", n, a.MaxLen)
		}
	}
	if slices.Contains(a.Sanitize, SanitizeInjection) {
		if msg := injection(s, a.Type == TypeURL); msg != "" {
			return fail("sanitize", "%s (sanitize: injection)", msg)
		}
	}
	switch a.Type {
	case TypeEnum:
		if !slices.Contains(a.Allowed, s) {
			return fail("enum", "value %s is not one of: %s", quoteShort(s), strings.Join(a.Allowed, ", "))
		}
	case TypeURL:
		if r, bad := firstControl(s); bad {
			return fail("url", "contains a control character (%U)", r)
		}
		u, err := url.Parse(s)
		if err != nil {
			return fail("url", "does not parse as a URL")
		}
		if u.Scheme == "" {
			return fail("url", "is not an absolute URL (no scheme)")
		}
		if len(a.Schemes) > 0 && !slices.Contains(a.Schemes, strings.ToLower(u.Scheme)) {
			return fail("schemes", "scheme %s is not allowed (allowed: %s)", quoteShort(u.Scheme), strings.Join(a.Schemes, ", "))
		}
		if u.Host == "" {
			return fail("url", "has no host")
		}
	case TypeRef:
		if !refPattern.MatchString(s) {
			return fail("pattern", "is not an element ref from a snapshot (like e12)")
		}
	case TypeSelector:
		if s == "" {
			return fail("required", "must not be empty")
		}
		if r, bad := firstControl(s); bad {
			return fail("pattern", "contains a control character (%U)", r)
		}
	case TypeString:
		if s == "" && a.Required {
			return fail("required", "must not be empty")
		}
	}
	if a.shape != nil && !a.shape.MatchString(s) {
		return fail("pattern", "does not match the built-in pattern %s", a.shape.String())
	}
	if a.Pattern != nil && !a.Pattern.MatchString(s) {
		return fail("pattern", "does not match the pattern %s", a.Pattern.String())
	}
	return s, nil
}

// SanitizeInjection is the one sanitizer a manifest can ask for.
const SanitizeInjection = "injection"

// injection reports why s fails the injection sanitizer, or "". It refuses
// what can split or smuggle input (NUL and the other C0 controls except
// TAB, LF, CR; DEL) and, for URLs, the schemes that run code or inline
// content. It leaves quotes, brackets and punctuation alone: they are
// ordinary in selectors, query strings and text, and nothing here reaches a
// shell.
func injection(s string, isURL bool) string {
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return fmt.Sprintf("contains a control character (%U)", r)
		}
	}
	if isURL {
		// Read the scheme as a browser does (WHATWG URL: strip leading C0 and
		// space, drop TAB/LF/CR anywhere, fold case), so "  Java\tScript:" is
		// caught too.
		t := strings.TrimLeft(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
		t = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(t)
		t = strings.ToLower(t)
		for _, scheme := range []string{"javascript:", "vbscript:", "data:"} {
			if strings.HasPrefix(t, scheme) {
				return fmt.Sprintf("uses the %q scheme", scheme)
			}
		}
	}
	return ""
}

// firstControl returns the first C0 control character or DEL in s.
func firstControl(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return r, true
		}
	}
	return 0, false
}

// toInt64 accepts the integer forms a JSON decoder or a Go caller produces:
// json.Number, float64 with no fraction, and Go integer types.
func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return floatToInt64(n)
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return 0, false
		}
		return floatToInt64(f)
	}
	return 0, false
}

func floatToInt64(f float64) (int64, bool) {
	// 2^63 is exactly representable; anything at or above it overflows.
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// jsonType names v's JSON type for error messages.
func jsonType(v any) string {
	switch n := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64, float32, json.Number:
		if _, ok := toInt64(n); ok {
			return "integer"
		}
		return "number"
	case int, int32, int64:
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// quoteShort quotes s for an error message, cut to 64 characters so that a
// huge or secret value is not echoed whole.
func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 64 {
		r := []rune(s)
		return strconv.Quote(string(r[:64])) + "..."
	}
	return strconv.Quote(s)
}

// Clamped returns the integer arguments of raw that Validate brought to a
// bound, each with the value the call asked for, so that a reply can say
// that it gives less (or more) than was asked. Values Validate refuses are
// not in it.
func (c *Command) Clamped(raw map[string]any) map[string]int64 {
	var out map[string]int64
	for _, a := range c.Args {
		if a.Type != TypeInteger || !a.Clamp {
			continue
		}
		n, ok := toInt64(raw[a.Name])
		if !ok || (a.Min == nil || n >= *a.Min) && (a.Max == nil || n <= *a.Max) {
			continue
		}
		if out == nil {
			out = make(map[string]int64)
		}
		out[a.Name] = n
	}
	return out
}
