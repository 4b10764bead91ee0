package gate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// With returns the secrets of ss and sec (a secret answer the operator
// gave a session: toolclad.AnsweredSecret), held to the same rules: ss
// itself is left as it is, since it is shared by every session of the
// manifest and the answer is one session's. A domain that is not a valid
// pattern is an error, and nothing is added.
func (ss *Secrets) With(sec *toolclad.Secret) (*Secrets, error) {
	out := &Secrets{domains: map[*toolclad.Secret][]*scope.Pattern{}}
	if ss != nil {
		out.secrets = slices.Clone(ss.secrets)
		maps.Copy(out.domains, ss.domains)
	}
	for _, d := range sec.Domains {
		p, err := scope.ParsePattern(d)
		if err != nil {
			return nil, fmt.Errorf("secret %s: domain %q: %w", sec.Name, d, err)
		}
		out.domains[sec] = append(out.domains[sec], p)
	}
	out.secrets = append(out.secrets, sec)
	return out, nil
}

// All are the secrets of the set, the manifest's first.
func (ss *Secrets) All() []*toolclad.Secret {
	if ss == nil {
		return nil
	}
	return slices.Clone(ss.secrets)
}
