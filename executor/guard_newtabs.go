package executor

import (
	"context"
	"encoding/json"
	"slices"
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
	// target id, with what was judged of them (kept for their document
	// requests until newTabFreshLife has passed).
	fresh map[string]*newTabVerdict
}

type newTabAsk struct {
	url string
	at  time.Time
}

// newTabVerdict is what was judged of one new page: made (the session's
// page had the browser make it) once done is closed. url is the URL it is
// made for ("" until the browser names it); reported is set once its
// closing is logged.
type newTabVerdict struct {
	done     chan struct{}
	made     bool
	url      string
	created  time.Time
	named    time.Time // when url became known
	reported bool
}

// name sets v's URL, once the browser (or a request of the page) names
// it, and tries the asks (under t.mu).
func (t *newTabs) name(v *newTabVerdict, url string, now time.Time) {
	if v.decided() || v.url != "" || url == "" {
		return
	}
	v.url, v.named = url, now
	t.take(v, now)
}

const (
	// newTabWait bounds the wait, in the user's context, for the ask of a
	// new page with no opener that came before it (see newTabs), from
	// when its URL is known: another session's guard, which learns the
	// URL at the same moment, has that long to close a page its own
	// page asked for before this one lets it run as the user's.
	newTabWait = 2 * frameNavWait
	// newTabURLWait bounds the wait for the browser to name the URL of a
	// new page with no opener (it names none at creation when another
	// DevTools client attaches it first): a page whose URL is not known
	// is not taken for the user's before.
	newTabURLWait = time.Second
	// newTabAskLife is how long an ask may wait for its page: a tab the
	// browser refused to make (a page with no user activation) leaves
	// its ask behind, which must not stand against a later tab.
	newTabAskLife = 2 * time.Second
	// maxNewTabAsks bounds the asks kept (the oldest go first).
	maxNewTabAsks = 64
	// newTabFreshLife is how long a new page's verdict is kept for its
	// document requests.
	newTabFreshLife = time.Minute
)

// RuleBrowserMadeTab names the refusal of a tab the browser made for one
// of the session's pages.
const RuleBrowserMadeTab = "browser-made tab"

// newTabDispositions are the dispositions of a navigation asked for that
// the browser opens in a tab of its own making.
var newTabDispositions = map[string]bool{"newTab": true, "newWindow": true}

// asked reports whether url can be a page's ask: a web page's or one a
// page made (blob:, data:). A blank page is what every new tab begins as
// (new_tab's, the user's tools'), never one to match; nor a browser page
// (chrome:), which no page may open.
func asked(url string) bool {
	for _, scheme := range []string{"http:", "https:", "blob:", "data:"} {
		if strings.HasPrefix(strings.ToLower(url), scheme) {
			return true
		}
	}
	return false
}

// noteNewTabAsk records a navigation a page or frame of the session asked
// for in a new tab or window (read loop: before the page it makes is
// attached).
func (g *targetGuard) noteNewTabAsk(m cdpMessage) {
	var e struct {
		URL         string `json:"url"`
		Disposition string `json:"disposition"`
	}
	if json.Unmarshal(m.Params, &e) != nil || !newTabDispositions[e.Disposition] || !asked(withoutFragment(e.URL)) {
		return
	}
	now := time.Now()
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	t.asks = append(t.liveAsks(now), newTabAsk{url: withoutFragment(e.URL), at: now})
	if len(t.asks) > maxNewTabAsks {
		t.asks = t.asks[len(t.asks)-maxNewTabAsks:]
	}
	for _, v := range t.fresh {
		if !v.decided() && v.url == withoutFragment(e.URL) {
			t.take(v, now)
		}
	}
}

// noteCreated records the URL a new page with no opener is made for, and
// learns the URL of one whose creation named none (read loop:
// Target.targetCreated comes before its Target.attachedToTarget,
// Target.targetInfoChanged after).
func (g *targetGuard) noteCreated(m cdpMessage) {
	var e struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(m.Params, &e) != nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID != "" {
		return
	}
	id, url := e.TargetInfo.TargetID, withoutFragment(e.TargetInfo.URL)
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	if v := t.fresh[id]; v != nil {
		t.name(v, url, time.Now())
		return
	}
	if m.Method != "Target.targetCreated" {
		if u, ok := t.created[id]; !ok || u != "" || url == "" {
			return // only a creation that named no URL learns it
		}
	}
	if t.created == nil {
		t.created = map[string]string{}
	}
	if len(t.created) >= maxTrackedNewPages {
		clear(t.created) // pages that never attached to this guard
	}
	t.created[id] = url
}

// maxTrackedNewPages bounds the new pages remembered between their
// creation and their attachment, or their first request.
const maxTrackedNewPages = 256

// noteNewPage judges a top-level page that attached paused with no
// opener (read loop, before its attachment is handled and before any
// request of it is paused): made, when one of the session's asks names
// its URL; in the user's context otherwise undecided for newTabWait once
// its URL is known (newTabURLWait at most while it is not). Outside the user's
// context only a page of the session's own browser context is judged.
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
	if id == g.home || id == g.curTab() || (!g.user && e.TargetInfo.BrowserContextID != g.context) {
		return
	}
	now := time.Now()
	t := &g.newTabs
	t.mu.Lock()
	defer t.mu.Unlock()
	url, ok := t.created[id]
	delete(t.created, id)
	if !ok || url == "" {
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
	v := &newTabVerdict{done: make(chan struct{}), created: now}
	t.name(v, url, now)
	t.fresh[id] = v
	if !v.made && !g.user {
		// Outside the user's context a page no ask names is the
		// session's own (new_tab's) or its context's: guarded as such,
		// behind the session's egress proxy.
		v.decide(false)
	}
}

