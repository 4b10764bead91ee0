package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Secrets are the secrets of one manifest (its [secrets.<NAME>] tables),
// with the rules they are typed, attached and sent by: a secret's value
// goes only to its domains. The agent types the placeholder <NAME>; the
// executor puts the value in (Fill) only as the text is dispatched.
type Secrets struct {
	secrets []*toolclad.Secret
	domains map[*toolclad.Secret][]*scope.Pattern
}

// NewSecrets compiles the domains of the manifest's secrets. An error names
// each domain that is not a valid pattern.
func NewSecrets(m *toolclad.Manifest) (*Secrets, error) {
	ss := &Secrets{secrets: m.Secrets, domains: map[*toolclad.Secret][]*scope.Pattern{}}
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

// Placeholders returns the secrets whose placeholder text contains.
func (ss *Secrets) Placeholders(text string) []*toolclad.Secret {
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
func (ss *Secrets) check(text, docURL string, named bool) error {
	secs := ss.Placeholders(text)
	if len(secs) == 0 {
		return nil
	}
	if !named {
		return pagetext.Ownf("secret %s can only be typed into an element named by ref or selector, not the focused element", secs[0].Name)
	}
	host, err := scope.CanonicalHost(hostOf(docURL))
	if err != nil {
		return pagetext.Ownf("secret %s: the element's page %s has no host it could be allowed on", secs[0].Name, pagetext.Value(strconv.Quote(docURL)))
	}
	if sec := ss.outside(secs, host); sec != nil {
		return pagetext.Ownf("secret %s may only be typed on %s, and this element's page is on %s", sec.Name, strings.Join(sec.Domains, ", "), pagetext.Value(host))
	}
	return nil
}

// OnDomains reports whether host, canonical (scope.CanonicalHost), is on
// one of sec's domains. A nil set holds no domains.
func (ss *Secrets) OnDomains(sec *toolclad.Secret, host string) bool {
	if ss == nil {
		return false
	}
	return slices.ContainsFunc(ss.domains[sec], func(p *scope.Pattern) bool { return p.Match(host) })
}

// outside is the first of secs whose domains do not hold host, or nil.
func (ss *Secrets) outside(secs []*toolclad.Secret, host string) *toolclad.Secret {
	for _, sec := range secs {
		if !slices.ContainsFunc(ss.domains[sec], func(p *scope.Pattern) bool { return p.Match(host) }) {
			return sec
		}
	}
	return nil
}

// mayAttach says whether a file that holds the values of secs may be
// attached to a file input of the page at docURL: as a typed value, only
// on every such secret's domains.
func (ss *Secrets) mayAttach(name string, secs []*toolclad.Secret, docURL string) error {
	host, err := scope.CanonicalHost(hostOf(docURL))
	if err != nil {
		return pagetext.Ownf("file %s holds the value of secret %s, and the page %s has no host it could be allowed on", pagetext.Value(strconv.Quote(name)), secs[0].Name, pagetext.Value(strconv.Quote(docURL)))
	}
	if sec := ss.outside(secs, host); sec != nil {
		return pagetext.Ownf("file %s holds the value of secret %s, which may only go to %s, and this page is on %s", pagetext.Value(strconv.Quote(name)), sec.Name, strings.Join(sec.Domains, ", "), pagetext.Value(host))
	}
	return nil
}

// HeldInBytes lists the secrets whose value b holds, as it is.
func (ss *Secrets) HeldInBytes(b []byte) []*toolclad.Secret {
	if ss == nil {
		return nil
	}
	var out []*toolclad.Secret
	for _, sec := range ss.secrets {
		if v := sec.Value(); v != "" && bytes.Contains(b, []byte(v)) {
			out = append(out, sec)
		}
	}
	return out
}

// HeldIn lists the secrets whose value the file at path holds, as it is
// (a file carries bytes, not a URL's or a page's spellings).
func (ss *Secrets) HeldIn(path string) ([]*toolclad.Secret, error) {
	if ss == nil {
		return nil, nil
	}
	longest := 0
	for _, sec := range ss.secrets {
		longest = max(longest, len(sec.Value()))
	}
	if longest == 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read in chunks, each after the last longest-1 bytes of the one
	// before, so that a value across two chunks is found.
	buf := make([]byte, 0, 1<<20+longest)
	found := map[*toolclad.Secret]bool{}
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for _, sec := range ss.secrets {
			if v := sec.Value(); v != "" && bytes.Contains(buf, []byte(v)) {
				found[sec] = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		keep := min(len(buf), longest-1)
		buf = append(buf[:0], buf[len(buf)-keep:]...)
	}
	var out []*toolclad.Secret
	for _, sec := range ss.secrets {
		if found[sec] {
			out = append(out, sec)
		}
	}
	return out, nil
}

// onlyPlaceholders reports whether text is made of secret placeholders
// and nothing else (so recording it as typed reveals nothing).
func (ss *Secrets) onlyPlaceholders(text string) bool {
	secs := ss.Placeholders(text)
	if len(secs) == 0 {
		return false
	}
	for _, sec := range secs {
		text = strings.ReplaceAll(text, sec.Placeholder(), "")
	}
	return strings.TrimSpace(text) == ""
}

// Fill puts the values in place of the placeholders.
func (ss *Secrets) Fill(text string) string {
	for _, sec := range ss.Placeholders(text) {
		text = strings.ReplaceAll(text, sec.Placeholder(), sec.Value())
	}
	return text
}

// hostOf is the host of a URL as package scope canonicalises it ("": none).
func hostOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// MayType says whether text may be typed into the element observe found:
// a secret placeholder goes only into a text field named by ref or
// selector whose page is on every such secret's domains.
func (ss *Secrets) MayType(text string, el *Element) error {
	secs := ss.Placeholders(text)
	if len(secs) == 0 {
		return nil
	}
	if !el.Named {
		return ss.check(text, "", false)
	}
	if el.FieldErr != nil {
		return pagetext.Ownf("cannot tell which page the element is on, so no secret is typed: %s", pagetext.Value(el.FieldErr.Error()))
	}
	if !el.Field.Field {
		return pagetext.Ownf("secret %s can only be typed into a text field (input, textarea or contenteditable), and %s is a <%s>", secs[0].Name, pagetext.Value(el.Label), pagetext.Value(el.Field.Tag))
	}
	for _, sec := range secs {
		if !el.Field.Password && sec.Fields != toolclad.SecretFieldsText {
			return pagetext.Ownf("secret %s goes only into password fields, and %s is not one (the manifest may allow text fields: fields = \"text\")", sec.Name, pagetext.Value(el.Label))
		}
	}
	if el.Field.MaxLength >= 0 && el.Field.MaxLength < len([]rune(ss.Fill(text))) {
		return pagetext.Ownf("%s keeps at most %d characters, too few for the text with secret %s: the page would hold, and show, a part of it", pagetext.Value(el.Label), el.Field.MaxLength, secs[0].Name)
	}
	return ss.check(text, el.Field.URL, true)
}

// maySubmitTo refuses a submission to dest when a secret typed on this
// page (typed) may not go to dest's host: typing is held to a secret's
// domains, and so is where the form sends it.
func (ss *Secrets) maySubmitTo(typed []*toolclad.Secret, dest string) error {
	if len(typed) == 0 {
		return nil
	}
	host, err := scope.CanonicalHost(hostOf(dest))
	for _, sec := range typed {
		if err != nil || !slices.ContainsFunc(ss.domains[sec], func(p *scope.Pattern) bool { return p.Match(host) }) {
			return pagetext.Ownf("secret %s was typed on this page, and the form would send it to %s, outside %s", sec.Name, pagetext.Value(dest), strings.Join(sec.Domains, ", "))
		}
	}
	return nil
}

// TypedSecrets are the secrets typed into the tab's current page: a form
// submission from it is held to their domains. They are forgotten when the
// page navigates.
type TypedSecrets struct {
	secrets []*toolclad.Secret
	navs    int // the tab's navigation count when they were typed
}

// On returns the secrets typed on the page the tab shows after navs
// navigations.
func (ts *TypedSecrets) On(navs int) []*toolclad.Secret {
	if ts.navs != navs {
		return nil
	}
	return ts.secrets
}

// Note remembers secrets typed on the page shown after navs navigations.
func (ts *TypedSecrets) Note(secs []*toolclad.Secret, navs int) {
	if ts.navs != navs {
		*ts = TypedSecrets{navs: navs}
	}
	for _, sec := range secs {
		if !slices.Contains(ts.secrets, sec) {
			ts.secrets = append(ts.secrets, sec)
		}
	}
}
