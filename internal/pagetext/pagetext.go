// Package pagetext tells a page's text from browsergate's own. The
// masker masks only what came from a page, the browser or the agent, never
// browsergate's words around it; so a value from the page is marked where
// it enters browsergate's text, and every sink (the reply, the evidence
// record, a log line) masks what is between the marks and drops them.
// The gate builds its refusals with these marks, the masker reads them.
package pagetext

import (
	"fmt"
	"strings"
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
// Value wraps it between two Unicode noncharacters (U+FDD0 and U+FDD1,
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
	MarkOpen  = '\uFDD0' // a page's value: masked by finish
	MarkClose = '\uFDD1'
	DoneOpen  = '\uFDD2' // page content masked for the agent as it was read
	DoneClose = '\uFDD3'
)

// IsMark reports whether c is one of the marks (or another of the
// noncharacters next to them, which no page text needs).
func IsMark(c rune) bool { return c >= '\uFDD0' && c <= '\uFDEF' }

// Unmarked is s without any mark: a page cannot spell one.
func Unmarked(s string) string {
	if !strings.ContainsFunc(s, IsMark) {
		return s
	}
	return strings.Map(func(c rune) rune {
		if IsMark(c) {
			return -1
		}
		return c
	}, s)
}

// Value marks s as a value from the page (or the agent), to be masked
// where browsergate's text around it is not.
func Value(s string) string {
	if s == "" {
		return s
	}
	return string(MarkOpen) + Unmarked(s) + string(MarkClose)
}

// Done marks s, a value from the page already masked for the agent, as
// done: the reply keeps it as it is, the record masks it again in full.
func Done(s string) string {
	if s == "" {
		return s
	}
	return string(DoneOpen) + Unmarked(s) + string(DoneClose)
}

// arg formats a value for browsergate's text as Value marks it,
// with whatever verb and flags the format gives it (%q quotes the value,
// then the quoted text is marked): deny marks every argument of a
// refusal's sentence so.
type arg struct{ v any }

func (p arg) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), p.v)
	if _, own := p.v.(*Own); own && (verb == 'v' || verb == 's') {
		_, _ = f.Write([]byte(s)) // its maker marked the page's values in it
		return
	}
	_, _ = f.Write([]byte(Value(s)))
}

// Own is an error whose text is a sentence of browsergate's own with
// the page's values in it marked (Value), as the secrets' rules make
// them: a refusal built of it (deny) and the masker take its text as it
// is, where another error's text is masked whole.
type Own struct{ msg string }

func (e *Own) Error() string { return e.msg }

// Ownf formats an Own; the caller marks the page's values among
// its arguments.
func Ownf(format string, a ...any) error { return &Own{fmt.Sprintf(format, a...)} }

// Args wraps each argument as a arg.
func Args(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = arg{v}
	}
	return out
}

// HasMarks reports whether s holds a mark.
func HasMarks(s string) bool { return strings.ContainsFunc(s, IsMark) }

// Balanced closes, in one page of a text split into pages, a mark the cut
// left open, and opens one the cut left closed: each page is masked as the
// whole was.
func Balanced(s string) string {
	open, seen := rune(0), false
	for _, c := range s {
		switch c {
		case MarkOpen, DoneOpen:
			open, seen = c, true
		case MarkClose, DoneClose:
			if !seen {
				// Closed before anything opened: the page begins inside
				// a mark.
				o := MarkOpen
				if c == DoneClose {
					o = DoneOpen
				}
				s = string(o) + s
			}
			open, seen = 0, true
		}
	}
	switch open {
	case MarkOpen:
		s += string(MarkClose)
	case DoneOpen:
		s += string(DoneClose)
	}
	return s
}

// MarkKnown marks, in a sentence of browsergate's own (a refused request's
// reason), each place where one of the page's values stands: the URL a
// page requested, its host. The longest value is marked where two begin.
func MarkKnown(s string, values ...string) string {
	s = Unmarked(s)
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
		b.WriteString(Value(s[i : i+n]))
		i += n
	}
	return b.String()
}
