package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// A tab the browser makes for one of the session's pages.
//
// A link followed with Control, Meta or Shift held, or with the middle
// button (the agent's or one a page script synthesizes), is opened by the
// browser in a tab of its own making: Chromium's tab has no opener, so the
// popup guard (isOurs) cannot tell it from a tab the user opened, and the
// browser sends its first request itself, before the tab's renderer runs
// and before any interception of the tab's own is on. The early hold in
// the page (no_new_tab.js) cancels most such clicks; a click on an element
// out of its reach (a detached link, one in a closed shadow root, one in a
// frame whose document it never ran in) it cannot. So the guard holds the
// tab itself:
//
//   - every page and frame of the session reports, before the browser
//     acts on it, each navigation it asks for in a new tab or window
//     (Page.frameRequestedNavigation, disposition newTab or newWindow):
//     an ask;
//   - each new page the browser makes is reported with the URL it is to
//     load (Target.targetCreated) before it is attached, paused, with
//     nothing of it run (Target.attachedToTarget);
//   - a new page with no opener whose URL one of the session's asks named
//     is the session's page's doing: it is closed before it runs, and the
//     refusal is logged like any other.
//
// In the user's context, where no egress proxy stands, the first request
// of every new page is also held at the browser (a Fetch interception of
// the browser's own, documents only) until its page is judged: the
// renderer's ask and the browser's new page come on different paths, so a
// new page with no opener that no ask names yet is held for newTabWait for
// one to come before it is let go as the user's. In a browser context of
// the session's own the egress proxy has already held that first request
// to the scope; the tab is closed all the same.
type newTabs struct {
	mu sync.Mutex
	// asks are the URLs (without fragments) the session's pages asked
	// the browser to open in a new tab or window, with when.
	asks []newTabAsk
	// created are the URLs new pages with no opener were made for, by
	// target id, until they attach.
	created map[string]string
	// fresh are the new pages with no opener that attached paused, by
	// target id, until their first document request is answered.
	fresh map[string]*newTabVerdict
}

type newTabAsk struct {
	url string
	at  time.Time
}

// newTabVerdict is what was judged of one new page: made (the session's
// page had the browser make it) once done is closed.
type newTabVerdict struct {
	done    chan struct{}
	made    bool
	url     string
	created time.Time
}

const (
	// newTabWait bounds the wait, in the user's context, for the ask of a
	// new page with no opener that came before it (see newTabs).
	newTabWait = frameNavWait
	// newTabAskLife is how long an ask may wait for its page: a tab the
	// browser refused to make (a page with no user activation) leaves
	// its ask behind, which must not stand against a later tab.
	newTabAskLife = 3 * time.Second
	// newTabFreshLife is how long a new page's verdict is kept for its
	// first document request (a page that loads nothing from the network
	// sends none).
	newTabFreshLife = time.Minute
)

// RuleBrowserMadeTab names the refusal of a tab the browser made for one
// of the session's pages.
const RuleBrowserMadeTab = "browser-made tab"

// newTabDispositions are the dispositions of a navigation asked for that
// the browser opens in a tab of its own making.
var newTabDispositions = map[string]bool{"newTab": true, "newWindow": true}

// noteNewTabAsk records a navigation a page or frame of the session asked
// for in a new tab or window (read loop: before the page it makes is
// attached).
func (g *targetGuard) noteNewTabAsk(m cdpMessage) {
	var e struct {
		URL         string `json:"url"`
		Disposition string `json:"disposition"`
	}
	if json.Unmarshal(m.Params, &e) != nil || !newTabDispositions[e.Disposition] {
		return
	}
	now := time.Now()
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	t.asks = append(t.liveAsks(now), newTabAsk{url: withoutFragment(e.URL), at: now})
	for _, v := range t.fresh {
		if !v.decided() && v.url == withoutFragment(e.URL) {
			t.take(v, now)
		}
	}
}

// noteCreated records the URL a new page with no opener is made for (read
// loop: Target.targetCreated comes before its Target.attachedToTarget).
func (g *targetGuard) noteCreated(m cdpMessage) {
	var e struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(m.Params, &e) != nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID != "" {
		return
	}
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.created == nil {
		t.created = map[string]string{}
	}
	if len(t.created) >= maxTrackedNewPages {
		clear(t.created) // pages that never attached to this guard
	}
	t.created[e.TargetInfo.TargetID] = withoutFragment(e.TargetInfo.URL)
}

// maxTrackedNewPages bounds the new pages remembered between their
// creation and their attachment, or their first request.
const maxTrackedNewPages = 256

