package toolclad

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Lists (TypeList): an argument that holds several values, each checked
// as an argument is (upload_file's files), or several records, each member
// checked as an argument and the records' one-of groups held
// (fill_form's fields). A list holds 1 to MaxItems elements, so that one
// call's work stays bounded.

// checkList validates a list and returns its canonical form: []any of
// the elements' canonical values (records as map[string]any). The first
// problem is reported, named by its place (fields[2].ref).
func (a *Arg) checkList(v any) (any, *ArgError) {
	fail := func(arg, rule, format string, args ...any) (any, *ArgError) {
		return nil, &ArgError{Arg: arg, Rule: rule, Message: fmt.Sprintf(format, args...)}
	}
	items, ok := v.([]any)
	if !ok {
		return fail(a.Name, "type", "must be a list (a JSON array), got %s", jsonType(v))
	}
	if len(items) == 0 {
		return fail(a.Name, "min_items", "must hold at least one element")
	}
	if a.MaxItems > 0 && len(items) > a.MaxItems {
		return fail(a.Name, "max_items", "holds %d elements (max %d)", len(items), a.MaxItems)
	}
	out := make([]any, len(items))
	for i, item := range items {
		name := fmt.Sprintf("%s[%d]", a.Name, i)
		if a.Items != nil {
			e := *a.Items
			e.Name = name
			if item == nil {
				return fail(name, "type", "must be a %s, got null", e.Type)
			}
			cv, err := e.check(item)
			if err != nil {
				return nil, err
			}
			out[i] = cv
			continue
		}
		rec, ok := item.(map[string]any)
		if !ok {
			return fail(name, "type", "must be an object with %s, got %s", strings.Join(a.fieldNames(), ", "), jsonType(item))
		}
		cv, err := a.checkRecord(name, rec)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	return out, nil
}

// checkRecord validates one record of a list of records.
func (a *Arg) checkRecord(name string, rec map[string]any) (map[string]any, *ArgError) {
	fail := func(arg, rule, format string, args ...any) (map[string]any, *ArgError) {
		return nil, &ArgError{Arg: arg, Rule: rule, Message: fmt.Sprintf(format, args...)}
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(a.fieldNames(), k) {
			return fail(name+"."+k, "unknown", "unknown member (accepts: %s)", strings.Join(a.fieldNames(), ", "))
		}
	}
	out := make(map[string]any, len(rec))
	for _, f := range a.Fields {
		v, ok := rec[f.Name]
		if !ok || v == nil {
			if f.Required {
				return fail(name+"."+f.Name, "required", "is required")
			}
			continue
		}
		e := f
		e.Name = name + "." + f.Name
		cv, err := e.check(v)
		if err != nil {
			return nil, err
		}
		out[f.Name] = cv
	}
	for _, g := range a.FieldGroups {
		n := 0
		for _, m := range g.names {
			if _, ok := out[m]; ok {
				n++
			}
		}
		switch {
		case g.exactlyOne && n != 1:
			return fail(name, "one_of", "exactly one of %s must be given (got %d)", strings.Join(g.names, ", "), n)
		case !g.exactlyOne && n > 1:
			return fail(name, "one_of", "at most one of %s may be given", strings.Join(g.names, ", "))
		}
	}
	return out, nil
}

func (a *Arg) fieldNames() []string {
	names := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		names[i] = f.Name
	}
	return names
}

// listSchema is the JSON Schema of a list argument's value.
func (a *Arg) listSchema(p map[string]any) {
	p["type"] = "array"
	p["minItems"] = 1
	if a.MaxItems > 0 {
		p["maxItems"] = a.MaxItems
	}
	if a.Items != nil {
		items := a.Items.schema(&Command{})
		delete(items, "description")
		p["items"] = items
		return
	}
	props := make(map[string]any, len(a.Fields))
	var required []any
	// A group the list's description states ("exactly one of text,
	// value, checked") is not repeated in each member's description.
	rec := &Command{}
	for _, g := range a.FieldGroups {
		if !strings.Contains(a.Description, strings.Join(g.names, ", ")) {
			rec.groups = append(rec.groups, g)
		}
	}
	for i := range a.Fields {
		props[a.Fields[i].Name] = a.Fields[i].schema(rec)
		if a.Fields[i].Required {
			required = append(required, a.Fields[i].Name)
		}
	}
	items := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		items["required"] = required
	}
	p["items"] = items
}

// listSample is a list of one element that the list's checks accept.
func (a *Arg) listSample() []any {
	if a.Items != nil {
		return []any{a.Items.sample()}
	}
	rec := map[string]any{}
	for _, f := range a.Fields {
		first := true
		for _, g := range a.FieldGroups {
			if i := slices.Index(g.names, f.Name); i > 0 {
				first = false
			}
		}
		if f.Required || first {
			rec[f.Name] = f.sample()
		}
	}
	return []any{rec}
}
