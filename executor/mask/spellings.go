package mask

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxReference bounds, in bytes, the HTML character references and \u{…}
// escapes read: &#x0000000000; is 14.
const maxReference = 16

// spelled is character c, spelled in w bytes.
type spelled struct {
	c rune
	w int
}

// spellingsAt appends to out the characters s spells from byte p, as
// spellingsAt does, and those the forms' characters of longer case
// mappings are read from (ß from SS, raw).
func (m *Masker) spellingsAt(s string, p int, out []spelled) []spelled {
	out = spellingsAt(s, p, out)
	for _, mf := range m.multi {
		if w, ok := foldPrefix(s[p:], mf.text); ok {
			out = append(out, spelled{mf.c, w})
		}
	}
	return out
}

// foldPrefix says whether s begins with text, letter case aside, and how
// many bytes of s that takes.
func foldPrefix(s string, text []rune) (int, bool) {
	w := 0
	for _, c := range text {
		x, n := utf8.DecodeRuneInString(s[w:])
		if n == 0 || foldRune(x) != foldRune(c) {
			return 0, false
		}
		w += n
	}
	return w, true
}

// spellingsAt appends to out the characters s spells from byte p, each
// with the width of its spelling, the character as it is first, then its
// escape, the likeliest reading first:
//   - the character as it is; a byte that is no part of a UTF-8 sequence
//     also as the windows-1252 character it stands for (windows1252);
//   - percent-encoded (URLs): its UTF-8 bytes as %XX, hex digits in
//     either case, or encoded twice as %25XX (a URL in another's query),
//     and '+' for a space (a form's query); and one %XX of
//     80 to FF also as a windows-1252 character, as a form on a page in
//     that encoding (or ISO-8859-1, which browsers read as it) sends it;
//   - an HTML character reference: named as the DOM serialises text and
//     attribute values (&amp; &lt; &gt; &quot; &nbsp;, and &apos;), or
//     numeric, decimal or hexadecimal (&#39; &#x27;);
//   - a JSON, JavaScript or Go string escape: \" \\ \/ \', \u003c (a
//     surrogate pair beyond the BMP), \u{3c}, \U0000003c, \x3c.
//
// A character from 80 to 9F hex, however spelled, is also read as the
// windows-1252 character of that byte (&#150; is an en dash in HTML).
// So a run may mix them: each of its characters is read in every
// spelling that begins where the one before ends.
func spellingsAt(s string, p int, out []spelled) []spelled {
	first := len(out)
	c, w := utf8.DecodeRuneInString(s[p:])
	out = append(out, spelled{c, w})
	if c == utf8.RuneError && w == 1 {
		out = append(out, spelled{windows1252(s[p]), 1})
	}
	var ok bool
	switch c {
	case '+':
		c, w, ok = ' ', 1, true
	case '%':
		// Percent-encoded twice (%253C): a URL carried in another's
		// query (?to=…, ?next=…) has its own query encoded again, and
		// the gate's refusal of such a URL named the value's pieces in
		// clear between the runs it masked (TestPageDownloadCannotCarryTheSecret).
		if c2, w2, ok2 := percentTwiceAt(s[p:]); ok2 {
			out = append(out, spelled{c2, w2})
		}
		c, w, ok = percentAt(s[p:])
		if v, isHex := hexAt(s, p+1, 2); isHex && v >= 0x80 {
			if ok {
				out = append(out, spelled{c, w})
			}
			c, w, ok = windows1252(byte(v)), 3, true
		}
	case '&':
		c, w, ok = referenceAt(s[p:])
	case '\\':
		c, w, ok = escapeAt(s[p:])
	}
	if ok {
		out = append(out, spelled{c, w})
	}
	// The five bytes windows-1252 leaves undefined (81, 8D, 8F, 90, 9D)
	// stand for themselves: reading them again would append the same
	// character for ever.
	for i := first; i < len(out); i++ {
		if x := out[i]; x.c >= 0x80 && x.c <= 0x9f {
			if c := windows1252(byte(x.c)); c != x.c {
				out = append(out, spelled{c, x.w})
			}
		}
	}
	return out
}

// windows1252 is the character byte b stands for in windows-1252, as the
// WHATWG Encoding Standard reads it (the encoding of pages labelled
// windows-1252, ISO-8859-1 or US-ASCII): ASCII below 80 hex, the table
// below from 80 to 9F, Latin-1 (U+00A0 to U+00FF) above.
func windows1252(b byte) rune {
	if b >= 0x80 && b <= 0x9f {
		return windows1252C1[b-0x80]
	}
	return rune(b)
}

