package executor

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Page text and browsergate's own text. The masker masks only what came
// from a page or the browser (or the agent): never browsergate's own words
// around it — the fixed text of a reply, a refusal or a log line, a stage,
// a rule, a secret's label, a field name, the manifest's own words. A
// secret may share a run of six characters with those words (a value
// Navigated-Home-42, or one holding SECRET), and masking them would show
// the agent, before anything was typed, a part of the value, and break the
// records' fields.
//
// So a value from the page is marked where it enters browsergate's text:
// pageValue wraps it between two Unicode noncharacters (U+FDD0 and U+FDD1,
// which Unicode sets aside for a program's internal use; a page's own are
// taken out first), and a text made of such values and browsergate's words
// is masked by finish, which masks what is between the marks and drops the
// marks. Page content read as a whole (a snapshot, extracted HTML, a log)
// is masked for the agent as it is read, before it is cut (maskSource): the
// stretches it leaves are marked done (U+FDD2, U+FDD3), which the reply
// keeps and the record masks again in full (the agent's own texts, left as
// written in the reply, are masked there). Every sink finishes what it
// gets: the reply, the evidence envelope and the log lines.
const (
	markOpen  = '\uFDD0' // a page's value: masked by finish
	markClose = '\uFDD1'
	doneOpen  = '\uFDD2' // page content masked for the agent as it was read
	doneClose = '\uFDD3'
)

// isMark reports whether c is one of the marks (or another of the
// noncharacters next to them, which no page text needs).
func isMark(c rune) bool { return c >= '\uFDD0' && c <= '\uFDEF' }

// unmarked is s without any mark: a page cannot spell one.
func unmarked(s string) string {
	if !strings.ContainsFunc(s, isMark) {
		return s
	}
	return strings.Map(func(c rune) rune {
		if isMark(c) {
			return -1
		}
		return c
	}, s)
}

// pageValue marks s as a value from the page (or the agent), to be masked
// where browsergate's text around it is not.
func pageValue(s string) string {
	if s == "" {
		return s
	}
	return string(markOpen) + unmarked(s) + string(markClose)
}

// pageArg formats a value for browsergate's text as pageValue marks it,
// with whatever verb and flags the format gives it (%q quotes the value,
// then the quoted text is marked): deny marks every argument of a
// refusal's sentence so.
type pageArg struct{ v any }

func (p pageArg) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), p.v)
	if _, own := p.v.(*ownError); own && (verb == 'v' || verb == 's') {
		_, _ = f.Write([]byte(s)) // its maker marked the page's values in it
		return
	}
	_, _ = f.Write([]byte(pageValue(s)))
}

// ownError is an error whose text is a sentence of browsergate's own with
// the page's values in it marked (pageValue), as the secrets' rules make
// them: a refusal built of it (deny) and the masker take its text as it
// is, where another error's text is masked whole.
type ownError struct{ msg string }

func (e *ownError) Error() string { return e.msg }

// ownErrorf formats an ownError; the caller marks the page's values among
// its arguments.
func ownErrorf(format string, a ...any) error { return &ownError{fmt.Sprintf(format, a...)} }

// pageArgs wraps each argument as a pageArg.
func pageArgs(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = pageArg{v}
	}
	return out
}

// hasMarks reports whether s holds a mark.
func hasMarks(s string) bool { return strings.ContainsFunc(s, isMark) }

// finish masks the page's values in s with m and drops the marks:
// browsergate's own text (outside marks) is never masked. Done content
// (maskSource) is masked again with m when record is true (the record
// masks the agent's own texts too), else kept as it is. A mark whose end
// was cut off (a clipped text) runs to the end of s.
func (m *masker) finish(s string, record bool) string {
	if !hasMarks(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(c rune) bool { return c == markOpen || c == doneOpen })
		if i < 0 {
			b.WriteString(unmarked(s))
			break
		}
		b.WriteString(unmarked(s[:i]))
		open, w := utf8.DecodeRuneInString(s[i:])
		closer := markClose
		if open == doneOpen {
			closer = doneClose
		}
		rest := s[i+w:]
		j := strings.IndexRune(rest, closer)
		inner := rest
		if j < 0 {
			s = ""
		} else {
			inner, s = rest[:j], rest[j+utf8.RuneLen(closer):]
		}
		inner = unmarked(inner)
		if open == markOpen || record {
			inner = m.mask(inner)
		}
		b.WriteString(inner)
	}
	return b.String()
}

// finishAll masks a text that may quote the page anywhere (an error, from
// the browser or a wrapped one; a log line's value): a text whose maker
// marked the page's values in it is masked there only (finish), one with
// no mark is masked whole.
func (m *masker) finishAll(s string, record bool) string {
	if hasMarks(s) {
		return m.finish(s, record)
	}
	return m.finish(pageValue(s), record)
}

// balanced closes, in one page of a text split into pages, a mark the cut
// left open, and opens one the cut left closed: each page is masked as the
// whole was.
func balanced(s string) string {
	open, seen := rune(0), false
	for _, c := range s {
		switch c {
		case markOpen, doneOpen:
			open, seen = c, true
		case markClose, doneClose:
			if !seen {
				// Closed before anything opened: the page begins inside
				// a mark.
				o := markOpen
				if c == doneClose {
					o = doneOpen
				}
				s = string(o) + s
			}
			open, seen = 0, true
		}
	}
	switch open {
	case markOpen:
		s += string(markClose)
	case doneOpen:
		s += string(doneClose)
	}
	return s
}

// maskSource masks page content for the agent as it is read (m is the
// agent's masker for the page), before it is cut: the labels it puts in
// are browsergate's, the stretches between them are marked done, and the
// record masks those again in full (finish).
func (m *masker) maskSource(s string) string {
	s = unmarked(s)
	if s == "" {
		return s
	}
	var b strings.Builder
	m.maskSourceTo(&b, s)
	return b.String()
}

// maskSourceTo writes maskSource(s) to b; a label already in s (content
// masked before) is kept as it is.
func (m *masker) maskSourceTo(b *strings.Builder, s string) {
	if i, j := labelIn(s); j > 0 {
		m.maskSourceTo(b, s[:i])
		b.WriteString(s[i:j])
		m.maskSourceTo(b, s[j:])
		return
	}
	done := func(t string) {
		if t != "" {
			b.WriteRune(doneOpen)
			b.WriteString(t)
			b.WriteRune(doneClose)
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

// reasonMarked is a refused request's reason with the page's values in it
// marked: as its maker marked them, else where it quotes the URL or host.
func reasonMarked(b Blocked) string {
	if hasMarks(b.Reason) {
		return b.Reason
	}
	return markKnown(b.Reason, b.URL, hostOf(b.URL))
}

// markKnown marks, in a sentence of browsergate's own (a refused request's
// reason), each place where one of the page's values stands: the URL a
// page requested, its host. The longest value is marked where two begin.
func markKnown(s string, values ...string) string {
	s = unmarked(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		for _, v := range values {
			if len(v) > n && strings.HasPrefix(s[i:], v) {
				n = len(v)
			}
		}
		if n == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(pageValue(s[i : i+n]))
		i += n
	}
	return b.String()
}