// take decides v made when an ask names its URL, and spends the ask
// (under t.mu).
func (t *newTabs) take(v *newTabVerdict, now time.Time) bool {
	t.asks = t.liveAsks(now)
	if !asked(v.url) {
		return false
	}
	for i, a := range t.asks {
		if a.url == v.url {
			t.asks = append(t.asks[:i:i], t.asks[i+1:]...)
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

// decide closes v with made (once; under the newTabs' mu).
func (v *newTabVerdict) decide(made bool) {
	if !v.decided() {
		v.made = made
		close(v.done)
	}
}

// verdict waits for what was judged of the new page id (nil: no new page
// with no opener), deciding it the user's once newTabWait has passed
// since its URL was known with no ask naming it (or newTabURLWait since
// it was made, without a URL).
// A document request's url (reqURL, "" when none) names the page's URL
// when the browser has not.
func (g *targetGuard) verdict(id, reqURL string) *newTabVerdict {
	t := &g.newTabs
	t.mu.Lock()
	v := t.fresh[id]
	if v != nil {
		t.name(v, withoutFragment(reqURL), time.Now())
	}
	t.mu.Unlock()
	if v == nil {
		return nil
	}
	for {
		select {
		case <-v.done:
			return v
		case <-time.After(10 * time.Millisecond):
		}
		t.mu.Lock()
		if v.url != "" && time.Since(v.named) > newTabWait || v.url == "" && time.Since(v.created) > newTabURLWait {
			v.decide(false)
		}
		t.mu.Unlock()
	}
}

// closeMade closes a new page the session's page had the browser make,
// before anything of it runs, and logs the refusal once (the page's
// attachment and its first document request may both come to it).
func (g *targetGuard) closeMade(ctx context.Context, id string, v *newTabVerdict) {
	g.newTabs.mu.Lock()
	first := !v.reported
	v.reported = true
	g.newTabs.mu.Unlock()
	if !first {
		return
	}
	g.ic.log.add(Blocked{Time: time.Now(), URL: v.url, Rule: RuleBrowserMadeTab, Layer: "target",
		Reason: "a page of the session had the browser open this in a tab of its own making (a modified or middle click on a link): such a tab is closed before it runs; to open a page in a new tab, use new_tab"})
	if _, err := g.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": id}); err != nil {
		// It stays paused, with nothing of it run: the guard never lets
		// it go.
		g.logger.Warn("target guard: a tab the browser made for a page could not be closed; it stays paused", "target", id, "error", err)
	}
}

// browserMadeTab closes the page id if the session's page had the browser
// make it, and reports whether it did.
func (g *targetGuard) browserMadeTab(ctx context.Context, id string) bool {
	v := g.verdict(id, "")
	if v == nil || !v.made {
		return false
	}
	g.closeMade(ctx, id, v)
	return true
}

// heldElsewhere reports whether another guard of this daemon on the same
// browser (another session in the user's context) holds the new page id
// as made, or has not judged it yet: a guard that takes it for the user's
// then leaves it paused and attached (releaseAfterOthers).
func (g *targetGuard) heldElsewhere(id string) bool {
	made, undecided := g.othersOn(id)
	return made || undecided
}

// othersOn reports whether another guard of this daemon on the same
// browser judged the new page id made, and whether one has not judged it
// yet.
func (g *targetGuard) othersOn(id string) (made, undecided bool) {
	liveGuards.mu.Lock()
	others := slices.Clone(liveGuards.by[g.wsURL])
	liveGuards.mu.Unlock()
	for _, o := range others {
		if o == g {
			continue
		}
		o.newTabs.mu.Lock()
		if v := o.newTabs.fresh[id]; v != nil {
			made = made || v.decided() && v.made
			undecided = undecided || !v.decided()
		}
		o.newTabs.mu.Unlock()
	}
	return made, undecided
}

// releaseAfterOthers waits until the other guards of this daemon have
// judged the new page id (session: this guard's session on it): if one
// judged it made, it closes it; else this guard lets it run and detaches,
// as for any page of the user's.
func (g *targetGuard) releaseAfterOthers(ctx context.Context, session, id string) {
	deadline := time.Now().Add(newTabURLWait + newTabWait + time.Second)
	for {
		made, undecided := g.othersOn(id)
		if made {
			return
		}
		if !undecided || time.Now().After(deadline) {
			g.release(ctx, session, true)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// browserPaused answers a document request paused by the browser's own
// interception (the user's context): a request of a new page with no
// opener waits for its page's verdict (its URL names the page's when the
// browser has not), fails, and has the page closed, if the session's page
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
	if v := g.verdict(e.FrameID, e.Request.URL); v != nil && v.made {
		g.answer(ctx, "", "Fetch.failRequest", map[string]any{"requestId": e.RequestID, "errorReason": "BlockedByClient"}, e.Request.URL)
		g.closeMade(ctx, e.FrameID, v)
		return
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
// events, which only noteCreated reads (a creation, a change).
func discoveryEvent(m cdpMessage) bool {
	return m.SessionID == "" && strings.HasPrefix(m.Method, "Target.target")
}