var windows1252C1 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// percentAt reads the character s begins with percent-encoded: one to
// four %XX, a whole UTF-8 sequence.
func percentAt(s string) (rune, int, bool) {
	var b [utf8.UTFMax]byte
	for n := 0; n < len(b) && strings.HasPrefix(s[3*n:], "%"); n++ {
		v, ok := hexAt(s, 3*n+1, 2)
		if !ok {
			break
		}
		b[n] = byte(v)
		if utf8.FullRune(b[:n+1]) {
			c, w := utf8.DecodeRune(b[:n+1])
			return c, 3 * (n + 1), w == n+1 && c != utf8.RuneError
		}
	}
	return 0, 0, false
}

// percentTwiceAt reads the character s begins with percent-encoded
// twice: one to four %25XX, a whole UTF-8 sequence.
func percentTwiceAt(s string) (rune, int, bool) {
	var once strings.Builder
	for n := 0; n < utf8.UTFMax && strings.HasPrefix(s[5*n:], "%25") && len(s) >= 5*n+5; n++ {
		once.WriteString("%" + s[5*n+3:5*n+5])
		if c, w, ok := percentAt(once.String()); ok && w == 3*(n+1) {
			return c, 5 * (n + 1), true
		}
	}
	return 0, 0, false
}

// htmlName is the character of a named character reference the DOM
// serialises text and attribute values with, or the apostrophe's.
func htmlName(name string) (rune, bool) {
	switch name {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	case "apos":
		return '\'', true
	case "nbsp":
		return '\u00a0', true
	}
	return 0, false
}

// referenceAt reads the HTML character reference s begins with.
func referenceAt(s string) (rune, int, bool) {
	end := strings.IndexByte(s[:min(len(s), maxReference)], ';')
	if end < 2 {
		return 0, 0, false
	}
	body := s[1:end]
	if c, ok := htmlName(body); ok {
		return c, end + 1, true
	}
	var v uint64
	var err error
	switch {
	case strings.HasPrefix(body, "#x"), strings.HasPrefix(body, "#X"):
		v, err = strconv.ParseUint(body[2:], 16, 32)
	case strings.HasPrefix(body, "#"):
		v, err = strconv.ParseUint(body[1:], 10, 32)
	default:
		return 0, 0, false
	}
	return rune(v), end + 1, err == nil && v <= unicode.MaxRune
}

// escapeAt reads the string escape s begins with.
func escapeAt(s string) (rune, int, bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case '"', '\\', '/', '\'':
		return rune(s[1]), 2, true
	case 'x':
		v, ok := hexAt(s, 2, 2)
		return rune(v), 4, ok
	case 'U':
		v, ok := hexAt(s, 2, 8)
		return rune(v), 10, ok
	case 'u':
		if strings.HasPrefix(s[2:], "{") {
			end := strings.IndexByte(s[:min(len(s), maxReference)], '}')
			v, ok := hexAt(s, 3, end-3)
			return rune(v), end + 1, ok
		}
		v, ok := hexAt(s, 2, 4)
		if ok && utf16.IsSurrogate(rune(v)) && strings.HasPrefix(s[6:], `\u`) {
			if lo, ok := hexAt(s, 8, 4); ok {
				if c := utf16.DecodeRune(rune(v), rune(lo)); c != utf8.RuneError {
					return c, 12, true
				}
			}
		}
		return rune(v), 6, ok
	}
	return 0, 0, false
}

// hexAt reads the n hex digits (either case) of s from byte i, a value no
// larger than a character's.
func hexAt(s string, i, n int) (uint32, bool) {
	if n < 1 || len(s) < i+n {
		return 0, false
	}
	var v uint32
	for _, d := range []byte(s[i : i+n]) {
		switch {
		case d >= '0' && d <= '9':
			d -= '0'
		case d >= 'a' && d <= 'f':
			d -= 'a' - 10
		case d >= 'A' && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, false
		}
		if v = v<<4 | uint32(d); v > unicode.MaxRune {
			return 0, false
		}
	}
	return v, true
}

// plain is what s says, whichever way it is spelled (unescape), white
// space collapsed.
func plain(s string) string { return collapse(unescape(s)) }

// unescape reads every escape of s that spellingsAt knows as its
// character.
func unescape(s string) string {
	var b strings.Builder
	var sp []spelled
	for p := 0; p < len(s); {
		sp = spellingsAt(s, p, sp[:0])
		x := sp[min(1, len(sp)-1)] // the escape's likeliest reading, if there is one
		b.WriteRune(x.c)
		p += x.w
	}
	return b.String()
}
