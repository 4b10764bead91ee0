package executor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Request interception is the first layer of the request guard: each
// session's target guard (guard_targets.go) enables Fetch on every target of the
// session, which pauses each request before it is sent; it is checked
// against the scope and failed as BlockedByClient when out of scope.
// WebSockets are not Fetch requests: the egress proxy stops them.

// Blocked is one request the guard refused.
type Blocked struct {
	Time time.Time
	URL  string
	// Request is the Network domain's id of the request interception
	// refused ("": not known), which tells it apart in the tab's log
	// from another request to the same URL (refusals).
	Request string
	Rule    string
	Reason  string
	Layer   string // "interception" or "proxy"
	// Ask: outside allowed_domains, a host the agent could ask a human
	// for with navigate (scope.Verdict.Ask).
	Ask bool
	// Between: refused after the previous call had returned, before this
	// one began (the page's own doing).
	Between bool
	// Docs are the hosts of the documents that may have made the request,
	// as the browser named them (targetGuard.refusalDocs; nil: none is
	// known, as for the proxy's refusals), and Held the secrets the
	// binding held when it was refused: what the call's list of refusals
	// masks its URL for, or withholds it (session.refusalMask). The tab's
	// log withholds it when its document is not masked for Held
	// (session.shown).
	Docs []string
	Held []*toolclad.Secret
}

// permissionGrant is one permission request a page of the session made
// that [browser.permissions] granted to the page's origin (permissionAsked).
// It is no refusal: the block log keeps it apart from them, and only the
// evidence lists it.
type permissionGrant struct {
	URL, Permission, Origin string
	// Between: made while no call ran (the page's own doing).
	Between bool
}

// permissionGrants are the granted requests a record lists, and how many
// more of them it counts without listing.
type permissionGrants struct {
	list    []permissionGrant
	dropped int
}

// blockLog collects refused requests so that each call can report those
// that happened while it ran, and those the pages made between calls; and,
// apart from them, the permission requests that were granted, which the
// evidence records the same way (granted, take).
//
// Its memory is bounded by stretch: the time between two calls is one
// stretch, a call another (from its first mark to take). Of each stretch
// the log keeps the first maxBlockLog refusals, up to maxBlockLogBytes of
// their text, and only counts the rest: a page that floods refusals cannot
// push the telling first one out of the evidence, and the record says how
// many were not kept. Positions (mark, take) count every refusal, kept or
// not.
type blockLog struct {
	mu sync.Mutex
	// kept are the refusals kept since the last take, in order.
	kept []keptBlock
	// next is the position of the next refusal (how many were added);
	// taken the position up to which refusals were handed to a record.
	next, taken int
	// inCall: mark was called since the last take (a call runs), so what
	// is added now belongs to the call's stretch. n and size are what the
	// current stretch keeps.
	inCall  bool
	n, size int
	// actingKept: an acting guard refusal was kept since the last mark.
	// The first one is kept whatever the stretch kept before it, so that
	// unjudgedSubmission finds it however many refusals preceded it.
	actingKept bool
	// onAdd, when set, is told of every refusal as it happens (the
	// decision log line), kept or not.
	onAdd func(Blocked)
	// stamp, when set, notes on each refusal what masks it for the agent
	// (session.stampBlocked).
	stamp func(*Blocked)
	// recent are the latest refusals by refusalKey, for the network log's replies
	// (cleared when it holds maxBlockLog).
	recent map[string]Blocked
	// navs are the tabs (target id) whose own navigation was refused, and
	// to where: such a tab (a popup opened straight at a forbidden URL)
	// may still show about:blank, and is closed all the same.
	navs map[string]string
	// grants are the granted permission requests kept since the last
	// take, bounded per stretch like the refusals but on counts of their
	// own (grantN, grantSize), so that a page granted something cannot
	// crowd its refusals out of the record, nor they its grants;
	// grantsDropped counts those not kept. No reader of the refusals
	// (onAdd, recent, navs, unjudgedSubmission) sees them.
	grants            []permissionGrant
	grantN, grantSize int
	grantsDropped     int
}

// keptBlock is a refusal the log keeps, with its position.
type keptBlock struct {
	pos int
	Blocked
}

