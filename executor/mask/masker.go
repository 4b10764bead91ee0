package mask

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/browsergate/browsergate/toolclad"
)

// A Masker replaces a secret value, in every spelling a browser or a page
// gives it in text, with [secret NAME], and every run of MinPart or more
// of its characters with [part of secret NAME]: a field that kept a
// prefix, a page that shows a part of the value, a URL that carries it.
// A nil Masker masks nothing; a Masker is safe for concurrent use.
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
type Masker struct {
	forms []secretForm
	// at lists, by character, where it stands in the forms, in either
	// case: a table for ASCII, a map beyond. (A pointer: ForAgent copies
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
	// canonical (ForAgent): a run that one of them holds is left as it is.
	own []string
	// answers: some of the secrets are operators' answers (hideValues).
	answers bool
	// secrets are the secrets it masks, in order; subs its maskers of some
	// of them (Only), made once each.
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
	// answer: the form is of an operator's secret answer (ForAgent, and
	// hideValues).
	answer bool
}

// formAt is character k of form.
type formAt struct{ form, k int }

// FromManifests is the masker of the manifests' secrets (nil when they
// have none). A session's masker holds its own manifest's secrets only (the
// executor makes one per manifest): a reply or a record of one manifest
// never names another's secret.
func FromManifests(ms []*toolclad.Manifest) *Masker {
	var secs []*toolclad.Secret
	for _, man := range ms {
		secs = append(secs, man.Secrets...)
	}
	return New(secs)
}

// New is the masker of secs, in that order (nil when there are none).
func New(secs []*toolclad.Secret) *Masker {
	if len(secs) == 0 {
		return nil
	}
	m := &Masker{ascii: new([utf8.RuneSelf][]formAt), other: map[rune][]formAt{}, pairs: new([utf8.RuneSelf][utf8.RuneSelf]bool),
		secrets: secs, subs: &sync.Map{}}
	for _, sec := range secs {
		v := sec.Value()
		first := len(m.forms)
		m.addForm(sec.Name, v)
		if c := collapse(v); c != v && utf8.RuneCountInString(c) >= MinPart {
			m.addForm(sec.Name, c)
		}
		if sec.Answered() {
			m.answers = true
			for f := first; f < len(m.forms); f++ {
				m.forms[f].answer = true
			}
		}
	}
	return m
}

// Only is the masker of those of m's secrets that keep holds (nil when
// none does; m itself when all do), made once for each set: the
// executor's narrowing to the secrets a page could hold.
func (m *Masker) Only(keep []*toolclad.Secret) *Masker {
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
		return sub.(*Masker)
	}
	sub, _ := m.subs.LoadOrStore(key.String(), New(secs))
	return sub.(*Masker)
}

func (m *Masker) addForm(name, v string) {
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
func (m *Masker) where(c rune) []formAt {
	if c >= 0 && c < utf8.RuneSelf {
		return m.ascii[c]
	}
	return m.other[c]
}

// collapse is s with its white space collapsed as the accessibility tree
// shows it: each run of spaces (a no-break space too) as one space, none
// at the ends.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
