package mask

import (
	"encoding/json"
	"strings"
)

// Mask masks every run of a secret in s. A label already in s (a text
// masked before: the record's line, a value masked as it was read) is
// left as it is, so that a secret holding "secret" never masks its label.
func (m *Masker) Mask(s string) string {
	if m == nil || s == "" {
		return s
	}
	return m.mask(m.hideValues(s))
}

// mask is Mask, after hideValues.
func (m *Masker) mask(s string) string {
	if i, j := labelIn(s); j > 0 {
		return m.mask(s[:i]) + s[i:j] + m.mask(s[j:])
	}
	runs := m.runs(s)
	if runs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, r := range runs {
		b.WriteString(s[last:r.start])
		b.WriteString(m.label(r, s[r.start:r.end]))
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// labelIn finds the first label of a secret in s ([secret NAME], [part of
// secret NAME]): s[i:j], or j = 0.
func labelIn(s string) (i, j int) {
	for off := 0; ; {
		k := strings.Index(s[off:], "secret ")
		if k < 0 {
			return 0, 0
		}
		k += off
		off = k + len("secret ")
		var start int
		switch {
		case strings.HasSuffix(s[:k], "[part of "):
			start = k - len("[part of ")
		case strings.HasSuffix(s[:k], "["):
			start = k - 1
		default:
			continue
		}
		n := off
		for n < len(s) && (s[n] == '_' || s[n] == '-' || s[n] >= '0' && s[n] <= '9' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z') {
			n++
		}
		if n > off && n < len(s) && s[n] == ']' {
			return start, n + 1
		}
	}
}

// label is what shows in place of run r, spelled text: the text itself
// when the agent's own texts hold it (ForAgent), else [secret NAME] for a
// whole value and [part of secret NAME] for a part. An operator's secret
// answer is never left as the agent's own text: a six-digit code is one
// of a million, and an agent that wrote them all (a megabyte of text, or
// one refused call, whose arguments are noted too) would see the one the
// page shows come back in clear.
func (m *Masker) label(r run, text string) string {
	f := m.forms[r.form]
	if len(m.own) > 0 && !f.answer {
		c := canonical(f.chars[r.k : r.k+r.n])
		for _, p := range m.own {
			if strings.Contains(p, c) {
				return text
			}
		}
	}
	if r.k == 0 && r.n == len(f.chars) {
		return "[secret " + f.name + "]"
	}
	return "[part of secret " + f.name + "]"
}

// MaskValue masks the strings inside v (maps, slices, strings), map keys
// too: what the record keeps of a call's arguments.
func (m *Masker) MaskValue(v any) any {
	if m == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return m.Mask(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.Mask(k)] = m.MaskValue(e) // keys too: an undeclared call's arguments are the agent's own
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.MaskValue(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = m.Mask(e)
		}
		return out
	}
	return v
}

// MaskStructured masks a command's structured content, whatever Go types
// it holds (links, tables, search results): it is read as the JSON the
// agent gets, and every string value in it masked as the page's (its
// keys are the Go fields' names, browsergate's), marked or whole
// (FinishAll), with record as Finish takes it. Content that does not
// encode is dropped rather than passed unmasked.
func (m *Masker) MaskStructured(s map[string]any, record bool) map[string]any {
	data, err := json.Marshal(s)
	if err != nil {
		return map[string]any{"error": "structured content could not be masked, so it is left out"}
	}
	var plain map[string]any
	if err := json.Unmarshal(data, &plain); err != nil {
		return map[string]any{"error": "structured content could not be masked, so it is left out"}
	}
	out, _ := m.maskValues(plain, record).(map[string]any)
	return out
}

// maskValues masks the strings inside v as the page's values, but for
// the map keys.
func (m *Masker) maskValues(v any, record bool) any {
	switch x := v.(type) {
	case string:
		return m.FinishAll(x, record)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = m.maskValues(e, record)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.maskValues(e, record)
		}
		return out
	}
	return v
}
