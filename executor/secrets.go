package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Secrets (the manifest's [secrets.<NAME>] tables) never reach the agent
// or the record. The agent types the placeholder <NAME>; the value is put
// in only as the text is dispatched, only into an element named by ref or
// selector, and only when that element's page is on one of the secret's
// domains. Everything browsergate hands back or writes — tool results,
// snapshots, extracted HTML, page state, blocked-request lists, evidence
// envelopes, approval questions and log lines — goes through a masker that
// replaces the value, and every run of six or more of its characters, in
// any mix of URL, HTML and string escapes, UTF-8 or windows-1252, and in
// either case, with [secret NAME] ([part of secret NAME]). Screenshots are
// pixels: a page that shows a secret in clear text shows it in its
// screenshot too.

// The rules a secret is typed, attached and sent by are package gate's
// (gate.Secrets); what follows is the masking.

func hostOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// masker replaces a secret value, in every spelling a browser or a page
// gives it in text, with [secret NAME], and every run of minPiece or more
// of its characters with [part of secret NAME]: a field that kept a
// prefix, a page that shows a part of the value, a URL that carries it.
// A nil masker masks nothing.
//
// Each character of a run may come in any of its spellings (spellingsAt),
// so a value shown with some characters escaped and others not — a query
// as Chromium canonicalises it (k&%209%3CQ), a prefix the DOM serialises
// (k&amp; 9&lt;Q) — is masked as the raw one is. Letters match in either
// case (a page that shows the value with text-transform: uppercase):
// each character of a form stands for every character of its simple case
// folding orbit (unicode.SimpleFold: k, K and the Kelvin sign), and a
// character whose case mapping is two or more characters (ß as SS, the
// ligature ﬁ as FI) is also read from those characters, raw (multiFolds).
// Runs are found leftmost-longest, so the whole value is named as such and
// not as two parts. (A regular expression of the same runs was measured
// 100 to 800 times slower than this scanner: Go's regexp has no DFA.)
type masker struct {
	forms []secretForm
	// at lists, by character, where it stands in the forms, in either
	// case: a table for ASCII, a map beyond. (A pointer: forAgent copies
	// the masker.)
	ascii *[utf8.RuneSelf][]formAt
	other map[rune][]formAt
	// pairs says, of two ASCII characters, whether they follow each other
	// in a form, in either case: a stretch of raw ASCII text without five
	// such pairs in a row holds no run (scan).
	pairs *[utf8.RuneSelf][utf8.RuneSelf]bool
	// multi are the forms' characters whose case mapping is longer than
	// one character, with the text they are also read from.
	multi []multiFold
	// own are the pieces of secrets the agent itself wrote in its session,
	// canonical (forAgent): a run that one of them holds is left as it is.
	own []string
	// secrets are the secrets it masks, in order; subs its maskers of some
	// of them (only), made once each.
	secrets []*toolclad.Secret
	subs    *sync.Map
}

// multiFold is character c, also read from the characters of text in
// either case (ß from ss, SS or Ss).
type multiFold struct {
	c    rune
	text []rune
}

// secretForm is a secret's value, or its value as the accessibility tree
// collapses white space (runs of spaces, a no-break space, as one space).
type secretForm struct {
	name  string
	chars []rune
}

// formAt is character k of form.
type formAt struct{ form, k int }

// newMasker is the masker of the manifests' secrets. A session's masker
// holds its own manifest's secrets only (Executor.maskers): a reply or a
// record of one manifest never names another's secret.
func newMasker(ms []*toolclad.Manifest) *masker {
	var secs []*toolclad.Secret
	for _, man := range ms {
		secs = append(secs, man.Secrets...)
	}
	return secretsMasker(secs)
}

// secretsMasker is the masker of secs (nil when there are none).
func secretsMasker(secs []*toolclad.Secret) *masker {
	if len(secs) == 0 {
		return nil
	}
	m := &masker{ascii: new([utf8.RuneSelf][]formAt), other: map[rune][]formAt{}, pairs: new([utf8.RuneSelf][utf8.RuneSelf]bool),
		secrets: secs, subs: &sync.Map{}}
	for _, sec := range secs {
		v := sec.Value()
		m.addForm(sec.Name, v)
		if c := collapse(v); c != v && utf8.RuneCountInString(c) >= minPiece {
			m.addForm(sec.Name, c)
		}
	}
	return m
}

// only is the masker of those of m's secrets that keep holds (nil when
// none does), made once for each set.
func (m *masker) only(keep []*toolclad.Secret) *masker {
	if m == nil || len(keep) == 0 {
		return nil
	}
	var key strings.Builder
	var secs []*toolclad.Secret
	for i, sec := range m.secrets {
		if slices.Contains(keep, sec) {
			secs = append(secs, sec)
			key.WriteString(strconv.Itoa(i) + ",")
		}
	}
	if len(secs) == len(m.secrets) {
		return m
	}
	if len(secs) == 0 {
		return nil
	}
	if sub, ok := m.subs.Load(key.String()); ok {
		return sub.(*masker)
	}
	sub, _ := m.subs.LoadOrStore(key.String(), secretsMasker(secs))
	return sub.(*masker)
}

func (m *masker) addForm(name, v string) {
	f := len(m.forms)
	m.forms = append(m.forms, secretForm{name: name, chars: []rune(v)})
	for k, c := range m.forms[f].chars {
		for x := c; ; {
			if x < utf8.RuneSelf {
				m.ascii[x] = append(m.ascii[x], formAt{f, k})
			} else {
				m.other[x] = append(m.other[x], formAt{f, k})
			}
			if x = unicode.SimpleFold(x); x == c {
				break
			}
		}
		if k > 0 {
			for _, a := range foldOrbit(m.forms[f].chars[k-1]) {
				for _, b := range foldOrbit(c) {
					if a < utf8.RuneSelf && b < utf8.RuneSelf {
						m.pairs[a][b] = true
					}
				}
			}
		}
		if text, ok := multiFolds[c]; ok && !slices.ContainsFunc(m.multi, func(mf multiFold) bool { return mf.c == c }) {
			m.multi = append(m.multi, multiFold{c: c, text: []rune(text)})
		}
	}
}

// foldOrbit is c and the characters it folds to (unicode.SimpleFold).
func foldOrbit(c rune) []rune {
	out := []rune{c}
	for x := unicode.SimpleFold(c); x != c; x = unicode.SimpleFold(x) {
		out = append(out, x)
	}
	return out
}

// multiFolds are the characters whose upper or lower case is two or three
// characters (Unicode's SpecialCasing and CaseFolding, the Latin letters
// and ligatures among them), with that text in lower case: what a page's
// text-transform, or a server's case mapping, makes of them. Other such
// characters (Greek with iota subscripts, Armenian ligatures) are matched
// only one for one, by simple case folding.
var multiFolds = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'ŉ': "\u02bcn", 'ǰ': "j\u030c", 'İ': "i\u0307",
	'ﬀ': "ff", 'ﬁ': "fi", 'ﬂ': "fl", 'ﬃ': "ffi", 'ﬄ': "ffl", 'ﬅ': "st", 'ﬆ': "st",
}

