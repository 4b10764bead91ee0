package executor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Tabs as the agent sees them (list_tabs): the session's own pages, and in
// the user's browser context the user's tabs whose URL the scope allows.
// A user's tab outside the scope is never named — no URL, no title — only
// counted.

// Tab owners.
const (
	ownerSession = "session" // the session's tab, a tab it opened, a popup its pages opened
	ownerUser    = "user"    // a tab of the user's own, in the user's context
)

// tabInfo is one tab in a listing.
type tabInfo struct {
	ID     string // short id, stable for the session's lifetime ("t1", "t2", ...)
	Target target.ID
	URL    string
	Title  string
	Owner  string
	Active bool // the session's current tab
	Home   bool // the session's first tab, which closes when the session ends
	// Context is the browser context the tab is in ("c1", ...), when the
	// session has more than one (contexts.go); "" otherwise.
	Context string
}

// tabIDs hands out the short tab ids of a session: a target keeps its id
// for the session's lifetime, and an id is never given to another target.
type tabIDs struct {
	ids  map[target.ID]string
	next int
}

func (b *tabIDs) id(t target.ID) string {
	if b.ids == nil {
		b.ids = map[target.ID]string{}
	}
	if id, ok := b.ids[t]; ok {
		return id
	}
	b.next++
	id := fmt.Sprintf("t%d", b.next)
	b.ids[t] = id
	return id
}

// sort puts tabs in the order the session first saw them (the order of
// their ids: a tab the session opens gets its id as it opens), so that
// list_tabs keeps one order across calls: the browser's own target list
// reorders itself as tabs are activated.
func (b *tabIDs) sort(tabs []tabInfo) {
	slices.SortStableFunc(tabs, func(x, y tabInfo) int { return cmp.Compare(idNumber(x.ID), idNumber(y.ID)) })
}

// idNumber is the number of a short tab id ("t3": 3).
func idNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "t"))
	return n
}

// target returns the target an id was given to.
func (b *tabIDs) target(id string) (target.ID, bool) {
	for t, i := range b.ids {
		if i == id {
			return t, true
		}
	}
	return "", false
}

// tabListing decides which tabs the agent is shown. all is the browser's
// target list; ours the session's pages (sessionPages); current the
// session's tab. In the user's context (user) a page of the session tab's
// browser context that is not the session's is the user's, shown when
// inScope allows its URL (and it is a web page: http or https), else only
// counted in hidden, as is a page of another session's (others). Pages of
// other browser contexts (another session's,
// another program's) are neither shown nor counted.
func tabListing(all []*target.Info, ours []*target.Info, current target.ID, user bool,
	inScope func(url string) bool, ids *tabIDs, others map[target.ID]bool) (shown []tabInfo, hidden int) {
	own := map[target.ID]bool{}
	for _, t := range ours {
		own[t.TargetID] = true
		shown = append(shown, tabInfo{ID: ids.id(t.TargetID), Target: t.TargetID, URL: t.URL, Title: t.Title,
			Owner: ownerSession, Active: t.TargetID == current})
	}
	if !user {
		ids.sort(shown)
		return shown, 0
	}
	var context string
	for _, t := range all {
		if t.TargetID == current {
			context = string(t.BrowserContextID)
		}
	}
	for _, t := range all {
		if t.Type != "page" || own[t.TargetID] || context == "" || string(t.BrowserContextID) != context {
			continue
		}
		if !isWebURL(t.URL) || !inScope(t.URL) || others[t.TargetID] {
			// Outside the scope, not a web page, or another session's.
			hidden++
			continue
		}
		shown = append(shown, tabInfo{ID: ids.id(t.TargetID), Target: t.TargetID, URL: t.URL, Title: t.Title, Owner: ownerUser})
	}
	ids.sort(shown)
	return shown, hidden
}

// isWebURL reports whether u is an http or https URL.
func isWebURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// sessionTabs are a session's tabs besides the current one (session.tab).
type sessionTabs struct {
	// home is the tab the session opened first; homeCtx its chromedp
	// context, the parent of the contexts attached to the other tabs
	// (they share its DevTools connection). Its cancellation ends the
	// session's guard, so home closes last (closeTabs) and close_tab
	// leaves it alone.
	home    target.ID
	homeCtx context.Context
	// parked are the tabs the session switched away from, with their
	// chromedp contexts.
	parked map[target.ID]tab
	// foreign are the pages an adopted tab of the user's had opened
	// before the session adopted it: the user's, never the session's
	// (the guard did not prepare them).
	foreign map[target.ID]bool
	// roots are the tabs the session made its own besides home: those it
	// opened (new_tab) and the user's it adopted (switch_tab). With home,
	// they and what they opened are the session's pages.
	roots []target.ID
	// held are the user's tabs that left the scope but stay under the
	// guard, because pages of the session's share their browsing-context
	// group (enforce): not let go until the session ends, and not judged
	// again as pages outside the scope (the guard holds what they send).
	held map[target.ID]bool
}

