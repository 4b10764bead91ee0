package executor

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// secretBinding holds a document that a secret was typed into to the
// secret's domains: from the moment the value is in the page, every
// request the session's pages, frames and workers send goes only to hosts
// every typed secret may go to, until the tab leaves that document. The
// page's own script could otherwise read the value and send it anywhere
// the scope allows (fetch, a form whose action a handler rewrites). It is
// enforced on the requests themselves: by request interception, and by
// the session's egress proxy (WebSockets are not intercepted).
//
// The tab's document is told by its generation: the count of its
// main-frame commits, kept by the session's target guard on the same
// connection and in the same order as the requests it intercepts. The
// agent's own navigation away (navigate, go_back) is let through: it ends
// the document, and the binding with it.
type secretBinding struct {
	mu      sync.Mutex
	set     bool  // a secret was typed (into the document of generation gen)
	gen     int64 // the document generation the secrets were typed into
	secrets []*toolclad.Secret
	domains map[*toolclad.Secret][]*scope.Pattern
	// leaving are the hosts the agent's own navigation away from the
	// document goes to (each hop, as interception lets it through): the
	// proxy lets connections to them through while the agent navigates,
	// and nothing else.
	leaving map[string]bool
	// left is when the tab committed another document after the bound
	// one: for a moment after, a beacon is still the old document's (its
	// pagehide and unload handlers run as the new one commits).
	left time.Time
}

// leftGrace is how long after the tab left a document a beacon (a
// request of resource type Ping) is still held to that document's secrets.
const leftGrace = 2 * time.Second

// committed notes that the tab committed the document of generation gen.
func (b *secretBinding) committed(gen int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.set && gen != b.gen && b.left.IsZero() {
		b.left = time.Now()
	}
}

// judgeBeacon refuses a beacon to host sent just after the tab left a
// document a secret was typed into, outside the secret's domains.
func (b *secretBinding) judgeBeacon(host string) (scope.Verdict, bool) {
	if b == nil {
		return scope.Verdict{}, false
	}
	b.mu.Lock()
	gen, recent := b.gen, b.set && !b.left.IsZero() && time.Since(b.left) < leftGrace
	b.mu.Unlock()
	if !recent {
		return scope.Verdict{}, false
	}
	return b.judge(host, gen)
}

// leave records a host the agent's navigation away from the document goes
// to.
func (b *secretBinding) leave(host string) {
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

// isLeavingTo reports whether the agent's navigation away goes to host.
func (b *secretBinding) isLeavingTo(host string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leaving[host]
}

// bind adds secrets typed into the document of generation gen.
func (b *secretBinding) bind(gen int64, secs []*toolclad.Secret, domains map[*toolclad.Secret][]*scope.Pattern) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.set || b.gen != gen {
		b.set, b.gen, b.secrets, b.leaving, b.left = true, gen, nil, nil, time.Time{}
	}
	b.domains = domains
	for _, s := range secs {
		if !slices.Contains(b.secrets, s) {
			b.secrets = append(b.secrets, s)
		}
	}
}

// ruleSecretBound is the rule a request refused by the binding names.
const ruleSecretBound = "secret domains"

// judge refuses host (canonical) when the document of generation gen holds
// a typed secret that may not go there. ok is false when the binding has
// nothing to say.
func (b *secretBinding) judge(host string, gen int64) (scope.Verdict, bool) {
	if b == nil {
		return scope.Verdict{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.set || b.gen != gen || len(b.secrets) == 0 {
		return scope.Verdict{}, false
	}
	h, err := scope.CanonicalHost(host)
	for _, sec := range b.secrets {
		if err != nil || !slices.ContainsFunc(b.domains[sec], func(p *scope.Pattern) bool { return p.Match(h) }) {
			return scope.Verdict{Host: host, Rule: ruleSecretBound,
				Reason: fmt.Sprintf("secret %s was typed into this page, which may then send requests only to %s, not to %s",
					sec.Name, strings.Join(sec.Domains, ", "), host)}, true
		}
	}
	return scope.Verdict{}, false
}
