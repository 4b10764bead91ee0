package toolclad

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Secret is one [secrets.<NAME>] table (a browsergate extension): a value
// the agent never sees. The agent types the placeholder <NAME>; the
// executor puts the value in only when the page is on one of Domains, and
// masks it back out of everything it returns, records or logs.
type Secret struct {
	// Name is the table's key, upper case: the agent writes <Name>.
	Name string
	// Env or File is where the value comes from (exactly one is set); a
	// file's trailing newline is dropped.
	Env, File string
	// Domains are the domain globs (as in allowed_domains) of the pages the
	// value may be typed into.
	Domains []string
	// Fields is the kind of field the value may be typed into:
	// SecretFieldsPassword (the default: password fields only, whose
	// value a page shows as dots) or SecretFieldsText (any text field).
	Fields string

	value string
	// answered: the operator gave the value while a session ran
	// (AnsweredSecret), rather than the manifest.
	answered bool
}

// Value is the secret itself. It is read when the manifest is loaded and
// never printed by this package.
func (s *Secret) Value() string { return s.value }

// Placeholder is what the agent types: "<NAME>".
func (s *Secret) Placeholder() string { return "<" + s.Name + ">" }

// String names the secret without its value, so that printing a Secret
// (or a Manifest) by accident leaks nothing.
func (s *Secret) String() string { return "secret " + s.Name }

// GoString is String, for %#v.
func (s *Secret) GoString() string { return s.String() }

// The values of a secret's fields key.
const (
	SecretFieldsPassword = "password"
	SecretFieldsText     = "text"
)

// minSecretLen is the shortest value accepted: masking a shorter string
// would mangle ordinary output and hide nothing worth hiding.
const minSecretLen = 6

var secretName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

func decodeSecrets(t *table, m *Manifest) {
	for _, name := range slices.Sorted(maps.Keys(t.m)) {
		st := t.sub(name)
		if !secretName.MatchString(name) {
			t.r.errorf(t.at(name), "%q cannot name a secret: use upper-case letters, digits and '_' (the agent types <%s>)", name, name)
			continue
		}
		s := &Secret{Name: name, Fields: SecretFieldsPassword}
		hasEnv, hasFile := st.str("env", &s.Env), st.str("file", &s.File)
		st.oneOf("fields", &s.Fields, SecretFieldsPassword, SecretFieldsText)
		if pats, ok := domainPatterns(st, "domains"); ok {
			s.Domains = pats
		}
		switch {
		case hasEnv == hasFile:
			t.r.errorf(t.at(name), "give exactly one of env or file, where the value of %s is read from", name)
		case len(s.Domains) == 0 && !st.has("domains"):
			t.r.errorf(t.at(name), "needs domains: the pages %s may be typed into", name)
		case len(s.Domains) == 0:
			t.r.errorf(t.at(name).child("domains"), "is empty: %s could be typed nowhere", name)
		default:
			if err := s.read(filepath.Dir(t.r.file)); err != nil {
				t.r.errorf(t.at(name), "%v", err)
			} else {
				m.Secrets = append(m.Secrets, s)
			}
		}
		st.done()
	}
}

// read loads the value; a relative file is relative to the manifest.
func (s *Secret) read(dir string) error {
	if s.Env != "" {
		v, ok := os.LookupEnv(s.Env)
		if !ok {
			return fmt.Errorf("environment variable %s, the value of secret %s, is not set", s.Env, s.Name)
		}
		s.value = v
	} else {
		path := s.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("secret %s: %v", s.Name, err)
		}
		s.value = strings.TrimRight(string(b), "\r\n")
	}
	if strings.IndexFunc(s.value, func(r rune) bool { return unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("secret %s contains a control character: it could not be typed or masked reliably", s.Name)
	}
	if len(s.value) < minSecretLen {
		return fmt.Errorf("secret %s is shorter than %d characters: too short to mask reliably", s.Name, minSecretLen)
	}
	return nil
}