// where lists where c stands in the forms.
func (m *masker) where(c rune) []formAt {
	if c >= 0 && c < utf8.RuneSelf {
		return m.ascii[c]
	}
	return m.other[c]
}

// agentTexts is what the agent itself wrote in an MCP session (every
// string of every call's arguments, keys included, in every session of
// every tool it opened), as the pieces of secrets it holds: canonical
// (canonical), the longest from each character, none inside another. So
// it is bounded by the secrets' lengths (one piece per character of each
// form at most), however much the agent writes, and nothing is ever
// forgotten: a string the agent wrote comes back as written until the MCP
// session ends. (A secret a reload adds is looked for only in what the
// agent writes after it.) Safe for concurrent use: the MCP session's
// calls to the tools of two manifests run side by side.
type agentTexts struct {
	mu     sync.Mutex
	pieces []string // replaced, never changed in place: forAgent keeps it
}

// note adds the pieces of secrets that texts hold, in any spelling the
// masker reads, and as the accessibility tree collapses their white space.
func (m *masker) note(a *agentTexts, texts []string) {
	if m == nil || a == nil {
		return
	}
	var found []string
	for _, t := range texts {
		for _, x := range []string{t, plain(t)} {
			for _, r := range m.scan(x, true) {
				found = append(found, canonical(m.forms[r.form].chars[r.k:r.k+r.n]))
			}
		}
	}
	if len(found) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	pieces := slices.Clone(a.pieces)
	for _, p := range found {
		if slices.ContainsFunc(pieces, func(q string) bool { return strings.Contains(q, p) }) {
			continue
		}
		pieces = slices.DeleteFunc(pieces, func(q string) bool { return strings.Contains(p, q) })
		pieces = append(pieces, p)
	}
	a.pieces = pieces
}