// listTabs is the listing list_tabs gives, from the browser's targets.
// A user's tab the session adopted is the session's to act in, and still
// the user's.
func (s *session) listTabs(all []*target.Info) ([]tabInfo, int) {
	own := s.tab.targetID()
	sc := s.backend.scope.Load()
	others := map[target.ID]bool{}
	for _, p := range sessionPages(all, "", claimedTabs.others(s.id)...) {
		others[p.TargetID] = true
	}
	tabs, hidden := tabListing(all, sessionPagesExcept(all, s.tab.browserID, s.tabs.foreign, s.rootIDs()...), own, s.backend.userContext(),
		func(u string) bool { return sc.Check(u).Allowed }, &s.tabIDs, others)
	for i := range tabs {
		if tabs[i].Owner == ownerSession && s.tabOwner(tabs[i].Target) == ownerUser {
			tabs[i].Owner = ownerUser
		}
		tabs[i].Home = tabs[i].Target == s.tabs.home
	}
	return tabs, hidden
}

// rootIDs are the session's top-level tabs, the current one included.
func (s *session) rootIDs() []target.ID {
	ids := []target.ID{s.tab.targetID()}
	if s.tabs.home != "" && s.tabs.home != ids[0] {
		ids = append(ids, s.tabs.home)
	}
	for _, id := range s.tabs.roots {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// switchTo makes the session's tab id its current one: a parked tab's
// context comes back; another gets a chromedp context attached to it on
// the home tab's connection, which only detaches when it is let go.
func (s *session) switchTo(ctx context.Context, id target.ID) error {
	cur := s.tab.targetID()
	if id == cur {
		return nil
	}
	t, ok := s.tabs.parked[id]
	if !ok || !t.open() {
		w := newPageWatch(cdp.FrameID(id), s.manifest.Browser.Dialogs, s.maskDialog)
		w.log.details = readsRequests(s.manifest)
		w.log.followGuard(s.egress.guard)
		tctx, cancel := chromedp.NewContext(s.tabs.homeCtx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel(),
			chromedp.WithListener(w.listen))
		if err := runBounded(tabAttachWait, func() error { return attach(tctx, s.backend.metrics(), bodyBuffer(s.manifest)) }); err != nil {
			cancel()
			return fmt.Errorf("attach to the tab: %w", err)
		}
		t = tab{ctx: tctx, cancel: cancel, watch: w, browserID: s.tab.browserID, frames: newFrameConns()}
		go w.answerDialogs(tctx)
	}
	delete(s.tabs.parked, id)
	s.tabs.parked[cur] = s.tab
	s.tab = t
	s.egress.guard.setTab(string(id))
	if len(s.stateScripts.pending)+len(s.stateScripts.stale) > 0 {
		tctx, cancel := s.onCurrent(ctx)
		defer cancel()
		s.followStateScripts(tctx)
	}
	return nil
}

// onCurrent is a context for the session's current tab (after a switch,
// no longer the one ctx was made for) with ctx's deadline and
// cancellation.
func (s *session) onCurrent(ctx context.Context) (context.Context, context.CancelFunc) {
	return boundBy(s.tab.ctx, ctx)
}

// boundBy is a context of base (a chromedp context: a tab's, a frame's)
// that ends with ctx too, by its deadline or its cancellation.
func boundBy(base, ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(base)
	if d, ok := ctx.Deadline(); ok {
		var cancelD context.CancelFunc
		c, cancelD = context.WithDeadline(c, d)
		inner := cancel
		cancel = func() { cancelD(); inner() }
	}
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// tabAttachWait bounds attaching a chromedp context to a tab.
const tabAttachWait = 10 * time.Second

// letGo drops the session's hold on a tab that is not its current one:
// its chromedp context detaches; if the tab is the user's, the guard's
// session on it detaches too, so its interception ends and it is left as
// it is.
func (s *session) letGo(id target.ID) {
	if t, ok := s.tabs.parked[id]; ok {
		t.close()
		delete(s.tabs.parked, id)
	}
	s.tabs.roots = slices.DeleteFunc(s.tabs.roots, func(r target.ID) bool { return r == id })
	claimedTabs.release(s.id, id)
	if s.egress.guard != nil {
		s.egress.guard.letGo(string(id))
	}
}

// tabOwner says whose a tab of the session's is.
func (s *session) tabOwner(id target.ID) string {
	if s.egress.guard != nil && s.egress.guard.isUserTab(string(id)) {
		return ownerUser
	}
	return ownerSession
}

// claimedTabs are the top-level tabs the daemon's sessions hold — each
// one's first tab, the tabs it opened, the user's tabs it adopted — so
// that no session lists, adopts or closes another's (in the user's
// context they share one browser context). Target ids are unique.
var claimedTabs = tabClaims{m: map[target.ID]string{}}

type tabClaims struct {
	mu sync.Mutex
	m  map[target.ID]string // tab -> session id
}

// claim gives tab to session; it fails if another session holds it.
func (c *tabClaims) claim(tab target.ID, session string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if owner, ok := c.m[tab]; ok && owner != session {
		return false
	}
	c.m[tab] = session
	return true
}

// release lets go of tabs of session; with none named, of all of them.
func (c *tabClaims) release(session string, tabs ...target.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tab, owner := range c.m {
		if owner == session && (len(tabs) == 0 || slices.Contains(tabs, tab)) {
			delete(c.m, tab)
		}
	}
}

// others are the tabs the other sessions hold.
func (c *tabClaims) others(session string) []target.ID {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []target.ID
	for tab, owner := range c.m {
		if owner != session {
			out = append(out, tab)
		}
	}
	return out
}
