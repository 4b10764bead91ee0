package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

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
// any mix of URL, HTML and string escapes, with [secret NAME] ([part of
// secret NAME]). Screenshots are pixels: a page that shows a secret in
// clear text shows it in its screenshot too.

// secretSet is the secrets of one manifest, for typing.
type secretSet struct {
	secrets []*toolclad.Secret
	domains map[*toolclad.Secret][]*scope.Pattern
}

func newSecretSet(m *toolclad.Manifest) (*secretSet, error) {
	ss := &secretSet{secrets: m.Secrets, domains: map[*toolclad.Secret][]*scope.Pattern{}}
	var errs []error
	for _, sec := range m.Secrets {
		for _, d := range sec.Domains {
			p, err := scope.ParsePattern(d)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: secret %s: domain %q: %w", m.Path, sec.Name, d, err))
				continue
			}
			ss.domains[sec] = append(ss.domains[sec], p)
		}
	}
	return ss, errors.Join(errs...)
}

// placeholders returns the secrets whose placeholder text contains.
func (ss *secretSet) placeholders(text string) []*toolclad.Secret {
	if ss == nil {
		return nil
	}
	var out []*toolclad.Secret
	for _, sec := range ss.secrets {
		if strings.Contains(text, sec.Placeholder()) {
			out = append(out, sec)
		}
	}
	return out
}

// check says whether every secret in text may be typed into an element of
// the page at docURL ("" when the element is not named: the focused
// element could be anywhere, even in another frame).
func (ss *secretSet) check(text, docURL string, named bool) error {
	secs := ss.placeholders(text)
	if len(secs) == 0 {
		return nil
	}
	if !named {
		return fmt.Errorf("secret %s can only be typed into an element named by ref or selector, not the focused element", secs[0].Name)
	}
	host, err := scope.CanonicalHost(hostOf(docURL))
	if err != nil {
		return fmt.Errorf("secret %s: the element's page %q has no host it could be allowed on", secs[0].Name, docURL)
	}
	for _, sec := range secs {
		if !slices.ContainsFunc(ss.domains[sec], func(p *scope.Pattern) bool { return p.Match(host) }) {
			return fmt.Errorf("secret %s may only be typed on %s, and this element's page is on %s", sec.Name, strings.Join(sec.Domains, ", "), host)
		}
	}
	return nil
}

// onlyPlaceholders reports whether text is made of secret placeholders
// and nothing else (so recording it as typed reveals nothing).
func (ss *secretSet) onlyPlaceholders(text string) bool {
	secs := ss.placeholders(text)
	if len(secs) == 0 {
		return false
	}
	for _, sec := range secs {
		text = strings.ReplaceAll(text, sec.Placeholder(), "")
	}
	return strings.TrimSpace(text) == ""
}

// fill puts the values in place of the placeholders.
func (ss *secretSet) fill(text string) string {
	for _, sec := range ss.placeholders(text) {
		text = strings.ReplaceAll(text, sec.Placeholder(), sec.Value())
	}
	return text
}

func hostOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// mayType says whether text may be typed into the element observe found:
// a secret placeholder goes only into a text field named by ref or
// selector whose page is on every such secret's domains.
func (ss *secretSet) mayType(text string, el *elementFact) error {
	secs := ss.placeholders(text)
	if len(secs) == 0 {
		return nil
	}
	if !el.Named {
		return ss.check(text, "", false)
	}
	if el.FieldErr != nil {
		return fmt.Errorf("cannot tell which page the element is on, so no secret is typed: %v", el.FieldErr)
	}
	if !el.Field.Field {
		return fmt.Errorf("secret %s can only be typed into a text field (input, textarea or contenteditable), and %s is a <%s>", secs[0].Name, el.Label, el.Field.Tag)
	}
	for _, sec := range secs {
		if !el.Field.Password && sec.Fields != toolclad.SecretFieldsText {
			return fmt.Errorf("secret %s goes only into password fields, and %s is not one (the manifest may allow text fields: fields = \"text\")", sec.Name, el.Label)
		}
	}
	if el.Field.MaxLength >= 0 && el.Field.MaxLength < len([]rune(ss.fill(text))) {
		return fmt.Errorf("%s keeps at most %d characters, too few for the text with secret %s: the page would hold, and show, a part of it", el.Label, el.Field.MaxLength, secs[0].Name)
	}
	return ss.check(text, el.Field.URL, true)
}

// maySubmitTo refuses a submission to dest when a secret typed on this
// page (typed) may not go to dest's host: typing is held to a secret's
// domains, and so is where the form sends it.
func (ss *secretSet) maySubmitTo(typed []*toolclad.Secret, dest string) error {
	if len(typed) == 0 {
		return nil
	}
	host, err := scope.CanonicalHost(hostOf(dest))
	for _, sec := range typed {
		if err != nil || !slices.ContainsFunc(ss.domains[sec], func(p *scope.Pattern) bool { return p.Match(host) }) {
			return fmt.Errorf("secret %s was typed on this page, and the form would send it to %s, outside %s", sec.Name, dest, strings.Join(sec.Domains, ", "))
		}
	}
	return nil
}