// held returns the pieces noted so far.
func (a *agentTexts) held() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pieces
}

// forAgent is the masker for what is returned to the agent of a session:
// it leaves as they are the runs of secrets that the agent's own texts of
// the session hold (a), in whatever spelling or case they come back — a
// query the agent wrote comes back percent-encoded in the page's URL, in
// this call's reply and in every later one's state line, and a search page
// shows it in its text. What the agent wrote comes back as it wrote it;
// otherwise a reply would show, by what the masker hid of it, whether a
// guess was a piece of a secret (the masker as an oracle). The evidence
// and the logs are masked in full.
func (m *masker) forAgent(a *agentTexts) *masker {
	own := a.held()
	if m == nil || len(own) == 0 {
		return m
	}
	c := *m
	c.own = own
	return &c
}

// canonical is a run of a secret's characters as the agent's pieces are
// compared: white space collapsed, each letter case-folded (a character
// whose case mapping is longer, ß, as that text, ss), so that whichever
// spelling, case and spacing a text comes back in, its pieces compare
// equal to those the agent wrote.
func canonical(chars []rune) string {
	var b strings.Builder
	for _, w := range strings.Fields(string(chars)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for _, c := range w {
			if text, ok := multiFolds[c]; ok {
				for _, x := range text {
					b.WriteRune(foldRune(x))
				}
				continue
			}
			b.WriteRune(foldRune(c))
		}
	}
	return b.String()
}

// foldRune is the least character of c's simple case folding orbit.
func foldRune(c rune) rune {
	least := c
	for x := unicode.SimpleFold(c); x != c; x = unicode.SimpleFold(x) {
		least = min(least, x)
	}
	return least
}

