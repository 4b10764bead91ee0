package executor

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/target"

	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// new_context and switch_context: more than one browser context in a
// session (two users signed in side by side), each with its own cookie
// jar and storage, and each opened by openContext as the session's first
// is: an egress proxy, a request guard, permissions and downloads of its
// own, under the same scope. The session acts in one context at a time:
// its tab, tabs and guard are the current context's (session.tab,
// session.tabs, session.egress), and the others wait parked here.

// sessionContext is a parked browser context of the session's: what the
// session holds of it while another is current.
type sessionContext struct {
	tab   tab
	tabs  sessionTabs
	guard *targetGuard
	ic    *interceptor
	// acting is the context's own acting guard: what a page of
	// another context does never counts as this one's action, nor
	// the reverse.
	acting *actingGuard
	proxy  *egress.Proxy
}

// sessionContexts are the session's browser contexts apart from the
// current one, by id ("c1" is the session's first), and the current
// one's id.
type sessionContexts struct {
	current string
	parked  map[string]*sessionContext
	next    int // the number of the last context opened
}

// currentID is the id of the context the session acts in.
func (c *sessionContexts) currentID() string { return cmp.Or(c.current, "c1") }

// ids are every context's id, in the order they were opened.
func (c *sessionContexts) ids() []string {
	ids := append(slices.Collect(maps.Keys(c.parked)), c.currentID())
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(contextNumber(a), contextNumber(b)) })
	return ids
}

// contextNumber is the number of a context id ("c2": 2).
func contextNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "c"))
	return n
}

// recorded is the current context's id for the record: "" in a session
// that never opened a second one.
func (c *sessionContexts) recorded() string {
	if c.next == 0 {
		return ""
	}
	return c.currentID()
}

// park takes the current context out of the session, under its id.
func (s *session) park() {
	if s.contexts.parked == nil {
		s.contexts.parked = map[string]*sessionContext{}
	}
	s.contexts.parked[s.contexts.currentID()] = &sessionContext{tab: s.tab, tabs: s.tabs, guard: s.egress.guard, ic: s.egress.ic.Load(), proxy: s.egress.proxy, acting: s.egress.acting}
	s.tab, s.tabs, s.egress.guard, s.egress.proxy = tab{}, sessionTabs{}, nil, nil
	s.egress.acting = &actingGuard{} // a new context's; resume gives back a parked one's
	s.egress.ic.Store(nil)
}

// resume makes the parked context id the current one.
func (s *session) resume(id string) {
	c := s.contexts.parked[id]
	delete(s.contexts.parked, id)
	s.tab, s.tabs, s.egress.guard, s.egress.proxy, s.egress.acting = c.tab, c.tabs, c.guard, c.proxy, c.acting
	s.egress.ic.Store(c.ic)
	s.contexts.current = id
}

// closeContexts closes every context of the session: the current one's
// tabs, then each parked one's (its guard and egress proxy close with
// its first tab).
func (s *session) closeContexts() {
	s.closeTabs()
	for _, id := range slices.Collect(maps.Keys(s.contexts.parked)) {
		s.resume(id)
		s.closeTabs()
	}
	s.contexts = sessionContexts{}
}

// contextsRefused says why the session cannot open a browser context of
// its own besides its first ("" : it can).
func (s *session) contextsRefused() string {
	switch {
	case s.backend.userContext():
		return "new_context needs browser contexts of the session's own: in the user's browser context (live mode, context = \"user\") the session works in the user's own cookies and storage"
	case s.backend.key.connect != "launch" && s.backend.key.connect != "live":
		return "new_context is not offered on remote browsers (pool host, Selenium Grid, browserless), where each session holds one browser context of the pool's: it runs on a browser the daemon launched, or a live browser with context = \"isolated\""
	}
	return ""
}

func actNewContext(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if why := s.contextsRefused(); why != "" {
		return output{}, fmt.Errorf("%s", why)
	}
	limit := cmp.Or(s.command.MaxContexts, toolclad.DefaultMaxContexts)
	if open := len(s.contexts.parked); open >= limit {
		return output{}, fmt.Errorf("the session has %d browser context(s) besides its first, the most new_context's max_contexts (%d) allows", open, limit)
	}
	prev, from := s.contexts.currentID(), s.egress.guard
	s.park()
	s.contexts.next = max(s.contexts.next, 1) + 1
	id := "c" + strconv.Itoa(s.contexts.next)
	s.contexts.current = id
	if err := s.openContext(); err != nil {
		// Nothing of the new context is left open (newSessionContext
		// closed what it had made).
		s.resume(prev)
		return output{}, fmt.Errorf("open a browser context: %w; the session stays in %s", err, prev)
	}
	if err := s.carryEmulation(ctx, from); err != nil {
		return output{}, fmt.Errorf("opened browser context %s, which is current, but could not give it the session's emulation: %w", id, err)
	}
	return output{Text: fmt.Sprintf("opened browser context %s with a blank tab %s (its own cookies and storage; the same scope); it is current", id, s.tabIDs.id(s.tab.targetID()))}, nil
}

func actSwitchContext(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	id, _ := args["context"].(string)
	if id == s.contexts.currentID() {
		return output{Text: fmt.Sprintf("%s is the current browser context", id)}, nil
	}
	if _, ok := s.contexts.parked[id]; !ok {
		return output{}, fmt.Errorf("no browser context %s in this session (it has %s)", id, strings.Join(s.contexts.ids(), ", "))
	}
	from := s.egress.guard
	s.park()
	s.resume(id)
	if err := s.ensureTab(); err != nil {
		return output{}, err
	}
	if err := s.carryEmulation(ctx, from); err != nil {
		return output{}, fmt.Errorf("switched to browser context %s, but could not give it the session's emulation: %w", id, err)
	}
	return output{Text: fmt.Sprintf("switched to browser context %s, on tab %s", id, s.tabIDs.id(s.tab.targetID()))}, nil
}

// carryEmulation gives the current context the emulation of from, the
// guard of the context the session was in: the emulation is the
// session's (emulate says "the session's tabs"), so neither new_context
// nor switch_context sheds it or brings back an older one.
func (s *session) carryEmulation(ctx context.Context, from *targetGuard) error {
	g := s.egress.guard
	if from == nil || g == nil || from == g {
		return nil
	}
	from.mu.Lock()
	e, calls := from.emu.settings, from.emu.calls
	from.mu.Unlock()
	if e.zero() {
		if g.currentEmulation().zero() {
			return nil
		}
		calls = s.emulationCalls(e, "") // the reset emulate would send
	}
	return g.emulate(ctx, string(s.tab.targetID()), e, calls)
}

// labelContexts marks the listed tabs of the current context with its id
// and adds the tabs of the session's other contexts (all: the browser's
// targets), for list_tabs to show; only the current context's tabs can
// be switched to (switch_context first). With one context, nothing is
// marked.
func (s *session) labelContexts(tabs []tabInfo, all []*target.Info) []tabInfo {
	if len(s.contexts.parked) == 0 {
		return tabs
	}
	for i := range tabs {
		tabs[i].Context = s.contexts.currentID()
	}
	for _, id := range s.contexts.ids() {
		c, ok := s.contexts.parked[id]
		if !ok {
			continue
		}
		for _, p := range sessionPagesExcept(all, c.tab.browserID, c.tabs.foreign) {
			tabs = append(tabs, tabInfo{ID: s.tabIDs.id(p.TargetID), Target: p.TargetID, URL: p.URL, Title: p.Title, Owner: ownerSession, Context: id})
		}
	}
	return tabs
}
