package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// secretBinding holds a session's pages to the domains of the secrets
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
type secretBinding struct {
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

// leftGrace is how long after the tab left the secrets' domains a beacon
// (a request of resource type Ping) is still held to them: the old page's
// pagehide and unload handlers run as the new one commits.
const leftGrace = 2 * time.Second

// bind adds secrets typed into the page on host.
func (b *secretBinding) bind(host string, secs []*toolclad.Secret, domains map[*toolclad.Secret][]*scope.Pattern) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.domains, b.tabHost, b.left = domains, host, time.Time{}
	for _, s := range secs {
		if !slices.Contains(b.secrets, s) {
			b.secrets = append(b.secrets, s)
		}
	}
}

// on returns the typed secrets whose domains host is in; b.mu held.
func (b *secretBinding) on(host string) []*toolclad.Secret {
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

// committed notes that the tab committed a document on host. It reports
// whether the tab has just left the secrets' domains (its popups are then
// closed).
func (b *secretBinding) committed(host string) (left bool) {
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
		b.left = time.Now()
		return true
	}
	if len(b.on(host)) > 0 {
		b.left = time.Time{}
	}
	return false
}

// leave records a host the agent's navigation away goes to.
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

// holdsAgainst reports whether the tab is on a page of a typed secret's
// domains and host is outside the domains of one of those secrets.
func (b *secretBinding) holdsAgainst(host string) bool {
	_, held := b.judge(host, false)
	return held
}

// heldHere returns the typed secrets whose domains the tab is on: the
// page the value was typed into, or a later page of the site, which may
// hold it too (a server that echoes it back, storage).
func (b *secretBinding) heldHere() []*toolclad.Secret {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.on(b.tabHost)
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

// ruleSecretBound is the rule a request refused by the binding names.
const ruleSecretBound = "secret domains"

// judge refuses a request to host while the tab is on a page of a typed
// secret's domains and host is outside them; beacon: the request is a
// beacon, held for a moment after the tab left too. ok is false when the
// binding has nothing to say.
func (b *secretBinding) judge(host string, beacon bool) (scope.Verdict, bool) {
	if b == nil {
		return scope.Verdict{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bound := b.on(b.tabHost)
	if len(bound) == 0 && beacon && !b.left.IsZero() && time.Since(b.left) < leftGrace {
		bound = b.secrets
	}
	if len(bound) == 0 {
		return scope.Verdict{}, false
	}
	h, err := scope.CanonicalHost(host)
	for _, sec := range bound {
		if err != nil || !slices.ContainsFunc(b.domains[sec], func(p *scope.Pattern) bool { return p.Match(h) }) {
			return scope.Verdict{Host: host, Rule: ruleSecretBound,
				Reason: fmt.Sprintf("secret %s was typed on this site, whose pages may then send requests only to %s, not to %s",
					sec.Name, strings.Join(sec.Domains, ", "), host)}, true
		}
	}
	return scope.Verdict{}, false
}

// emptyDrain is how long the tab stays on about:blank after the page a
// secret was typed on gave way: what the old page's last handlers started
// arrives, under the binding, before the agent's navigation lets its
// destination host through.
const emptyDrain = 150 * time.Millisecond

// emptyBeforeLeaving is done before the agent's own navigation (navigate,
// go_back) takes the tab from a page a secret was typed on to dest, a URL
// outside the secret's domains: the session's popups are closed, and the
// page is emptied. Without it the old page's pagehide and
// unload handlers run after the new page commits (a cross-site navigation
// unloads the old page in its own process, later), when the binding no
// longer holds: a WebSocket opened there reached the other host. So the
// page is first replaced by about:blank — a navigation of the browser's,
// which the page cannot cancel or turn elsewhere, checked to have
// committed — and its handlers run while the binding still holds. An error leaves the tab
// where it was and refuses the navigation.
func (s *session) emptyBeforeLeaving(ctx context.Context, dest string) error {
	u, err := scope.ParseURL(dest)
	if err != nil || !s.egress.bound.holdsAgainst(u.Host) {
		return nil
	}
	ic := s.egress.ic.Load()
	if ic == nil {
		return nil
	}
	// The session's popups may hold the value too (a page can write into
	// a popup it opened): they are closed while still held, before and
	// again after the page is emptied (its handlers may open one as it
	// goes).
	if err := s.closePopups(ctx); err != nil {
		return err
	}
	// A browser-initiated navigation, which the page cannot cancel or
	// redirect (its navigate event is not cancelable).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Errorf("empty the page a secret was typed on before leaving it: %w", err)
	}
	hist, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{})
	if err != nil || hist.CurrentIndex < 0 || int(hist.CurrentIndex) >= len(hist.Entries) ||
		hist.Entries[hist.CurrentIndex].URL != "about:blank" {
		return fmt.Errorf("the page a secret was typed on did not give way to about:blank (%v); the tab was not navigated", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(emptyDrain):
	}
	return s.closePopups(ctx)
}

// closePopups closes the session's pages other than its tab, but for the
// user's tabs it adopted: those are the user's, and stay (the guard holds
// everything they send once the tab has left the site: doomed).
func (s *session) closePopups(ctx context.Context) error {
	pages, err := s.pages(ctx)
	if err != nil {
		return fmt.Errorf("list the session's pages before leaving the page a secret was typed on: %w", err)
	}
	var popups []target.ID
	for _, p := range pages {
		if p.TargetID != s.tab.targetID() && s.tabOwner(p.TargetID) != ownerUser {
			popups = append(popups, p.TargetID)
		}
	}
	if err := s.tab.closePages(ctx, popups); err != nil {
		return fmt.Errorf("close the session's popups before leaving the page a secret was typed on: %w", err)
	}
	return nil
}

// emptyUserTab empties the current tab before the session lets it go when
// it is a user's tab and a secret the agent typed may be in it (the tab is
// on a page of the secret's domains): once let go, no binding holds what
// its pages send. The navigation to about:blank runs while the tab is
// still guarded; the user finds it blank instead of holding the value.
func (s *session) emptyUserTab(ctx context.Context) {
	cur := s.tab.targetID()
	if cur == "" || !s.tab.open() || s.tabOwner(cur) != ownerUser || len(s.egress.bound.heldHere()) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		s.backend.logger.Warn("a user's tab a secret was typed into could not be emptied before the session let it go", "tab", string(cur), "error", err)
	}
}