// argTexts are the strings among a call's arguments, keys included.
func argTexts(args map[string]any) []string {
	var out []string
	for k, v := range args {
		out = append(out, k)
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// minPiece is the shortest run of a secret's characters that is masked on
// its own.
const minPiece = 6

// A run is the spellings of consecutive characters of a secret form
// that begin at byte start of a text with character k of form: as many as
// n characters, reaching as far as byte end. (Two spellings of one
// character may begin at one byte, & and &amp;: the most characters and
// the furthest end may come by different ones, and masking up to that end
// masks every run from start.)
type run struct{ form, k, n, start, end int }

// spans are where in s the runs are, as [start, end) byte offsets.
func (m *masker) spans(s string) [][2]int {
	if m == nil || s == "" {
		return nil
	}
	var out [][2]int
	for _, r := range m.runs(s) {
		out = append(out, [2]int{r.start, r.end})
	}
	return out
}

// runs are the runs of minPiece or more characters in s, leftmost-longest
// and apart, as a regular expression would find them (regexp.Longest).
func (m *masker) runs(s string) []run { return m.scan(s, false) }

// scan finds the runs of minPiece or more characters in s: leftmost-longest
// and apart (runs), or with every, the longest of each form and character
// from every byte (the pieces a text holds, note).
// A run lies within a stretch of s whose every byte belongs to a spelling
// of some secret character: most text has no such stretch long enough to
// hold one, and only those that are long enough are searched (runsIn).
func (m *masker) scan(s string, every bool) []run {
	var out []run
	var w runsWork
	w.every = every
	var sp []spelled
	lo, hi := -1, -1 // the stretch so far, s[lo:hi]
	// While the stretch is raw ASCII (simple), chain counts the pairs of
	// consecutive characters of a form in a row that end at p, and most
	// is the most: a run needs minPiece-1.
	simple, chain, most := true, 0, 0
	for p := 0; p <= len(s); p++ {
		end := -1 // where the spellings of secret characters at p end
		switch {
		case p == len(s):
		case s[p] < utf8.RuneSelf && s[p] != '%' && s[p] != '&' && s[p] != '\\' && s[p] != '+' && m.multi == nil:
			if m.ascii[s[p]] != nil { // the common case, quickly
				end = p + 1
				if lo >= 0 && s[p-1] < utf8.RuneSelf && m.pairs[s[p-1]][s[p]] {
					chain++
					most = max(most, chain)
				} else {
					chain = 0
				}
			}
		case charStart(s, p):
			simple = false
			sp = m.spellingsAt(s, p, sp[:0])
			for _, x := range sp {
				if m.where(x.c) != nil {
					end = max(end, p+x.w)
				}
			}
		}
		if end > p {
			if lo < 0 {
				lo = p
			}
			hi = max(hi, end)
		} else if lo >= 0 && p >= hi { // byte p is in no such spelling: the stretch ended
			if hi-lo >= minPiece && (!simple || most >= minPiece-1) {
				out = m.runsIn(s[:hi], lo, out, &w)
			}
			lo, simple, chain, most = -1, true, 0, 0
		} else if lo < 0 {
			simple = true
		}
	}
	return out
}

// charStart says whether a character may be spelled from byte p of s:
// the first byte of a UTF-8 sequence, or a byte that is no part of one (a
// windows-1252 page's text read as bytes).
func charStart(s string, p int) bool {
	if utf8.RuneStart(s[p]) {
		return true
	}
	for q := p - 1; q >= 0 && q >= p-(utf8.UTFMax-1); q-- {
		if utf8.RuneStart(s[q]) {
			c, w := utf8.DecodeRuneInString(s[q:])
			return (c == utf8.RuneError && w <= 1) || q+w <= p
		}
	}
	return true
}

// runsWork is what runsIn works in, kept from one stretch to the next.
type runsWork struct {
	near  [maxSpelling][]run // near[p%maxSpelling]: the runs from byte p, one per form and character
	found []run              // the longest run of minPiece or more from each byte that has one, last first
	sp    []spelled
	every bool // every run of minPiece or more from each byte, of each form and character (scan)
}

// runsIn appends to out the runs from bytes lo and on of s.
//
// It goes through s backwards, once: the runs from byte p at character k
// of a form are a spelling of that character at p followed by the run
// from where the spelling ends at character k+1, which was worked out
// already. Only the runs from the last maxSpelling bytes are kept (a
// spelling is shorter), so the time is linear in s and the memory
// bounded.
func (m *masker) runsIn(s string, lo int, out []run, w *runsWork) []run {
	near, found, sp := &w.near, w.found[:0], w.sp
	for p := len(s) - 1; p >= lo; p-- {
		here := near[p%maxSpelling][:0]
		if charStart(s, p) {
			sp = m.spellingsAt(s, p, sp[:0])
			for _, x := range sp {
				for _, at := range m.where(x.c) {
					r := run{form: at.form, k: at.k, n: 1, start: p, end: p + x.w}
					if r.end < len(s) && at.k+1 < len(m.forms[at.form].chars) {
						for _, next := range near[r.end%maxSpelling] {
							if next.form == at.form && next.k == at.k+1 {
								r.n, r.end = next.n+1, next.end
								break
							}
						}
					}
					if i := slices.IndexFunc(here, func(o run) bool { return o.form == r.form && o.k == r.k }); i >= 0 {
						here[i].n, here[i].end = max(here[i].n, r.n), max(here[i].end, r.end)
					} else {
						here = append(here, r)
					}
				}
			}
			if w.every {
				for _, r := range here {
					if r.n >= minPiece {
						out = append(out, r)
					}
				}
			}
			var best run
			for _, r := range here {
				if r.n >= minPiece && (r.end > best.end || r.end == best.end && r.n > best.n) {
					best = r
				}
			}
			if best.n > 0 {
				found = append(found, best)
			}
		}
		near[p%maxSpelling] = here
	}
	w.found, w.sp = found, sp
	if w.every {
		return out
	}
	// Leftmost first, apart: a run that starts inside the one before is
	// left out (what of it is past that one's end and long enough is
	// found again from there).
	start := len(out)
	for i := len(found) - 1; i >= 0; i-- {
		if len(out) == start || found[i].start >= out[len(out)-1].end {
			out = append(out, found[i])
		}
	}
	return out
}

// maxSpelling is longer, in bytes, than any spelling spellingsAt reads:
// a four-byte character percent-encoded twice (%25F0%259F%2598%2580) is
// 20.
const maxSpelling = 24

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
func (m *masker) spellingsAt(s string, p int, out []spelled) []spelled {
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
		// clear between the runs it masked (TestH7PageDownloadCarriesTheSecret).
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
	for i := first; i < len(out); i++ {
		if x := out[i]; x.c >= 0x80 && x.c <= 0x9f {
			out = append(out, spelled{windows1252(byte(x.c)), x.w})
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

// mask masks every run of a secret in s. A label already in s (a text
// masked before: the record's line, a value masked as it was read) is
// left as it is, so that a secret holding "secret" never masks its label.
func (m *masker) mask(s string) string {
	if m == nil || s == "" {
		return s
	}
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
// when the agent's own texts hold it (forAgent), else [secret NAME] for a
// whole value and [part of secret NAME] for a part.
func (m *masker) label(r run, text string) string {
	f := m.forms[r.form]
	if len(m.own) > 0 {
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

// maskValue masks the strings inside v (maps, slices, strings).
func (m *masker) maskValue(v any) any {
	if m == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return m.mask(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.mask(k)] = m.maskValue(e) // keys too: an undeclared call's arguments are the agent's own
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.maskValue(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = m.mask(e)
		}
		return out
	}
	return v
}

func (m *masker) maskState(p *PageState) *PageState {
	if m == nil || p == nil {
		return p
	}
	c := *p
	c.URL, c.Title, c.Domain = m.mask(c.URL), m.mask(c.Title), m.mask(c.Domain)
	return &c
}

// maskedError keeps the error's identity (errors.Is) and masks its text.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskStructured masks a command's structured content, whatever Go types
// it holds (links, tables, search results): it is read as the JSON the
// agent gets, and every string value in it masked as the page's (its
// keys are the Go fields' names, browsergate's). Content that does not
// encode is dropped rather than passed unmasked.
func (m *masker) maskStructured(s map[string]any, record bool) map[string]any {
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
func (m *masker) maskValues(v any, record bool) any {
	switch x := v.(type) {
	case string:
		return m.finishAll(x, record)
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

// turnMasks are the maskers a finished call is masked with, for the
// record or for the agent.
type turnMasks struct {
	// record: for the evidence and the log, every secret of the session's
	// manifest, the agent's own texts masked too; else for the agent.
	record bool
	// values masks the page's values in the call's texts (its output, its
	// refusal, its error, the structured content).
	values *masker
	// page masks a page's own URL and title, by that page's URL.
	page func(url string) *masker
	// blocked masks a refused request's URL and the reason's copy of it.
	blocked func(b Blocked) *masker
}

// maskTurn masks what came from the pages, the browser and the agent in
// everything of a finished call that is returned, recorded or logged;
// browsergate's own words around them are left as they are (package pagetext).
func maskTurn(t *turn, k turnMasks) {
	if t.call != nil && t.call.Command != nil && commandTable[t.call.Command.Name].pageContent && !pagetext.HasMarks(t.out.Text) {
		// Page content that was not marked as it was read is the page's
		// as a whole: a source missed is masked, never shown.
		t.out.Text = pagetext.Value(t.out.Text)
	}
	t.out.Text = k.values.finish(t.out.Text, k.record)
	if t.out.Structured != nil {
		t.out.Structured = k.values.maskStructured(t.out.Structured, k.record)
	}
	if t.err != nil {
		// An error may quote the browser or the page anywhere: masked
		// whole, unless it marks the page's values in it (finishAll), or is
		// browsergate's own sentence (pagetext.Own).
		msg := t.err.Error()
		if _, own := t.err.(*pagetext.Own); own {
			msg = k.values.finish(msg, k.record)
		} else {
			msg = k.values.finishAll(msg, k.record)
		}
		t.err = &maskedError{msg: msg, err: t.err}
	}
	if t.deny != nil {
		d := *t.deny
		d.Reason = k.values.finish(d.Reason, k.record)
		t.deny = &d
	}
	if t.facts != nil {
		f := *t.facts
		f.State = *k.page(f.State.URL).maskState(&f.State)
		t.facts = &f
	}
	if t.after != nil {
		t.after = k.page(t.after.URL).maskState(t.after)
	}
	for i, b := range t.blocked {
		m := k.blocked(b)
		t.blocked[i].URL = m.mask(pagetext.Unmarked(b.URL))
		t.blocked[i].Reason = m.finish(reasonMarked(b), k.record)
	}
}

// maskHandler is a slog.Handler that masks what came from pages in a log
// line before the inner handler sees it, with the secrets of one manifest
// (a backend's lines, its sessions') or, for the daemon's own lines, of
// every manifest. The message, and the values of browsergate's own keys
// (ownLogKeys: names, stages, rules, ids), are browsergate's words and
// are never masked; a value holding marked page values (package pagetext) is
// masked there only; any other string value is masked whole, a reason
// where it quotes the line's URL or host.
type maskHandler struct {
	inner slog.Handler
	m     func() *masker
}

// ownLogKeys are the attributes whose values are browsergate's own words.
var ownLogKeys = map[string]bool{
	"session": true, "tool": true, "stage": true, "rule": true, "layer": true, "source": true,
	"connect": true, "allowed": true, "status": true, "ms": true, "duration": true, "id": true,
	"kind": true, "channel": true, "approved": true, "command": true, "ended": true, "tab": true,
	"port": true, "resolved": true, "dialed": true,
}

func (h *maskHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *maskHandler) Handle(ctx context.Context, r slog.Record) error {
	m := h.m()
	var quoted []string // the line's URLs and hosts, which its reason may quote
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "url", "host", "target":
			quoted = append(quoted, pagetext.Unmarked(a.Value.Resolve().String()))
		}
		return true
	})
	nr := slog.NewRecord(r.Time, r.Level, m.finish(r.Message, true), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(m.attr(a, quoted))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

func (h *maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	m := h.m()
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = m.attr(a, nil)
	}
	return &maskHandler{inner: h.inner.WithAttrs(masked), m: h.m}
}

func (h *maskHandler) WithGroup(name string) slog.Handler {
	return &maskHandler{inner: h.inner.WithGroup(name), m: h.m}
}

// maskedText is a log value masked already, with the session's secrets
// (a recorded turn's texts): the handler logs it as it is.
type maskedText string

func (m *masker) attr(a slog.Attr, quoted []string) slog.Attr {
	v := a.Value.Resolve()
	if x, ok := v.Any().(maskedText); ok && v.Kind() == slog.KindAny {
		return slog.String(a.Key, pagetext.Unmarked(string(x)))
	}
	var text string
	switch v.Kind() {
	case slog.KindString:
		text = v.String()
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, e := range g {
			out[i] = m.attr(e, quoted)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		text = fmt.Sprint(v.Any())
	default:
		return a
	}
	switch {
	case ownLogKeys[a.Key]:
		text = m.finish(text, true)
	case a.Key == "reason" && !pagetext.HasMarks(text):
		text = m.finish(pagetext.MarkKnown(text, quoted...), true)
	default:
		text = m.finishAll(text, true)
	}
	return slog.String(a.Key, text)
}
