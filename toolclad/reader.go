package toolclad

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// reader walks the decoded TOML document, collecting every problem with its
// position instead of stopping at the first.
type reader struct {
	file     string
	pos      *positions
	problems []Problem
}

func (r *reader) errorf(path keyPath, format string, args ...any) {
	line, col := r.pos.of(path)
	r.problems = append(r.problems, Problem{
		File: r.file, Line: line, Col: col, Key: path.String(), Message: fmt.Sprintf(format, args...),
	})
}

// table is one TOML table being read; keys read through it are marked used,
// and done reports the rest as unknown.
type table struct {
	r    *reader
	path keyPath
	m    map[string]any
	used map[string]bool
}

// table returns v as a table; a value that is not a table is reported and
// read as an empty one, so the walk goes on.
func (r *reader) table(path keyPath, v any) *table {
	t := &table{r: r, path: path, used: make(map[string]bool)}
	switch m := v.(type) {
	case nil:
	case map[string]any:
		t.m = m
	default:
		r.errorf(path, "wrong type: expected a table, got %s", tomlType(v))
	}
	return t
}

func (t *table) get(key string) (any, bool) {
	t.used[key] = true
	v, ok := t.m[key]
	return v, ok
}

func (t *table) has(key string) bool {
	_, ok := t.m[key]
	return ok
}

func (t *table) at(key string) keyPath { return t.path.child(key) }

func (t *table) wrongType(key, want string, v any) {
	t.r.errorf(t.at(key), "wrong type: expected %s, got %s", want, tomlType(v))
}

// str reads an optional string; it reports whether a valid value was found.
func (t *table) str(key string, dst *string) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	s, ok := v.(string)
	if !ok {
		t.wrongType(key, "a string", v)
		return false
	}
	*dst = s
	return true
}

func (t *table) boolean(key string, dst *bool) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		t.wrongType(key, "a boolean", v)
		return false
	}
	*dst = b
	return true
}

func (t *table) integer(key string, dst *int64) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	n, ok := v.(int64)
	if !ok {
		t.wrongType(key, "an integer", v)
		return false
	}
	*dst = n
	return true
}

func (t *table) strings(key string, dst *[]string) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	arr, ok := v.([]any)
	if !ok {
		t.wrongType(key, "an array of strings", v)
		return false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			t.r.errorf(t.at(key).index(i), "wrong type: expected a string, got %s", tomlType(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	if good {
		*dst = out
	}
	return good
}

// sub returns the sub-table key (empty when absent).
func (t *table) sub(key string) *table {
	v, _ := t.get(key)
	return t.r.table(t.at(key), v)
}

// oneOf reads an optional string that must be one of allowed.
func (t *table) oneOf(key string, dst *string, allowed ...string) bool {
	var s string
	if !t.str(key, &s) {
		return false
	}
	for _, a := range allowed {
		if s == a {
			*dst = s
			return true
		}
	}
	t.r.errorf(t.at(key), "%q is not one of %s", s, quoteList(allowed))
	return false
}

// seconds reads an optional positive number of seconds.
func (t *table) seconds(key string, dst *time.Duration) {
	var n int64
	if !t.integer(key, &n) {
		return
	}
	if n <= 0 || n > maxSeconds {
		t.r.errorf(t.at(key), "must be between 1 and %d seconds, got %d", maxSeconds, n)
		return
	}
	*dst = time.Duration(n) * time.Second
}

// duration reads an optional Go duration string ("1s", "250ms") of at
// least least; it reports whether a valid value was found.
func (t *table) duration(key string, dst *time.Duration, least time.Duration) bool {
	var s string
	if !t.str(key, &s) {
		return false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		t.r.errorf(t.at(key), "%q is not a duration (such as \"1s\" or \"250ms\")", s)
		return false
	case d < least:
		t.r.errorf(t.at(key), "%s is less than %s", d, least)
		return false
	case d > maxSeconds*time.Second:
		t.r.errorf(t.at(key), "%s is more than %d seconds", d, maxSeconds)
		return false
	}
	*dst = d
	return true
}

// maxSeconds (ten years) keeps durations far from overflow.
const maxSeconds = 10 * 365 * 24 * 3600

// done reports every key that was not read as unknown, in sorted order.
func (t *table) done() {
	t.doneWith(nil)
}

// doneWith is done with a specific message for some keys (keys ToolClad
// defines for other modes, for instance).
func (t *table) doneWith(messages map[string]string) {
	var unknown []string
	for k := range t.m {
		if !t.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	// The keys read here are the ones valid at this place: the nearest
	// to an unknown one is likely what was meant.
	var valid []string
	for k := range t.used {
		if _, other := messages[k]; !other && !slices.Contains(unknown, k) {
			valid = append(valid, k)
		}
	}
	for _, k := range unknown {
		msg := "unknown key" + didYouMean(k, valid)
		if m, ok := messages[k]; ok {
			msg = m
		}
		t.r.errorf(t.at(k), "%s", msg)
	}
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case nil:
		return "nothing"
	}
	return "date/time"
}

func quoteList(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s)
	}
	return out
}