// typedSecrets are the secrets typed into the tab's current page: a form
// submission from it is held to their domains. They are forgotten when the
// page navigates.
type typedSecrets struct {
	secrets []*toolclad.Secret
	navs    int // the tab's navigation count when they were typed
}

// on returns the secrets typed on the page the tab shows after navs
// navigations.
func (ts *typedSecrets) on(navs int) []*toolclad.Secret {
	if ts.navs != navs {
		return nil
	}
	return ts.secrets
}

// note remembers secrets typed on the page shown after navs navigations.
func (ts *typedSecrets) note(secs []*toolclad.Secret, navs int) {
	if ts.navs != navs {
		*ts = typedSecrets{navs: navs}
	}
	for _, sec := range secs {
		if !slices.Contains(ts.secrets, sec) {
			ts.secrets = append(ts.secrets, sec)
		}
	}
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
// (k&amp; 9&lt;Q) — is masked as the raw one is. Runs are found
// leftmost-longest, so the whole value is named as such and not as two
// parts. (A regular expression of the same runs was measured 100 to 800
// times slower than this scanner: Go's regexp has no DFA.)
type masker struct {
	forms []secretForm
	// at lists, by character, where it stands in the forms: a table for
	// ASCII, a map beyond.
	ascii [utf8.RuneSelf][]formAt
	other map[rune][]formAt
	// own are the agent's own texts of the call, as written and decoded
	// (forAgent): a run they hold is left as it is.
	own []string
}

// secretForm is a secret's value, or its value as the accessibility tree
// collapses white space (runs of spaces, a no-break space, as one space).
type secretForm struct {
	name  string
	chars []rune
}

// formAt is character k of form.
type formAt struct{ form, k int }

func newMasker(ms []*toolclad.Manifest) *masker {
	m := &masker{other: map[rune][]formAt{}}
	for _, man := range ms {
		for _, sec := range man.Secrets {
			v := sec.Value()
			m.addForm(sec.Name, v)
			if c := collapse(v); c != v && utf8.RuneCountInString(c) >= minPiece {
				m.addForm(sec.Name, c)
			}
		}
	}
	if len(m.forms) == 0 {
		return nil
	}
	return m
}

func (m *masker) addForm(name, v string) {
	f := len(m.forms)
	m.forms = append(m.forms, secretForm{name: name, chars: []rune(v)})
	for k, c := range m.forms[f].chars {
		if c < utf8.RuneSelf {
			m.ascii[c] = append(m.ascii[c], formAt{f, k})
		} else {
			m.other[c] = append(m.other[c], formAt{f, k})
		}
	}
}

// where lists where c stands in the forms.
func (m *masker) where(c rune) []formAt {
	if c >= 0 && c < utf8.RuneSelf {
		return m.ascii[c]
	}
	return m.other[c]
}

// forAgent is the masker for what is returned to the agent of a call whose
// own arguments hold texts: it leaves as they are the runs of secrets that
// those texts hold, in whatever spelling they come back (a query the agent
// wrote comes back percent-encoded in the page's URL). What the agent
// wrote comes back as it wrote it; otherwise a reply would show, by what
// the masker hid of it, whether a guess was a piece of a secret (the
// masker as an oracle). The evidence and the logs are masked in full.
func (m *masker) forAgent(texts []string) *masker {
	if m == nil {
		return nil
	}
	var own []string
	for _, t := range texts {
		if p := plain(t); m.runs(t) != nil || m.runs(p) != nil {
			own = append(own, t, p)
		}
	}
	if own == nil {
		return m
	}
	c := *m
	c.own = own
	return &c
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

// runs are the runs of minPiece or more characters in s, leftmost-longest
// and apart, as a regular expression would find them (regexp.Longest).
// A run lies within a stretch of s whose every byte belongs to a spelling
// of some secret character: most text has no such stretch long enough to
// hold one, and only those that are long enough are searched (runsIn).
func (m *masker) runs(s string) []run {
	var out []run
	var w runsWork
	var sp []spelled
	lo, hi := -1, -1 // the stretch so far, s[lo:hi]
	for p := 0; p <= len(s); p++ {
		end := -1 // where the spellings of secret characters at p end
		switch {
		case p == len(s):
		case s[p] < utf8.RuneSelf && s[p] != '%' && s[p] != '&' && s[p] != '\\' && s[p] != '+':
			if m.ascii[s[p]] != nil { // the common case, quickly
				end = p + 1
			}
		case utf8.RuneStart(s[p]):
			sp = spellingsAt(s, p, sp[:0])
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
			if hi-lo >= minPiece {
				out = m.runsIn(s[:hi], lo, out, &w)
			}
			lo = -1
		}
	}
	return out
}

// runsWork is what runsIn works in, kept from one stretch to the next.
type runsWork struct {
	near  [maxSpelling][]run // near[p%maxSpelling]: the runs from byte p, one per form and character
	found []run              // the longest run of minPiece or more from each byte that has one, last first
	sp    []spelled
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
		if utf8.RuneStart(s[p]) {
			sp = spellingsAt(s, p, sp[:0])
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
// &#x0000000000; is 14.
const maxSpelling = 16

// spelled is character c, spelled in w bytes.
type spelled struct {
	c rune
	w int
}

// spellingsAt appends to out the characters s spells from byte p, each
// with the width of its spelling:
//   - the character as it is;
//   - percent-encoded (URLs): its UTF-8 bytes as %XX, hex digits in
//     either case, and '+' for a space (a form's query);
//   - an HTML character reference: named as the DOM serialises text and
//     attribute values (&amp; &lt; &gt; &quot; &nbsp;, and &apos;), or
//     numeric, decimal or hexadecimal (&#39; &#x27;);
//   - a JSON, JavaScript or Go string escape: \" \\ \/ \', \u003c (a
//     surrogate pair beyond the BMP), \u{3c}, \U0000003c, \x3c.
//
// So a run may mix them: each of its characters is read in every
// spelling that begins where the one before ends.
func spellingsAt(s string, p int, out []spelled) []spelled {
	c, w := utf8.DecodeRuneInString(s[p:])
	out = append(out, spelled{c, w})
	var ok bool
	switch c {
	case '+':
		c, w, ok = ' ', 1, true
	case '%':
		c, w, ok = percentAt(s[p:])
	case '&':
		c, w, ok = referenceAt(s[p:])
	case '\\':
		c, w, ok = escapeAt(s[p:])
	}
	if ok {
		out = append(out, spelled{c, w})
	}
	return out
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
	end := strings.IndexByte(s[:min(len(s), maxSpelling)], ';')
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
			end := strings.IndexByte(s[:min(len(s), maxSpelling)], '}')
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
		x := sp[len(sp)-1] // the escape, if there is one
		b.WriteRune(x.c)
		p += x.w
	}
	return b.String()
}

func (m *masker) mask(s string) string {
	if m == nil || s == "" {
		return s
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

// label is what shows in place of run r, spelled text: the text itself
// when the agent's own texts hold it (forAgent), else [secret NAME] for a
// whole value and [part of secret NAME] for a part.
func (m *masker) label(r run, text string) string {
	if len(m.own) > 0 {
		p := plain(text)
		for _, t := range m.own {
			if strings.Contains(t, text) || strings.Contains(t, p) {
				return text
			}
		}
	}
	f := m.forms[r.form]
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

// maskTurn masks everything of a finished call that is returned, recorded
// or logged.
func (m *masker) maskTurn(t *turn) {
	if m == nil {
		return
	}
	t.out.Text = m.mask(t.out.Text)
	if t.err != nil {
		t.err = &maskedError{msg: m.mask(t.err.Error()), err: t.err}
	}
	if t.deny != nil {
		d := *t.deny
		d.Reason = m.mask(d.Reason)
		t.deny = &d
	}
	if t.facts != nil {
		f := *t.facts
		f.State = *m.maskState(&f.State)
		t.facts = &f
	}
	t.after = m.maskState(t.after)
	for i := range t.blocked {
		t.blocked[i].URL, t.blocked[i].Reason = m.mask(t.blocked[i].URL), m.mask(t.blocked[i].Reason)
	}
	t.verdict.ScopeRule = m.mask(t.verdict.ScopeRule)
}

// maskHandler is a slog.Handler that masks secret values in the message
// and in every attribute before the inner handler sees them.
type maskHandler struct {
	inner slog.Handler
	m     *atomic.Pointer[masker]
}

func (h *maskHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *maskHandler) Handle(ctx context.Context, r slog.Record) error {
	m := h.m.Load()
	if m == nil {
		return h.inner.Handle(ctx, r)
	}
	nr := slog.NewRecord(r.Time, r.Level, m.mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(m.attr(a))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

func (h *maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	m := h.m.Load()
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = m.attr(a)
	}
	return &maskHandler{inner: h.inner.WithAttrs(masked), m: h.m}
}

func (h *maskHandler) WithGroup(name string) slog.Handler {
	return &maskHandler{inner: h.inner.WithGroup(name), m: h.m}
}

func (m *masker) attr(a slog.Attr) slog.Attr {
	if m == nil {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, m.mask(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, e := range g {
			out[i] = m.attr(e)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		return slog.String(a.Key, m.mask(fmt.Sprint(v.Any())))
	}
	return a
}