// blockDrops counts the refusals a record's stretches did not keep:
// Between those the pages made before the call began, During those made
// while it ran.
type blockDrops struct{ Between, During int }

func (d blockDrops) total() int { return d.Between + d.During }

// navBlocked records that the main frame of tab target tried to load url
// and was refused.
func (l *blockLog) navBlocked(target, url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.navs == nil {
		l.navs = map[string]string{}
	}
	l.navs[target] = url
}

// blockedNav returns where tab target last tried to go and was refused
// ("" when it never was).
func (l *blockLog) blockedNav(target string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.navs[target]
}

// forgetNav forgets the refused navigation of a tab the session keeps.
func (l *blockLog) forgetNav(target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.navs, target)
}

// maxBlockLog and maxBlockLogBytes bound what the log keeps of one
// stretch: its first maxBlockLog refusals, fewer when their URLs, rules and
// reasons reach maxBlockLogBytes first (a page chooses its URLs' length).
// A stretch's first refusal is always kept.
const (
	maxBlockLog      = 1000
	maxBlockLogBytes = 4 << 20
)

func (l *blockLog) add(b Blocked) {
	if l.stamp != nil {
		l.stamp(&b)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.onAdd != nil {
		l.onAdd(b)
	}
	if len(l.recent) >= maxBlockLog || l.recent == nil {
		l.recent = map[string]Blocked{}
	}
	l.recent[refusalKey(b.Request, b.URL)] = b
	pos := l.next
	l.next++
	acting := isActingRule(b.Rule) && !l.actingKept
	if !acting && (l.n >= maxBlockLog || l.size >= maxBlockLogBytes) {
		return // counted by its position, not kept
	}
	if acting {
		l.actingKept = true
	}
	l.n++
	l.size += len(b.URL) + len(b.Rule) + len(b.Reason)
	l.kept = append(l.kept, keptBlock{pos, b})
}

// granted keeps a permission request that was granted, for the next
// record. Made while no call runs, it is the page's own doing (Between),
// as a refusal before the call's mark is.
func (l *blockLog) granted(g permissionGrant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g.Between = !l.inCall
	if l.grantN >= maxBlockLog || l.grantSize >= maxBlockLogBytes {
		l.grantsDropped++
		return
	}
	l.grantN++
	l.grantSize += len(g.URL) + len(g.Permission) + len(g.Origin)
	l.grants = append(l.grants, g)
}

// refusals are the latest refusals by refusalKey.
func (l *blockLog) refusals() map[string]Blocked {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.recent)
}

// refusalKey is what refusals knows a refusal by: the request's id in the
// Network domain with its URL (a redirect's hops share the id), or, for a
// refusal that names no request, the URL alone — never a URL alone for
// one that does, or another page could send a request to the same URL and
// have it shown as that one (session.shown).
func refusalKey(request, url string) string {
	if request == "" {
		return url
	}
	return request + " " + url
}

// isActingRule reports whether rule is one the acting guard refuses by.
func isActingRule(rule string) bool {
	return rule == ruleUnjudgedSubmission || rule == rulePostedElsewhere || rule == ruleNavigatedElsewhere
}

// unjudgedSubmission is the first request the acting guard refused since
// mark (a form submission or a navigation the gate did not judge), or nil.
// The first such refusal after the latest mark is always kept.
func (l *blockLog) unjudgedSubmission(mark int) *Blocked {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.kept {
		if k.pos >= mark && isActingRule(k.Rule) {
			b := k.Blocked
			return &b
		}
	}
	return nil
}

// mark is the position to collect from. The first mark after a take
// starts the call's stretch.
func (l *blockLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.inCall {
		l.inCall, l.n, l.size = true, 0, 0
		l.grantN, l.grantSize = 0, 0
	}
	l.actingKept = false
	return l.next
}

// take hands every refusal not yet handed to a record to the call that
// began at mark: the kept ones, those before mark marked Between (the
// pages' own doing after the previous record took its own), and how many
// of each were not kept; and, apart, the granted permission requests not
// yet handed over. The next stretch starts.
func (l *blockLog) take(mark int) ([]Blocked, blockDrops, permissionGrants) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeLocked(mark)
}

