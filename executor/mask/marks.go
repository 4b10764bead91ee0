package mask

import (
	"strings"
	"unicode/utf8"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// Finish masks the page's values in s with m and drops the marks (package
// internal/pagetext): what every sink, the reply, the record and a log
// line, does last. Browsergate's own text (outside marks) is never masked. Done content
// (MaskSource) is masked again with m when record is true (the record
// masks the agent's own texts too), else kept as it is. A mark whose end
// was cut off (a clipped text) runs to the end of s.
func (m *Masker) Finish(s string, record bool) string {
	if !pagetext.HasMarks(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(c rune) bool { return c == pagetext.MarkOpen || c == pagetext.DoneOpen })
		if i < 0 {
			b.WriteString(pagetext.Unmarked(s))
			break
		}
		b.WriteString(pagetext.Unmarked(s[:i]))
		open, w := utf8.DecodeRuneInString(s[i:])
		closer := pagetext.MarkClose
		if open == pagetext.DoneOpen {
			closer = pagetext.DoneClose
		}
		rest := s[i+w:]
		j := strings.IndexRune(rest, closer)
		inner := rest
		if j < 0 {
			s = ""
		} else {
			inner, s = rest[:j], rest[j+utf8.RuneLen(closer):]
		}
		inner = pagetext.Unmarked(inner)
		if open == pagetext.MarkOpen || record {
			inner = m.Mask(inner)
		}
		b.WriteString(inner)
	}
	return b.String()
}

// FinishAll masks a text that may quote the page anywhere (an error, from
// the browser or a wrapped one; a log line's value): a text whose maker
// marked the page's values in it is masked there only (Finish), one with
// no mark is masked whole.
func (m *Masker) FinishAll(s string, record bool) string {
	if pagetext.HasMarks(s) {
		return m.Finish(s, record)
	}
	return m.Finish(pagetext.Value(s), record)
}

// MaskSource masks page content for the agent as it is read (m is the
// agent's masker for the page), before it is cut: the labels it puts in
// are browsergate's, the stretches between them are marked done, and the
// record masks those again in full (Finish).
func (m *Masker) MaskSource(s string) string {
	s = pagetext.Unmarked(s)
	if s == "" {
		return s
	}
	var b strings.Builder
	m.maskSourceTo(&b, m.hideValues(s))
	return b.String()
}

// maskSourceTo writes MaskSource(s) to b; a label already in s (content
// masked before) is kept as it is.
func (m *Masker) maskSourceTo(b *strings.Builder, s string) {
	if i, j := labelIn(s); j > 0 {
		m.maskSourceTo(b, s[:i])
		b.WriteString(s[i:j])
		m.maskSourceTo(b, s[j:])
		return
	}
	done := func(t string) {
		if t != "" {
			b.WriteRune(pagetext.DoneOpen)
			b.WriteString(t)
			b.WriteRune(pagetext.DoneClose)
		}
	}
	last := 0
	if m != nil {
		for _, r := range m.runs(s) {
			text := s[r.start:r.end]
			label := m.label(r, text)
			if label == text {
				continue // the agent's own text, left as it is: the record masks it
			}
			done(s[last:r.start])
			b.WriteString(label)
			last = r.end
		}
	}
	done(s[last:])
}
