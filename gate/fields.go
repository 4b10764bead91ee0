package gate

import (
	"fmt"

	"github.com/browsergate/browsergate/evidence"
)

// fill_form's fields: each is typed into as type_text types, or sets a
// select's option as select_option does, or a checkbox or radio as a
// click on it does; each is judged as that single command would be.

// The kinds of a fill_form field, named by the command each is judged as.
const (
	FieldText    = "type_text"     // text: typed into the field
	FieldOption  = "select_option" // value: an option chosen by its value or label
	FieldChecked = "click"         // checked: a checkbox or radio clicked into that state
)

// FormFields are fill_form's fields, in order (records toolclad checked).
func FormFields(args map[string]any) []map[string]any {
	list, _ := args["fields"].([]any)
	out := make([]map[string]any, len(list))
	for i, item := range list {
		out[i], _ = item.(map[string]any)
	}
	return out
}

// FieldKind is what the field does: FieldText, FieldOption or
// FieldChecked (toolclad lets exactly one of text, value and checked
// through).
func FieldKind(field map[string]any) string {
	switch {
	case field["value"] != nil:
		return FieldOption
	case field["checked"] != nil:
		return FieldChecked
	}
	return FieldText
}

// SingleArgs are the arguments of the single command a field is judged
// as: its ref or selector, and its text (type_text) or its value
// (select_option, by the value argument unless the manifest declares only
// label).
func SingleArgs(field map[string]any, labelOnly bool) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"ref", "selector"} {
		if v, ok := field[k]; ok {
			out[k] = v
		}
	}
	switch FieldKind(field) {
	case FieldText:
		out["text"] = field["text"]
	case FieldOption:
		if labelOnly {
			out["label"] = field["value"]
		} else {
			out["value"] = field["value"]
		}
	}
	return out
}

// fields judges fill_form: every field as the single command it stands
// for, all before any is filled; one refusal refuses the call. A field
// that chooses an option or clicks needs that command declared, and its
// arguments must pass that command's declared signature: fill_form grants
// no more than the commands it stands for. Text needs only fill_form, as
// it is fill_form's own. A secret's placeholder goes only into text.
// An option or a click that leads to another page or submits a form must
// be the last field, so that no field is filled on a page the gate did
// not see.
func (v *Verdict) fields(q *Question) *DenyError {
	m, f := q.Call.Manifest, q.Facts
	fields := FormFields(q.Call.Args)
	if len(f.Fields) != len(fields) {
		return Deny(evidence.StageObserve, "element", "the fields were not observed")
	}
	for i, field := range fields {
		kind := FieldKind(field)
		if kind == FieldText {
			continue
		}
		single := m.Command(kind)
		if single == nil {
			return Deny(evidence.StageManifest, kind+" not declared",
				"field %d: a field with %s is judged as %s, and the manifest does not declare the %s command", i+1, fieldArg(kind), kind, kind)
		}
		if _, err := single.Validate(SingleArgs(field, single.Arg("value") == nil)); err != nil {
			return Deny(evidence.StageArgs, argRule(err), "field %d, as %s: %s", i+1, kind, argReason(err))
		}
		if value, _ := field["value"].(string); len(q.Secrets.Placeholders(value)) > 0 {
			return Deny(evidence.StageSecrets, "secret field",
				"field %d: a secret's placeholder goes only into a field's text, never into an option's value", i+1)
		}
	}
	for i, field := range fields {
		el, kind := f.Fields[i], FieldKind(field)
		if kind == FieldText {
			text, _ := field["text"].(string)
			masked, d := v.field(q, el, text)
			if d != nil {
				d.Reason = fmt.Sprintf("field %d: %s", i+1, d.Reason)
				return d
			}
			if masked {
				v.MaskedFields = append(v.MaskedFields, i)
			}
			continue
		}
		observed := ObserveClick
		if kind == FieldOption {
			observed = ObserveSelect
		}
		if d := v.acts(q, observed, kind, el); d != nil {
			d.Reason = fmt.Sprintf("field %d: %s", i+1, d.Reason)
			return d
		}
		if u := leadsTo(el.Dest); (u != "" || el.Dest.Submits) && i < len(fields)-1 {
			return Deny(evidence.StageArgs, "element",
				"field %d: the %s on %s leads to %s, so it must be the last field: the fields after it would be filled on a page the gate did not see",
				i+1, kind, el.Label, fieldLeads(u))
		}
	}
	v.Masked = len(v.MaskedFields) > 0
	return nil
}

// fieldArg names the argument that makes a field of kind.
func fieldArg(kind string) string {
	if kind == FieldOption {
		return "value"
	}
	return "checked"
}

// fieldLeads says where a field's action leads: its URL, or a form's
// submission.
func fieldLeads(u string) string {
	if u == "" {
		return "a form's submission"
	}
	return u
}

// FieldTexts are the texts of fill_form's fields, in order ("" for a
// field without text).
func FieldTexts(args map[string]any) []string {
	fields := FormFields(args)
	texts := make([]string, len(fields))
	for i, field := range fields {
		texts[i], _ = field["text"].(string)
	}
	return texts
}
