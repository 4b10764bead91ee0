package mask

import "strings"

// A field's value that holds a run of an operator's secret answer is
// hidden whole, not the run alone. The agent writes what a field holds
// (type_text), and a secret answer may be short: a field on the answer's
// site that holds every six-digit code would otherwise show, by where
// [secret ANSWER_1] stands among them, which one the page knows. Hidden
// whole, the value says only that the answer is somewhere in it.
//
// A field's value is found as the texts browsergate hands back spell it:
// value="…" in a snapshot's line of a control (quoted as Go quotes, so a
// '"' inside is \") and in an element's HTML (where a '"' inside is
// &quot;). A backslash is read as escaping the next character either way,
// which in HTML can only hide more than the value, never less.

// valueOpen is what a field's value follows.
const valueOpen = `value="`

// hideValues replaces the text of every value="…" in s that holds a run
// of a secret answer, or a label of one, with the answer's label.
func (m *Masker) hideValues(s string) string {
	if m == nil || !m.answers || !strings.Contains(s, valueOpen) {
		return s
	}
	var b strings.Builder
	last := 0
	for from := 0; ; {
		i := strings.Index(s[from:], valueOpen)
		if i < 0 {
			break
		}
		start := from + i + len(valueOpen)
		end := valueEnd(s, start)
		if name := m.answerIn(s[start:end]); name != "" {
			b.WriteString(s[last:start])
			b.WriteString("[secret " + name + "]")
			last = end
		}
		from = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// valueEnd is where the quoted value that begins at s[start:] ends: at
// its closing quote, or the end of s (a value cut off).
func valueEnd(s string, start int) int {
	for p := start; p < len(s); p++ {
		switch s[p] {
		case '\\':
			p++
		case '"':
			return p
		}
	}
	return len(s)
}

// answerIn names the secret answer a run or a label in v is of, or "".
func (m *Masker) answerIn(v string) string {
	for _, r := range m.runs(v) {
		if f := m.forms[r.form]; f.answer {
			return f.name
		}
	}
	for _, f := range m.forms {
		if f.answer && strings.Contains(v, "secret "+f.name+"]") {
			return f.name
		}
	}
	return ""
}
