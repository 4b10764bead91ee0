package scope

import "strings"

// URLPatternHost returns the pattern as the hostname component of a
// URLPattern (https://urlpattern.spec.whatwg.org/, the syntax Chromium's
// DevTools rules take) when there is one that matches exactly the hosts the
// pattern matches: a literal host name or IPv4 address, or "*." before a
// literal domain. ok is false for every other shape (a bare "*", a
// wildcard inside a label or after the name, an IPv6 literal), whose
// URLPattern would match more or other hosts.
func (p *Pattern) URLPatternHost() (host string, ok bool) {
	switch {
	case p.all || p.anySuffix:
		return "", false
	case p.exact != "":
		if strings.HasPrefix(p.exact, "[") {
			return "", false
		}
		return p.exact, true
	case p.anyPrefix:
		for _, l := range p.mid {
			if strings.Contains(l, "*") {
				return "", false
			}
		}
		return "*." + strings.Join(p.mid, "."), true
	}
	return "", false
}

// Domains returns the compiled allowed_domains and blocked_domains entries
// and whether allow_external is set, for a caller that must express the
// scope in another form (and fail closed where it cannot).
func (s *Scope) Domains() (allowed, blocked []*Pattern, external bool) {
	if s == nil {
		return nil, nil, false
	}
	return s.allowed, s.blocked, s.allowExternal
}
