package evidence

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a page or an agent wrote reaches people in three places: the HTML
// report (ExportHTML), the operator console and `evidence show` (with
// `approvals list`) on a terminal. All three show the same characters the
// same way, through escapeHidden: a character that changes how text reads
// without being seen is written as a \uXXXX escape (\UXXXXXXXX above the
// BMP), so that a title cannot reverse the line it stands in (U+202E),
// hide a word (U+200B), or rewrite a terminal (ESC, CSI).

// hidden reports whether r is written as an escape: the C0 and C1 control
// characters and DEL but tab and line feed (Unicode category Cc), the
// format characters (Cf: the bidirectional embeddings, overrides, isolates
// and marks — U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C — the
// zero-width characters U+200B–U+200D, U+2060 and U+FEFF, the soft
// hyphen, tag characters), and the line and paragraph separators U+2028
// and U+2029 (Zl, Zp); and the other characters a reader cannot see:
// variation selectors (U+FE00–U+FE0F and U+E0100–U+E01EF, which can
// carry hidden bytes after a visible letter, and the Mongolian ones), the
// other default-ignorable code points (the combining grapheme joiner, the
// Hangul fillers U+115F, U+1160, U+3164, U+FFA0, ...) and the braille
// blank U+2800. Unicode Technical Report 36 (Unicode Security
// Considerations) and CVE-2021-42574 ("Trojan Source") list these as the
// ones that make text read other than it is.
func hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r == unicode.ReplacementChar:
		return false // what an invalid byte decodes to: seen as it is
	case r == '\u2800':
		return true // the braille blank: a letter that shows as a space
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// escapeHidden writes s to b with every hidden rune as an escape; line,
// for one line of a terminal, also escapes tab, line feed, backslash and
// the double quote, so that the result can stand between double quotes.
func escapeHidden(b *strings.Builder, s string, line bool) {
	for _, r := range s {
		switch {
		case line && r == '\n':
			b.WriteString(`\n`)
		case line && r == '\t':
			b.WriteString(`\t`)
		case line && (r == '\\' || r == '"'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case hidden(r) && r > 0xFFFF:
			fmt.Fprintf(b, `\U%08X`, r)
		case hidden(r):
			fmt.Fprintf(b, `\u%04X`, r)
		default:
			b.WriteRune(r) // an invalid byte becomes U+FFFD
		}
	}
}

// Visible returns s with every character that changes how text reads
// without being seen written as a \uXXXX escape: bidirectional controls,
// zero-width and other format characters, control characters (ESC, CR,
// NUL, C1) — all but tab and line feed, which a block of text keeps. The
// HTML report and the operator console pass every page they render
// through it, so that no field escapes it.
func Visible(s string) string {
	if !strings.ContainsFunc(s, hidden) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	escapeHidden(&b, s, false)
	return b.String()
}

// VisibleLine returns s for one line of a terminal: unchanged when it
// holds nothing hidden and no tab or line break, else between double
// quotes with those escaped as Visible does (and \n, \t, \\, \").
func VisibleLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return hidden(r) || r == '\n' || r == '\t' }) && utf8.ValidString(s) {
		return s
	}
	return quote(s)
}

// quote returns s between double quotes, escaped for one terminal line.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escapeHidden(&b, s, true)
	b.WriteByte('"')
	return b.String()
}
