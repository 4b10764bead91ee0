package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

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
// replaces the value (also URL-, HTML- and JSON-escaped) with
// [secret NAME]. Screenshots are pixels: a page that shows a secret in
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

// masker replaces secret values, in every form they are likely to take in
// text, with [secret NAME]. A nil masker masks nothing.
type masker struct {
	r     *strings.Replacer
	pairs []string // from, to, … in the order the replacer tries them
}

func newMasker(ms []*toolclad.Manifest) *masker {
	var pairs []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, sec := range m.Secrets {
			v, label := sec.Value(), "[secret "+sec.Name+"]"
			for _, form := range secretForms(v) {
				if form != "" && !seen[form] {
					seen[form] = true
					pairs = append(pairs, form, label)
				}
			}
			// Every piece of the value too: a field that kept a prefix, a
			// page that shows a part of it, a selector that tests a
			// prefix. Longer forms are tried first (below), so the whole
			// value is still named as such.
			for _, piece := range secretPieces(v) {
				for _, p := range []string{piece, inert(piece)} {
					if !seen[p] {
						seen[p] = true
						pairs = append(pairs, p, "[part of secret "+sec.Name+"]")
					}
				}
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// strings.Replacer tries the pairs in order at each position: longer
	// forms first, so that a value inside its own escaped form is not
	// half-replaced.
	type pair struct{ from, to string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	slices.SortStableFunc(ps, func(a, b pair) int { return len(b.from) - len(a.from) })
	args := make([]string, 0, len(pairs))
	for _, p := range ps {
		args = append(args, p.from, p.to)
	}
	return &masker{r: strings.NewReplacer(args...), pairs: args}
}

// forAgent is the masker for what is returned to the agent of a call whose
// own arguments hold texts: it leaves out the forms and pieces of secrets
// that those texts contain. What the agent wrote comes back as it wrote
// it; otherwise a reply would show, by what the masker hid of it, whether
// a guess was a piece of a secret (the masker as an oracle). The evidence
// and the logs are masked in full.
func (m *masker) forAgent(texts []string) *masker {
	if m == nil {
		return nil
	}
	hit := false
	for _, t := range texts {
		if m.r.Replace(t) != t {
			hit = true
			break
		}
	}
	if !hit {
		return m
	}
	// A text of the agent's may come back inert (reply.go): left as it
	// comes back, too.
	texts = slices.Clone(texts)
	for _, t := range texts {
		if g := inert(t); g != t {
			texts = append(texts, g)
		}
	}
	var kept []string
	for i := 0; i < len(m.pairs); i += 2 {
		if !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, m.pairs[i]) }) {
			kept = append(kept, m.pairs[i], m.pairs[i+1])
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &masker{r: strings.NewReplacer(kept...), pairs: kept}
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

// minPiece and maxPiece bound the pieces of a secret value that are
// masked on their own: every run of minPiece to maxPiece characters (a
// longer run is masked piece by piece).
const (
	minPiece = 6
	maxPiece = 32
)

// secretPieces are the runs of minPiece to maxPiece characters of v.
func secretPieces(v string) []string {
	r := []rune(v)
	var out []string
	for n := minPiece; n <= maxPiece && n < len(r); n++ {
		for i := 0; i+n <= len(r); i++ {
			out = append(out, string(r[i:i+n]))
		}
	}
	return out
}

// secretForms are the spellings a value takes in what browsergate returns
// or records: as typed; URL-escaped (a form's GET query, a logged URL);
// HTML-escaped as the DOM serialises text and attributes (extract_html);
// JSON-escaped with and without HTML escaping (structured results,
// evidence); Go-quoted (snapshot values).
func secretForms(v string) []string {
	jsonInner := func(escapeHTML bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		enc.Encode(v)
		out := strings.TrimSuffix(b.String(), "\n")
		return out[1 : len(out)-1]
	}
	text := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(v)
	attr := strings.NewReplacer("&", "&amp;", "\"", "&quot;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(v)
	attrOld := strings.NewReplacer("&", "&amp;", "\"", "&quot;", "\u00a0", "&nbsp;").Replace(v)
	quoted := strconv.Quote(v)
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v), formURLEncode(v), html.EscapeString(v), text, attr, attrOld,
		jsonInner(true), jsonInner(false), quoted[1 : len(quoted)-1], collapse(v)}
	// Percent-escapes may come in either case.
	for _, f := range forms[1:4] {
		forms = append(forms, lowerHexEscapes(f))
	}
	// Inert (reply.go), as what the page chose reads in browsergate's own
	// lines: brackets and line breaks escaped.
	for _, f := range forms {
		if g := inert(f); g != f {
			forms = append(forms, g)
		}
	}
	return forms
}

// formURLEncode is the URL Standard's application/x-www-form-urlencoded
// serialisation, as a browser sends a GET form: ASCII letters, digits and
// *-._ stay, a space is '+', every other byte is %XX (Go's QueryEscape
// differs on '~' and '*').
func formURLEncode(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerHexEscapes rewrites %XX escapes with lower-case hex digits.
func lowerHexEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

func (m *masker) mask(s string) string {
	if m == nil || s == "" {
		return s
	}
	return m.r.Replace(s)
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