// takeAll hands every refusal and grant not yet handed to a record, all
// made between calls (the session ends, or its browser context closed).
func (l *blockLog) takeAll() ([]Blocked, blockDrops, permissionGrants) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.grants {
		l.grants[i].Between = true
	}
	return l.takeLocked(l.next)
}

func (l *blockLog) takeLocked(mark int) ([]Blocked, blockDrops, permissionGrants) {
	mark = min(max(mark, l.taken), l.next)
	var out []Blocked
	var between, during int
	for _, k := range l.kept {
		b := k.Blocked
		if k.pos < mark {
			b.Between = true
			between++
		} else {
			during++
		}
		out = append(out, b)
	}
	d := blockDrops{Between: mark - l.taken - between, During: l.next - mark - during}
	l.kept, l.taken = nil, l.next
	l.inCall, l.n, l.size, l.actingKept = false, 0, 0, false
	g := permissionGrants{list: l.grants, dropped: l.grantsDropped}
	l.grants, l.grantN, l.grantSize, l.grantsDropped = nil, 0, 0, 0
	return out, d, g
}

// interceptor judges the URL of a paused request; refusals go to log.
type interceptor struct {
	check func(url string) scope.Verdict
	log   *blockLog
	// acting holds what the gate judged of the action running now (nil
	// between calls), and navs counts the tab's main-frame navigations:
	// a form submission from the page the gate judged must be one it
	// judged.
	acting *actingGuard
	navs   func() int
	// bound holds a document a secret was typed into to the secret's
	// domains; docGen is the tab's document generation (set by the target
	// guard, which counts the tab's main-frame commits).
	bound  *gate.SecretBinding
	docGen func() int64
	// popups are the page targets (by guard session) opened while an
	// action ran, with what it was judged to do: their first navigation is
	// held to it.
	popups sync.Map
	// frameNavs are the URLs (without fragments) that a page or frame of
	// the session started a form submission or followed a link to while
	// an action ran, with Chromium's reason: a frame's document request to
	// one of them is the action's, held to what the gate judged like the
	// tab's own.
	frameNavs sync.Map
	// vouched are the ids of the tab's document requests that are the
	// agent's own navigation or lead where a judged action leads: their
	// redirects may leave a site a secret was typed on.
	vouched sync.Map
	// pacing spaces the requests it allows per host (guard_pacing.go).
	pacing requestPacing
}

// noteFrameNav records a form submission or link a frame follows while
// an action runs.
func (ic *interceptor) noteFrameNav(url, reason string) {
	if ic.acting.current() != nil || ic.acting.afterwards() != nil {
		ic.frameNavs.Store(withoutFragment(url), reason)
	}
}

// frameNavWait bounds the wait for the renderer's word that a frame's
// document request during an action is a form submission or a link's: it
// is sent before the request leaves, on another path.
const frameNavWait = 50 * time.Millisecond

