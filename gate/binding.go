package gate

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// SecretBinding holds a session's pages to the domains of the secrets
// typed in it. From the moment a secret is typed (before the value is in
// the page: its input handlers run as it is typed), and for as long as the
// tab is on a page of that secret's domains — the page it was typed into,
// and any page of the site the tab goes to next, which can read what the
// first one stored — every request of the session's pages, frames and
// workers goes only to hosts every such secret may go to. It is enforced
// on the requests themselves: by request interception, and by the
// session's egress proxy (WebSockets are not intercepted).
//
// Let through: a redirect hop of a navigation (the server's decision, not
// the page's), and the agent's own navigation away (navigate, go_back),
// to the hosts interception sees it go to. When the tab leaves the
// secret's domains, the session's popups are closed (they could hold the
// value), and a beacon the old page sends as it goes is still held for a
// moment.
type SecretBinding struct {
	// Now is the binding's clock (nil: time.Now): when the tab left the
	// secrets' domains, and how long ago that was.
	Now func() time.Time

	mu      sync.Mutex
	secrets []*toolclad.Secret // typed in this session
	domains map[*toolclad.Secret][]*scope.Pattern
	// tabHost is the host of the tab's current document (the target guard
	// sets it at each commit, in order with the requests it judges).
	tabHost string
	// leaving are the hosts the tab's navigation goes to — the agent's own
	// navigation away, a server's redirect — as interception let it
	// through: until the tab commits, the proxy lets connections to them
	// through.
	leaving map[string]bool
	// left is when the tab left the secrets' domains.
	left time.Time
}

// now is the binding's clock; b.mu held.
func (b *SecretBinding) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// LeftGrace is how long after the tab left the secrets' domains a beacon
// (a request of resource type Ping) is still held to them: the old page's
// pagehide and unload handlers run as the new one commits.
const LeftGrace = 2 * time.Second

// Bind adds secrets of set typed into the page on host.
func (b *SecretBinding) Bind(host string, secs []*toolclad.Secret, set *Secrets) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.domains, b.tabHost, b.left = set.domains, host, time.Time{}
	for _, s := range secs {
		if !slices.Contains(b.secrets, s) {
			b.secrets = append(b.secrets, s)
		}
	}
}

// on returns the typed secrets whose domains host is in; b.mu held.
func (b *SecretBinding) on(host string) []*toolclad.Secret {
	h, err := scope.CanonicalHost(host)
	if err != nil {
		return nil
	}
	var out []*toolclad.Secret
	for _, s := range b.secrets {
		if slices.ContainsFunc(b.domains[s], func(p *scope.Pattern) bool { return p.Match(h) }) {
			out = append(out, s)
		}
	}
	return out
}

// Committed notes that the tab committed a document on host. It reports
// whether the tab has just left the secrets' domains (its popups are then
// closed).
func (b *SecretBinding) Committed(host string) (left bool) {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	was := len(b.on(b.tabHost)) > 0
	if host == "" && was {
		// about:blank (the page emptied before the agent leaves, or a
		// page blanking itself): it inherits the page it replaced, and
		// whatever that page still sends is judged as the page's.
		return false
	}
	b.tabHost, b.leaving = host, nil
	if was && len(b.on(host)) == 0 {
		b.left = b.now()
		return true
	}
	if len(b.on(host)) > 0 {
		b.left = time.Time{}
	}
	return false
}

// Leave records a host the agent's navigation away goes to.
func (b *SecretBinding) Leave(host string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leaving == nil {
		b.leaving = map[string]bool{}
	}
	b.leaving[host] = true
}

// HoldsAgainst reports whether the tab is on a page of a typed secret's
// domains and host is outside the domains of one of those secrets.
func (b *SecretBinding) HoldsAgainst(host string) bool {
	_, held := b.Judge(host, false)
	return held
}

// HeldHere returns the typed secrets whose domains the tab is on: the
// page the value was typed into, or a later page of the site, which may
// hold it too (a server that echoes it back, storage).
func (b *SecretBinding) HeldHere() []*toolclad.Secret {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.on(b.tabHost)
}

// IsLeavingTo reports whether the agent's navigation away goes to host.
func (b *SecretBinding) IsLeavingTo(host string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leaving[host]
}

// RuleSecretBound is the rule a request refused by the binding names.
const RuleSecretBound = "secret domains"

// Judge refuses a request to host while the tab is on a page of a typed
// secret's domains and host is outside them; beacon: the request is a
// beacon, held for a moment after the tab left too. ok is false when the
// binding has nothing to say.
func (b *SecretBinding) Judge(host string, beacon bool) (scope.Verdict, bool) {
	if b == nil {
		return scope.Verdict{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bound := b.on(b.tabHost)
	if len(bound) == 0 && beacon && !b.left.IsZero() && b.now().Sub(b.left) < LeftGrace {
		bound = b.secrets
	}
	if len(bound) == 0 {
		return scope.Verdict{}, false
	}
	h, err := scope.CanonicalHost(host)
	for _, sec := range bound {
		if err != nil || !slices.ContainsFunc(b.domains[sec], func(p *scope.Pattern) bool { return p.Match(h) }) {
			return scope.Verdict{Host: host, Rule: RuleSecretBound,
				Reason: fmt.Sprintf("secret %s was typed on this site, whose pages may then send requests only to %s, not to %s",
					sec.Name, strings.Join(sec.Domains, ", "), host)}, true
		}
	}
	return scope.Verdict{}, false
}

// Typed are the secrets typed in the session.
func (b *SecretBinding) Typed() []*toolclad.Secret {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.secrets)
}

// Host is the host of the tab's current document.
func (b *SecretBinding) Host() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tabHost
}

// Holding are the secrets the binding holds the tab's requests to now:
// the tab is on their domains, or left them a moment ago (Judge).
func (b *SecretBinding) Holding() []*toolclad.Secret {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if held := b.on(b.tabHost); len(held) > 0 {
		return held
	}
	if !b.left.IsZero() && b.now().Sub(b.left) < LeftGrace {
		return slices.Clone(b.secrets)
	}
	return nil
}