// noteNewPage judges a top-level page that attached paused with no
// opener (read loop, before its attachment is handled and before any
// request of it is paused): made, when one of the session's asks names
// its URL; in the user's context otherwise undecided for newTabWait.
func (g *targetGuard) noteNewPage(m cdpMessage) {
	if m.SessionID != "" {
		return // a child of a page: its parent's
	}
	var e struct {
		TargetInfo         targetInfo `json:"targetInfo"`
		WaitingForDebugger bool       `json:"waitingForDebugger"`
	}
	if json.Unmarshal(m.Params, &e) != nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID != "" || !e.WaitingForDebugger {
		return
	}
	id := e.TargetInfo.TargetID
	if id == g.home || id == g.curTab() {
		return
	}
	now := time.Now()
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	url, ok := t.created[id]
	delete(t.created, id)
	if !ok {
		url = withoutFragment(e.TargetInfo.URL)
	}
	if t.fresh == nil {
		t.fresh = map[string]*newTabVerdict{}
	}
	for k, v := range t.fresh {
		if now.Sub(v.created) > newTabFreshLife || len(t.fresh) >= maxTrackedNewPages {
			delete(t.fresh, k)
		}
	}
	v := &newTabVerdict{done: make(chan struct{}), url: url, created: now}
	t.fresh[id] = v
	if t.take(v, now) || !g.user || url == "" {
		// Outside the user's context a page no ask names is the
		// session's own (new_tab's) or its context's: guarded as such.
		// A page with no URL to judge is none a link asked for.
		v.decide(v.made)
	}
}

// take decides v made when an ask names its URL, and spends the ask
// (under t.mu).
func (t *newTabs) take(v *newTabVerdict, now time.Time) bool {
	t.asks = t.liveAsks(now)
	for i, a := range t.asks {
		if a.url == v.url && v.url != "" {
			t.asks = append(t.asks[:i:i], t.asks[i+1:]...)
			v.made = true
			v.decide(true)
			return true
		}
	}
	return false
}

// liveAsks are the asks not yet too old (under t.mu).
func (t *newTabs) liveAsks(now time.Time) []newTabAsk {
	live := t.asks[:0]
	for _, a := range t.asks {
		if now.Sub(a.at) <= newTabAskLife {
			live = append(live, a)
		}
	}
	return live
}

func (v *newTabVerdict) decided() bool {
	select {
	case <-v.done:
		return true
	default:
		return false
	}
}

// decide closes v with made (once).
func (v *newTabVerdict) decide(made bool) {
	if !v.decided() {
		v.made = made
		close(v.done)
	}
}

// verdict waits for what was judged of the new page id (nil: no new page
// with no opener), deciding it the user's once newTabWait has passed
// with no ask naming it.
func (g *targetGuard) verdict(id string) *newTabVerdict {
	t := &g.newTabs
	t.mu.Lock()
	v := t.fresh[id]
	t.mu.Unlock()
	if v == nil {
		return nil
	}
	select {
	case <-v.done:
	case <-time.After(time.Until(v.created.Add(newTabWait))):
		t.mu.Lock()
		v.decide(false)
		t.mu.Unlock()
	}
	return v
}

// browserMadeTab closes a new page the session's page had the browser
// make, before anything of it runs, and logs the refusal. It reports
// whether the page was one.
func (g *targetGuard) browserMadeTab(ctx context.Context, id string) bool {
	v := g.verdict(id)
	if v != nil && !g.user {
		// No request of it is paused at the browser: its verdict is
		// needed no more.
		g.newTabs.mu.Lock()
		delete(g.newTabs.fresh, id)
		g.newTabs.mu.Unlock()
	}
	if v == nil || !v.made {
		return false
	}
	g.ic.log.add(Blocked{Time: time.Now(), URL: v.url, Rule: RuleBrowserMadeTab, Layer: "target",
		Reason: "a page of the session had the browser open this in a tab of its own making (a modified or middle click on a link): such a tab is closed before it runs; to open a page in a new tab, use new_tab"})
	if _, err := g.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": id}); err != nil {
		// It stays paused, with nothing of it run: the guard never lets
		// it go.
		g.logger.Warn("target guard: a tab the browser made for a page could not be closed; it stays paused", "target", id, "error", err)
	}
	return true
}

// browserPaused answers a document request paused by the browser's own
// interception (the user's context): the first request of a new page with
// no opener waits for its page's verdict and fails if the session's page
// had the browser make it; every other goes on at once (the session's own
// were judged by their target's interception before).
func (g *targetGuard) browserPaused(ctx context.Context, m cdpMessage) {
	var e struct {
		RequestID string `json:"requestId"`
		FrameID   string `json:"frameId"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
	}
	if json.Unmarshal(m.Params, &e) != nil {
		return
	}
	if v := g.verdict(e.FrameID); v != nil {
		g.newTabs.mu.Lock()
		delete(g.newTabs.fresh, e.FrameID)
		g.newTabs.mu.Unlock()
		if v.made {
			g.answer(ctx, "", "Fetch.failRequest", map[string]any{"requestId": e.RequestID, "errorReason": "BlockedByClient"}, e.Request.URL)
			return
		}
	}
	g.answer(ctx, "", "Fetch.continueRequest", map[string]any{"requestId": e.RequestID}, e.Request.URL)
}

// holdNewPages sets, at the start of a guard, what tells a tab the browser
// makes: every new page is reported with its URL and, in the user's
// context, every document request is paused at the browser until it is
// answered (browserPaused).
func (g *targetGuard) holdNewPages(ctx context.Context) error {
	if _, err := g.call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true, "filter": []map[string]any{{"type": "page"}}}); err != nil {
		return err
	}
	if !g.user {
		return nil
	}
	_, err := g.call(ctx, "", "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "resourceType": "Document"}}})
	return err
}

// discoveryEvent reports whether m is one of the target discovery's
// events, which only noteCreated reads.
func discoveryEvent(m cdpMessage) bool {
	return m.SessionID == "" && strings.HasPrefix(m.Method, "Target.target")
}