// frameNavReason returns why a frame's document request to url was
// started during the running action ("" if not by a form or link).
func (ic *interceptor) frameNavReason(url string) string {
	deadline := time.Now().Add(frameNavWait)
	for {
		if r, ok := ic.frameNavs.LoadAndDelete(withoutFragment(url)); ok {
			return r.(string)
		}
		if time.Now().After(deadline) {
			return ""
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// notePopup records that a page target (guard session) opened while an
// action runs.
func (ic *interceptor) notePopup(session string) {
	if j := ic.acting.current(); j != nil {
		ic.popups.Store(session, j)
	}
}

// actingGuard is what the gate judged of the action running now: whether
// it submits a form and where to, and where it may navigate. The page's
// own scripts run while a command acts (a mouseup or click handler, a
// submit handler that changes the form's action, a click that lands on
// something inside the element), so the interceptor holds what the judged
// page sends during the action to what was judged, on the request itself:
//
//   - a form submission sent as a POST must be one the gate judged, to a
//     URL it judged;
//   - a navigation of a tab or popup (a GET document request: a link, a
//     form sent with GET, a script setting location, window.open) must go
//     to a URL the gate judged, a GET form's query aside.
//
// Redirects of an allowed request are the server's, and pass (the scope
// still judges them). Once the tab has moved to another document, what
// that document does is not the action's.
type actingGuard struct {
	mu     sync.Mutex
	active bool
	judged judgedAction
	// passed are the tab's navigations let through during the action (a
	// judged URL and its redirect hops); moved: the tab committed one of
	// them, so what it does from then on is the new document's. A commit
	// of anything else (a blob: or data: document the page made) does not
	// end the guard.
	passed map[string]bool
	moved  bool
	// after: the action is over, and the tab still shows the document it
	// acted on (no commit since, no next action yet; reads do not count). A form that document
	// submits now (a handler's delayed submit) is still the action's: it
	// is held to what the gate judged. Other navigations are the page's.
	after bool
	// agentNav is the URL of the agent's own navigation (navigate,
	// go_back) while it runs, canonical and without its fragment; "" when
	// none runs.
	agentNav string
}

// judgedAction is what the gate judged an action to do.
type judgedAction struct {
	posts bool     // it submits a form
	to    []string // where it submits, without fragments
	urls  []string // every destination it may lead to, without fragments
}

// begin records what the action about to run was judged to do.
func (g *actingGuard) begin(posts bool, to, urls []string) {
	j := judgedAction{posts: posts}
	for _, u := range to {
		if u != "" {
			j.to = append(j.to, withoutFragment(u))
		}
	}
	for _, u := range append(slices.Clone(to), urls...) {
		if u != "" {
			j.urls = append(j.urls, withoutFragment(u))
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active, g.judged, g.passed, g.moved, g.after = true, j, map[string]bool{}, false, false
}

// committed notes that the tab committed url: if it is a navigation the
// guard let through, the action's document is gone.
func (g *actingGuard) committed(url string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active && g.passed[withoutFragment(url)] {
		g.moved = true
	}
	g.after = false // the document acted on is gone
}

// end: the action is over. Until the tab commits another document or the
// next action begins, what the acted-on document submits is still held.
func (g *actingGuard) end() {
	g.mu.Lock()
	if g.active {
		g.after = !g.moved
	}
	g.active = false
	g.mu.Unlock()
}

// afterwards is what the last action was judged to do, while the tab
// still shows the document it acted on (nil otherwise).
func (g *actingGuard) afterwards() *judgedAction {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active || !g.after {
		return nil
	}
	j := g.judged
	return &j
}

// current is what the running action was judged to do (nil between
// actions).
func (g *actingGuard) current() *judgedAction {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active {
		return nil
	}
	j := g.judged
	return &j
}

// navigating marks the agent's own navigation (navigate, go_back) to url
// as running, or ("") over: it may leave a document a secret was typed
// into.
func (g *actingGuard) navigating(url string) {
	g.mu.Lock()
	g.agentNav = canonicalNav(url)
	g.mu.Unlock()
}

// isAgentNav reports whether a navigation of the tab to url (with its
// fragment) is the agent's own: one runs, and it goes to that very URL,
// fragment included (a page that moves the tab to the agent's destination
// with something of its own in the fragment is not the agent).
func (g *actingGuard) isAgentNav(url string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.agentNav != "" && g.agentNav == canonicalNav(url)
}

// leadsTo reports whether a document request of the tab during the running
// action goes where the gate judged the action leads (so that the
// server's redirects of it are the server's answer to a judged act).
func (g *actingGuard) leadsTo(url, method string) bool {
	j := g.current()
	if j == nil {
		return false
	}
	u := withoutFragment(url)
	if method == "POST" {
		return j.posts && slices.Contains(j.to, u)
	}
	return slices.Contains(j.urls, u) || slices.Contains(j.to, withoutQuery(u))
}

// canonicalNav is a URL as the browser requests it, fragment included, so
// that the agent's argument and the browser's request compare equal.
func canonicalNav(raw string) string {
	if raw == "" {
		return ""
	}
	frag := ""
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		frag = raw[i:]
	}
	u, err := scope.ParseURL(withoutFragment(raw))
	if err != nil {
		return raw
	}
	return u.String() + frag
}

// Rules the acting guard refuses a request by (evidence stage
// "destination").
const (
	ruleUnjudgedSubmission = "form submission not judged"
	rulePostedElsewhere    = "form posted elsewhere"
	ruleNavigatedElsewhere = "navigated elsewhere"
)

// judgeDocument refuses a document request that the page the gate judged
// sends during an action, when it is not what the gate judged; pageNav
// says it is the navigation of a tab or popup (not an iframe's), redirect
// that it is a redirect hop. ok is false when the guard has nothing to
// say: no action running, an allowed request, or the tab has moved on to
// a document the action was judged to lead to.
func (g *actingGuard) judgeDocument(url, method string, pageNav, redirect bool) (scope.Verdict, bool) {
	if g == nil {
		return scope.Verdict{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active || g.moved {
		return scope.Verdict{}, false
	}
	if !redirect { // a redirect hop is the server's: the scope judges it
		if refuse, ok := g.judged.judge(url, method, pageNav); ok {
			return refuse, true
		}
	}
	if pageNav {
		g.passed[withoutFragment(url)] = true
	}
	return scope.Verdict{}, false
}

// judge refuses a document request that is not what the action was judged
// to do.
func (j *judgedAction) judge(url, method string, pageNav bool) (scope.Verdict, bool) {
	u := withoutFragment(url)
	judged := pagetext.Value(strings.Join(j.urls, ", "))
	if judged == "" {
		judged = "nowhere"
	}
	// The URLs are the page's (or the agent's): marked for the masker
	// (package pagetext), the sentence is browsergate's.
	shown, to := pagetext.Value(url), pagetext.Value(strings.Join(j.to, ", "))
	switch {
	case method == "POST" && !j.posts:
		return scope.Verdict{URL: url, Rule: ruleUnjudgedSubmission,
			Reason: fmt.Sprintf("the page submitted a form to %s during an action the gate judged not to submit one (it judged: %s)", shown, judged)}, true
	case method == "POST" && !slices.Contains(j.to, u):
		return scope.Verdict{URL: url, Rule: rulePostedElsewhere,
			Reason: fmt.Sprintf("the form posted to %s, not where the gate judged it would (%s)", shown, to)}, true
	case method != "POST" && pageNav && !slices.Contains(j.urls, u) && !slices.Contains(j.to, withoutQuery(u)):
		return scope.Verdict{URL: url, Rule: ruleNavigatedElsewhere,
			Reason: fmt.Sprintf("the action navigated to %s, not where the gate judged it would lead (%s)", shown, judged)}, true
	}
	return scope.Verdict{}, false
}

// judgeFormGet refuses a form submission sent with GET into a frame that
// the action was not judged to make.
func (j *judgedAction) judgeFormGet(url string) (scope.Verdict, bool) {
	u := withoutQuery(withoutFragment(url))
	shown, to := pagetext.Value(url), pagetext.Value(strings.Join(j.to, ", "))
	switch {
	case !j.posts:
		return scope.Verdict{URL: url, Rule: ruleUnjudgedSubmission,
			Reason: fmt.Sprintf("the page submitted a form to %s (into a frame) during an action the gate judged not to submit one", shown)}, true
	case !slices.Contains(j.to, u):
		return scope.Verdict{URL: url, Rule: rulePostedElsewhere,
			Reason: fmt.Sprintf("the form was sent to %s (into a frame), not where the gate judged it would (%s)", shown, to)}, true
	}
	return scope.Verdict{}, false
}

func withoutQuery(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

func withoutFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// pausedRequest is a request interception paused, as decideRequest needs
// it.
type pausedRequest struct {
	session      string // the guard's session of the target that sent it
	id           string // Fetch's request id
	url          string
	method       string
	resourceType string
	// redirectedFrom is the id of the request whose redirect this is.
	redirectedFrom string
	// pageNav: the navigation of a page target's main frame (the tab or a
	// popup); tabNav: of the tab.
	pageNav, tabNav bool
}

// decideRequest judges one paused request: its URL against the scope,
// and a document request (a navigation or a form submission) against what
// the gate judged of the action running.
func (ic *interceptor) decideRequest(r pausedRequest) scope.Verdict {
	session, url, method, resourceType, redirectedFrom, pageNav := r.session, r.url, r.method, r.resourceType, r.redirectedFrom, r.pageNav
	v := ic.decide(url)
	if !v.Allowed {
		return v
	}
	// A request waits for its host's turn before the rest is judged, so
	// that it is judged as things stand when it goes, and one refused
	// its turn leaves nothing behind (a secret binding told the tab is
	// leaving, a vouched redirect).
	if v = ic.pacing.paced(v, url); !v.Allowed {
		return v
	}
	if resourceType == "Document" {
		// A popup the action opened: its first navigation is the action's,
		// however late it starts.
		if j, ok := ic.popups.LoadAndDelete(session); ok && pageNav && redirectedFrom == "" {
			if refuse, ok := j.(*judgedAction).judge(url, method, true); ok {
				return refuse
			}
		} else if refuse, ok := ic.acting.judgeDocument(url, method, pageNav, redirectedFrom != ""); ok {
			return refuse
		} else if j := ic.acting.current(); j != nil && !pageNav && redirectedFrom == "" && method != "POST" {
			// A GET form sent into a frame during the action is a
			// submission like any other; a link followed into a frame
			// must go where the gate judged the action leads.
			switch reason := ic.frameNavReason(url); {
			case strings.HasPrefix(reason, "formSubmission"):
				if refuse, ok := j.judgeFormGet(url); ok {
					return refuse
				}
			case reason == "anchorClick":
				if refuse, ok := j.judge(url, method, true); ok {
					return refuse
				}
			}
		} else if j := ic.acting.afterwards(); j != nil && redirectedFrom == "" {
			// After the action, before the next call: a form the acted-on
			// document submits (a handler's delayed submit) is the
			// action's, held to what the gate judged.
			if method == "POST" {
				if refuse, ok := j.judge(url, method, pageNav); ok {
					return refuse
				}
			} else if strings.HasPrefix(ic.frameNavReason(url), "formSubmission") {
				if refuse, ok := j.judgeFormGet(url); ok {
					return refuse
				}
			}
		}
	}
	if u, err := scope.ParseURL(url); err == nil && u.Host != "" {
		agent := r.tabNav && resourceType == "Document" && redirectedFrom == "" && ic.acting.isAgentNav(url)
		leads := r.tabNav && resourceType == "Document" && redirectedFrom == "" && !agent && ic.acting.leadsTo(url, method)
		mayLeave, hop := ic.vouched.Load(redirectedFrom)
		switch {
		case agent || leads:
			// The agent's own navigation (to the very URL it named), or
			// where an action the gate judged leads: it goes through, and
			// its host is let through by the proxy too. Its redirects may
			// leave a site a secret was typed on only if the agent named
			// a URL outside it (the page was emptied first) or it is a
			// judged form submission (a sign-in answered by a redirect to
			// the application): a link or a history entry of the site
			// that redirects elsewhere (an open redirect, an entry the
			// page rewrote) is no way out.
			ic.vouched.Store(r.id, agent && ic.bound.HoldsAgainst(u.Host) || leads && method == "POST")
			if agent || !ic.bound.HoldsAgainst(u.Host) {
				ic.bound.Leave(u.Host)
			} else if refuse, ok := ic.bound.Judge(u.Host, false); ok {
				refuse.URL = url
				return refuse
			}
		case r.tabNav && resourceType == "Document" && redirectedFrom != "" && hop &&
			(mayLeave.(bool) || !ic.bound.HoldsAgainst(u.Host)):
			// A server's redirect of such a navigation: the server's
			// answer to a judged act, not the page's doing. A redirect
			// of a navigation the page started is judged like any
			// request.
			ic.vouched.Store(r.id, mayLeave)
			ic.bound.Leave(u.Host)
		default:
			if refuse, ok := ic.bound.Judge(u.Host, resourceType == "Ping"); ok {
				refuse.URL = url
				return refuse
			}
		}
	}
	return v
}

// decide judges one paused request. Schemes that never leave the machine
// (data:, blob:, about:) continue; http(s) and ws(s) are checked against
// the scope; everything else is refused.
func (ic *interceptor) decide(url string) scope.Verdict {
	lower := strings.ToLower(url)
	for _, local := range []string{"data:", "blob:", "about:"} {
		if strings.HasPrefix(lower, local) {
			return scope.Verdict{Allowed: true, URL: url, Rule: "local scheme"}
		}
	}
	return ic.check(url)
}

// ruleSecretBound is the rule a request the binding refused names.
const ruleSecretBound = gate.RuleSecretBound
