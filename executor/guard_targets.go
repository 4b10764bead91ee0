package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
)

// targetGuard intercepts every target of one session — its tab, each
// popup, iframe and worker — on a DevTools connection of its own, and holds
// each new one paused until its requests are intercepted. chromedp drives
// one session per context and drops the messages of sessions it did not
// open, so the guard speaks the protocol itself.
//
// Two auto-attachments, both with waitForDebuggerOnStart, catch every
// target before its first request:
//
//   - browser-wide, for top-level targets (pages, service and shared
//     workers). A new popup is paused at start like any other page; the
//     guard prepares it if it belongs to the session's browser context, and
//     otherwise resumes it at once and detaches, having enabled nothing on
//     it (another session's tab, or the user's own in live mode). The
//     auto-attachment also attaches the targets that already exist, the
//     session's tab among them.
//   - on each prepared page, for its children (iframes in other processes,
//     dedicated workers).
//
// Preparing a target enables Fetch on it, removes WebRTC from its
// documents, sets the child auto-attachment, and only then lets it run.
type targetGuard struct {
	conn    *websocket.Conn
	context string // browser context id ("" in the user's context)
	ic      *interceptor
	logger  *slog.Logger
	// user: the session works in the user's own browser context, where no
	// egress proxy stands: its targets are told from the user's by their
	// opener, and each gets the WebSocket rules (guard_websockets.go).
	user bool
	// closing is set by Close: a connection that ends without it was
	// lost (lost).
	closing atomic.Bool
	// proxyAuth answers the session's proxy (guardConfig.proxyAuth);
	// challenged are the requests it was given for (under mu).
	proxyAuth  *proxyCredentials
	challenged map[string]bool
	// wsMu orders the WebSocket rules sent: those a target is prepared
	// with and each refresh (refreshWebSocketRules) are sent under it,
	// so the last a target gets is the newest. wsRules are the current
	// rules, wsSessions the guard sessions of the targets given them.
	wsMu       sync.Mutex
	wsRules    []wsRule
	wsSessions map[string]bool
	// throttle is the session's network emulation, a rule for every
	// request sent after the WebSocket rules (nil: none; under wsMu). In
	// a browser context of the session's own, wsSessions are the pages
	// and frames it goes to.
	throttle *wsRule
	// emu is the session's emulation (under mu): what its pages are
	// prepared with (guard_emulation.go).
	emu emulationState

	writeMu sync.Mutex
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpReply
	guarded map[string]bool   // targets prepared (or being prepared) by this guard
	ready   map[string]bool   // targets prepared
	pages   map[string]string // session id -> target id, for the page targets prepared
	home    string            // the session's first tab
	tab     atomic.Value      // string: the session's current tab (curTab)
	// waiting are the preparation results awaited: the first tab's, a new
	// tab's, an adopted tab's (adopt).
	waiting map[string]chan error
	// extra are top-level pages the session made its own besides its
	// first tab and what its pages opened: tabs it opened (new_tab) and,
	// in the user's context, the user's tabs it adopted (switch_tab);
	// users are the latter.
	extra map[string]bool
	users map[string]bool
	done  chan struct{}
	// docGen counts the tab's main-frame commits: it tells the tab's
	// documents apart for the interceptor. It is kept in the read loop, so
	// a request of a new document is never judged before its commit.
	docGen  atomic.Int64
	tabURL  string   // the tab's current document (read loop only)
	workers []string // service and shared workers guarded (target ids)
	// parent is the guard session of each child target's parent (an
	// iframe's page, a worker's page), so a request can be traced to its
	// page.
	parent map[string]string
	// doomed are the page sessions (popups) that were open when the tab
	// left the site a secret was typed on: they may hold the value, and
	// until they are closed nothing they (or their frames and workers)
	// send leaves.
	doomed map[string]bool
	// frames are the ids of the frames of the session's targets (each
	// page's and iframe's own, and every frame their pages attached or
	// navigated): a download is the session's when its frame is. Each
	// maps to the URL of the frame's document as the browser last
	// reported it committed ("" before it did): the page a download
	// began in, as the gate judges it.
	frames map[string]string
	// replaced are, for each frame whose document was replaced by one of
	// another host, the host of the one before and when (under mu): what
	// a request of that frame soon after may have been sent by
	// (refusalDocs).
	replaced map[string]replacedDoc
	// downloads handles the downloads of the session's frames (nil: the
	// guard leaves the browser's download behaviour alone).
	downloads *downloads
	wsURL     string // the browser's DevTools endpoint
	// permissionAsked records a permission request a page reported, with
	// the URL of its frame as the browser reported it ("" when unknown).
	permissionAsked func(payload string, from askingFrame)
	// contexts are, for each guard session, the frame and origin of each
	// main-world execution context the browser reported (read loop
	// only): where a permission report came from (guard_permissions.go).
	contexts map[string]map[int64]reportingContext
	// frameParents are the frames of the session's pages that are
	// embedded, each with the frame that embeds it, as the browser
	// reported them attached or committed (under mu): whether a grant
	// reaches the frame that asked (askingFrame). A page target's main
	// frame has none.
	frameParents map[string]string
	// links tell each page's window group: who may have started a
	// document load (guard_loaders.go; under mu).
	links windowLinks
	// reported are the permissions each document reported (read loop
	// only): it is recorded once (firstReports).
	reported map[reportKey]bool
	// newTabs tells and holds a tab the browser makes for one of the
	// session's pages (guard_newtabs.go).
	newTabs newTabs
	// loads are the main-frame documents (loader ids) that committed
	// while the guard held their page (read loop only): a document the
	// back/forward cache restores that is not one of them is from
	// before (noteRestore).
	loads map[string]bool
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type cdpReply struct {
	result json.RawMessage
	err    error
}

type targetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	URL              string `json:"url"`
	OpenerID         string `json:"openerId"`
	OpenerFrameID    string `json:"openerFrameId"`
	CanAccessOpener  *bool  `json:"canAccessOpener"`
	BrowserContextID string `json:"browserContextId"`
}

// topLevelTargets are the kinds the browser-wide auto-attachment reports:
// the targets a session's pages can create outside their own tree.
var topLevelTargets = []map[string]any{{"type": "page"}, {"type": "service_worker"}, {"type": "shared_worker"}}

// guardConfig says what a target guard guards.
type guardConfig struct {
	wsURL   string      // the browser's DevTools endpoint
	header  http.Header // what the connection to wsURL sends (nil: nothing)
	context string      // the session's browser context ("" for the user's)
	tab     string      // the session's tab
	// user: the session is in the user's browser context; wsRules are
	// then set on each of its targets.
	user      bool
	wsRules   []wsRule
	downloads *downloads
	// permissionAsked records a permission request a page reported
	// (permissions.go).
	permissionAsked func(payload string, from askingFrame)
	// proxyAuth are the credentials the session's proxy asks for (a
	// remote session's, at the daemon's gate): each target's Fetch then
	// handles authentication, and the guard answers the proxy's
	// challenge (guard_proxyauth.go). nil: the proxy asks none.
	proxyAuth *proxyCredentials
}

// guardTargets connects to the browser and guards the tab and every
// target that descends from it or opens in its browser context (in the
// user's context: that one of the session's pages opened). It returns once
// the tab is intercepted.
func guardTargets(ctx context.Context, cfg guardConfig, ic *interceptor, logger *slog.Logger) (*targetGuard, error) {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := dialer.DialContext(ctx, cfg.wsURL, cfg.header)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.wsURL, err)
	}
	conn.SetReadLimit(64 << 20)
	tab := cfg.tab
	g := &targetGuard{conn: conn, context: cfg.context, ic: ic, logger: logger, user: cfg.user, wsRules: cfg.wsRules, wsSessions: map[string]bool{},
		pending: map[int64]chan cdpReply{}, guarded: map[string]bool{}, ready: map[string]bool{}, pages: map[string]string{}, home: tab,
		parent: map[string]string{}, doomed: map[string]bool{}, extra: map[string]bool{}, users: map[string]bool{},
		frames: map[string]string{tab: ""}, replaced: map[string]replacedDoc{}, downloads: cfg.downloads, wsURL: cfg.wsURL, permissionAsked: cfg.permissionAsked, proxyAuth: cfg.proxyAuth,
		contexts: map[string]map[int64]reportingContext{}, frameParents: map[string]string{}, reported: map[reportKey]bool{}, loads: map[string]bool{},
		waiting: map[string]chan error{tab: make(chan error, 1)}, done: make(chan struct{})}
	g.tab.Store(tab)
	tabDone := g.waiting[tab]
	ic.docGen = g.docGen.Load
	go g.read()
	// Downloads first: before the session's pages run, Chromium is told
	// where each of them goes (never a directory of its own choosing),
	// and tells this connection of every one.
	if cfg.user {
		if err := g.joinLive(); err != nil {
			g.conn.Close()
			return nil, err
		}
	}
	if err := g.setDownloadBehavior(ctx); err != nil {
		g.Close()
		return nil, fmt.Errorf("set the download behaviour: %w", err)
	}
	// Before any page is attached: a tab the browser makes for one of the
	// session's pages is told and held (guard_newtabs.go).
	if err := g.holdNewPages(ctx); err != nil {
		g.Close()
		return nil, fmt.Errorf("hold the tabs the browser makes: %w", err)
	}
	if _, err := g.call(ctx, "", "Target.setAutoAttach", map[string]any{
		"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true, "filter": topLevelTargets,
	}); err != nil {
		g.Close()
		return nil, err
	}
	// The auto-attachment reports the existing tab too; wait until it is
	// prepared, so the session's first request is already intercepted.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case err = <-tabDone:
	case <-wait.Done():
		err = fmt.Errorf("the session's tab was not attached: %w", wait.Err())
	case <-g.done:
		err = errors.New("devtools connection closed")
	}
	if err != nil {
		g.Close()
		return nil, fmt.Errorf("guard tab %s: %w", tab, err)
	}
	return g, nil
}

// curTab is the session's current tab.
func (g *targetGuard) curTab() string { return g.tab.Load().(string) }

// setTab makes another of the session's tabs its current one: the tab
// whose commits count as the documents the interceptor tells apart.
func (g *targetGuard) setTab(id string) {
	g.tab.Store(id)
	g.docGen.Add(1) // another document than the one judged before
}

// adopt puts a top-level page under the guard as the session's — a tab
// the session opened (new_tab) or, in the user's context, the user's own
// tab (user: switch_tab) — and returns once it is prepared: requests
// intercepted, WebRTC gone, the WebSocket rules and child auto-attachment
// set. A page the guard already prepared (in the session's own browser
// context every page is) needs nothing more.
func (g *targetGuard) adopt(ctx context.Context, id string, user bool) error {
	done := make(chan error, 1)
	g.mu.Lock()
	if g.ready[id] {
		g.mu.Unlock()
		return nil
	}
	g.waiting[id] = done
	preparing := g.guarded[id] // the auto-attachment is preparing it now
	if !preparing {
		g.extra[id] = true
		if user {
			g.users[id] = true
		}
	}
	g.mu.Unlock()
	fail := func(err error) error {
		g.mu.Lock()
		if !preparing {
			delete(g.extra, id)
			delete(g.users, id)
		}
		delete(g.waiting, id)
		g.mu.Unlock()
		return err
	}
	if !preparing {
		if _, err := g.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}); err != nil {
			return fail(fmt.Errorf("attach to tab %s: %w", id, err))
		}
	}
	select {
	case err := <-done:
		if err != nil {
			return fail(fmt.Errorf("guard tab %s: %w", id, err))
		}
		if !preparing {
			g.seedFrames(ctx, id) // its frames from before are the session's now
		}
		return nil
	case <-ctx.Done():
		return fail(fmt.Errorf("guard tab %s: %w", id, ctx.Err()))
	case <-g.done:
		return fail(errors.New("devtools connection closed"))
	}
}

// letGo ends the guard's hold on a top-level tab of the session's that it
// lets go (close_tab, or an adopted tab released): its guard session
// detaches, which ends its interception and removes the guard's scripts
// for its next documents. Its frames and workers detach with it.
func (g *targetGuard) letGo(id string) {
	g.mu.Lock()
	var sessions []string
	for session, t := range g.pages {
		if t == id {
			sessions = append(sessions, session)
			delete(g.pages, session)
		}
	}
	delete(g.extra, id)
	delete(g.users, id)
	delete(g.guarded, id)
	delete(g.ready, id)
	g.mu.Unlock()
	for _, session := range sessions {
		if _, err := g.call(context.Background(), "", "Target.detachFromTarget", map[string]any{"sessionId": session}); err != nil {
			g.logger.Debug("target guard: detach from a tab let go", "target", id, "error", err)
		}
	}
}

// sessionOf is the guard's session on the page target id ("" when none).
func (g *targetGuard) sessionOf(id string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for session, t := range g.pages {
		if t == id {
			return session
		}
	}
	return ""
}

// isUserTab reports whether id is a tab of the user's that the session
// adopted.
func (g *targetGuard) isUserTab(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.users[id]
}

// Close drops the guard's connection (its sessions detach; nothing stays
// paused on it).
func (g *targetGuard) Close() {
	g.closing.Store(true)
	g.conn.Close()
	if g.user {
		g.leaveLive()
	}
}

// lost is closed when the guard's DevTools connection has ended; it was
// lost, not closed, when closedByUs says so.
func (g *targetGuard) lost() <-chan struct{} { return g.done }

// closedByUs says whether Close ended the connection.
func (g *targetGuard) closedByUs() bool { return g.closing.Load() }

func (g *targetGuard) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	ch, err := g.send(session, method, params)
	if err != nil {
		return nil, err
	}
	return g.await(ctx, method, ch, guardCallWait)
}

// guardCallWait bounds the answer to one of the guard's commands.
const guardCallWait = 10 * time.Second

// send writes a command and returns where its answer will come.
func (g *targetGuard) send(session, method string, params any) (chan cdpReply, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.nextID++
	id := g.nextID
	ch := make(chan cdpReply, 1)
	g.pending[id] = ch
	g.mu.Unlock()
	g.writeMu.Lock()
	err = g.conn.WriteJSON(cdpMessage{ID: id, Method: method, Params: raw, SessionID: session})
	g.writeMu.Unlock()
	return ch, err
}

// await waits up to d for the answer to a command sent.
func (g *targetGuard) await(ctx context.Context, method string, ch chan cdpReply, d time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	select {
	case r := <-ch:
		return r.result, r.err
	case <-g.done:
		return nil, errors.New("devtools connection closed")
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (g *targetGuard) read() {
	defer close(g.done)
	for {
		var m cdpMessage
		if err := g.conn.ReadJSON(&m); err != nil {
			return
		}
		if m.ID != 0 {
			g.mu.Lock()
			ch := g.pending[m.ID]
			delete(g.pending, m.ID)
			g.mu.Unlock()
			if ch != nil {
				var err error
				if m.Error != nil {
					err = errors.New(m.Error.Message)
				}
				ch <- cdpReply{result: m.Result, err: err}
			}
			continue
		}
		if strings.HasPrefix(m.Method, "Network.") {
			continue // on for the WebSocket rules only; its events are not read
		}
		if m.Method == "Page.frameNavigated" {
			g.noteRestore(m) // guard_permissions.go
			g.noteCommit(m)  // in order, before any later request is judged
			continue
		}
		if m.Method == "Page.frameAttached" {
			g.noteFrame(m)
			continue
		}
		if m.Method == "Page.navigatedWithinDocument" {
			g.noteWithinDocument(m)
			continue
		}
		if strings.HasPrefix(m.Method, "Browser.download") {
			g.downloadEvent(m) // in order: a download's progress after its start
			continue
		}
		if discoveryEvent(m) {
			if m.Method == "Target.targetCreated" || m.Method == "Target.targetInfoChanged" {
				g.noteCreated(m) // guard_newtabs.go
			}
			continue
		}
		if m.Method == "Target.attachedToTarget" {
			g.notePopup(m)   // while the action that opened it still runs
			g.noteNewPage(m) // before any request of it is paused
			g.noteCreator(m) // before its creator's frame commits another document
		}
		if strings.HasPrefix(m.Method, "Runtime.") {
			g.runtimeEvent(m) // in order with the commits (guard_permissions.go)
			continue
		}
		if m.Method == "Target.detachedFromTarget" {
			g.noteClosed(m)
			var e struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(m.Params, &e) == nil {
				for id := range g.contexts[e.SessionID] {
					g.forgetReports(e.SessionID, id)
				}
				g.forgetReports(e.SessionID, unknownContext)
				delete(g.contexts, e.SessionID)
			}
			go g.forgetRules(m) // not in the read loop: a refresh may hold wsMu
			continue
		}
		if m.Method == "Page.frameRequestedNavigation" {
			g.noteFrameNav(m)  // the renderer says so before the request leaves
			g.noteNewTabAsk(m) // and before the browser makes a tab for it
			continue
		}
		go g.event(m) // never block the read loop: handlers call back
	}
}

// notePopup tells the interceptor of a new page in the session's browser
// context (a popup) that attaches while an action runs.
func (g *targetGuard) notePopup(m cdpMessage) {
	var e struct {
		SessionID  string     `json:"sessionId"`
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(m.Params, &e) == nil && e.TargetInfo.Type == "page" &&
		e.TargetInfo.TargetID != g.curTab() && g.isOurs(e.TargetInfo, false) {
		g.ic.notePopup(e.SessionID)
	}
}

// leftSite is done when the tab has left the site a secret was typed on
// (prev is the URL of its last page there): what of the site could still
// hold the value and send it once no longer held — its popups and its
// service workers, which outlive its pages — is closed and unregistered.
func (g *targetGuard) leftSite(prev string) {
	g.closePopups(g.curTab())
	g.mu.Lock()
	workers := g.workers
	g.workers = nil
	g.mu.Unlock()
	for _, id := range workers {
		if _, err := g.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": id}); err != nil {
			g.logger.Debug("target guard: stop a worker", "target", id, "error", err)
		}
	}
	u, err := url.Parse(prev)
	if err != nil || u.Host == "" {
		return
	}
	origin := u.Scheme + "://" + u.Host
	tabSession := g.sessionOf(g.curTab())
	if tabSession == "" {
		return
	}
	if _, err := g.call(context.Background(), tabSession, "Storage.clearDataForOrigin",
		map[string]any{"origin": origin, "storageTypes": "service_workers"}); err != nil {
		g.logger.Warn("target guard: the service workers of a site a secret was typed on could not be removed", "origin", origin, "error", err)
	}
}

// closePopups closes the session's pages other than keep: its current
// tab while it runs (leftSite), its first tab when it ends (that one
// closes with its chromedp context). The user's tabs it adopted are never
// closed: they are the user's.
func (g *targetGuard) closePopups(keep string) {
	for _, id := range g.ownPages(keep) {
		if _, err := g.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": id}); err != nil {
			g.logger.Debug("target guard: close a popup", "target", id, "error", err)
		}
	}
}

// noteFrameNav tells the interceptor of a navigation that a page or frame
// of the session starts while an action runs (or its document is still
// shown), with the reason Chromium names: a form submission
// (formSubmissionGet, formSubmissionPost), a link (anchorClick), a script
// (scriptInitiated), ….
func (g *targetGuard) noteFrameNav(m cdpMessage) {
	var e struct {
		Reason string `json:"reason"`
		URL    string `json:"url"`
	}
	if json.Unmarshal(m.Params, &e) == nil && e.Reason != "" {
		g.ic.noteFrameNav(e.URL, e.Reason) // every reason: a lookup then finds one at once
	}
}

// noteCommit counts a commit of the tab's main frame.
func (g *targetGuard) noteCommit(m cdpMessage) {
	var e struct {
		Frame struct {
			ID             string `json:"id"`
			ParentID       string `json:"parentId"`
			URL            string `json:"url"`
			URLFragment    string `json:"urlFragment"`
			SecurityOrigin string `json:"securityOrigin"`
			LoaderID       string `json:"loaderId"`
			UnreachableURL string `json:"unreachableUrl"`
		} `json:"frame"`
	}
	if json.Unmarshal(m.Params, &e) != nil {
		return
	}
	g.frameCommitted(e.Frame.ID, e.Frame.URL)
	if e.Frame.UnreachableURL != "" {
		// An error page (chrome-error://chromewebdata/) of a load that
		// failed: the tab shows the URL that failed, credited as its load.
		g.errorPageCommitted(e.Frame.ID, e.Frame.UnreachableURL, e.Frame.SecurityOrigin)
	} else {
		g.urlCommitted(e.Frame.ID, e.Frame.URL, e.Frame.URLFragment, e.Frame.SecurityOrigin)
	}
	if e.Frame.ParentID != "" {
		g.frameEmbedded(e.Frame.ID, e.Frame.ParentID)
		return
	}
	g.mu.Lock()
	g.noteLoader(e.Frame.ID, e.Frame.LoaderID) // a tab's document, which a read of the tab names
	g.mu.Unlock()
	if cur := g.curTab(); e.Frame.ID == cur {
		g.docGen.Add(1)
		g.ic.acting.committed(e.Frame.URL)
		host := ""
		if u, err := scope.ParseURL(e.Frame.URL); err == nil {
			host = u.Host
		}
		prev := g.tabURL
		g.tabURL = e.Frame.URL
		if g.ic.bound.Committed(host) {
			g.mu.Lock()
			for session, id := range g.pages {
				if id != cur {
					g.doomed[session] = true
				}
			}
			g.mu.Unlock()
			go g.leftSite(prev)
		}
	}
}

func (g *targetGuard) event(m cdpMessage) {
	ctx := context.Background()

	switch m.Method {
	case "Fetch.requestPaused":
		if m.SessionID == "" {
			g.browserPaused(ctx, m) // guard_newtabs.go
			return
		}
		var e struct {
			RequestID    string `json:"requestId"`
			NetworkID    string `json:"networkId"` // the Network domain's id of the request
			FrameID      string `json:"frameId"`
			ResourceType string `json:"resourceType"`
			Redirected   string `json:"redirectedRequestId"`
			Request      struct {
				URL         string `json:"url"`
				URLFragment string `json:"urlFragment"`
				Method      string `json:"method"`
			} `json:"request"`
			// Set when the request is paused at its response.
			ResponseStatus  int          `json:"responseStatusCode"`
			ResponseText    string       `json:"responseStatusText"`
			ResponseError   string       `json:"responseErrorReason"`
			ResponseHeaders []httpHeader `json:"responseHeaders"`
		}
		if json.Unmarshal(m.Params, &e) != nil {
			return
		}
		url := e.Request.URL + e.Request.URLFragment
		if e.ResponseStatus != 0 || e.ResponseError != "" {
			g.continueResponse(ctx, m.SessionID, e.RequestID, e.FrameID, url, e.ResponseStatus, e.ResponseText, e.ResponseHeaders)
			return
		}
		// The documents that may have made it, as they are now: the
		// request may wait for its host's turn (pacing) while the frame
		// moves on to another document.
		var docs []string
		if e.ResourceType == "Document" {
			docs = g.loaderDocs(e.FrameID, e.RequestID, e.NetworkID, e.Redirected, e.Request.URL)
		} else {
			docs = g.refusalDocs(e.FrameID, e.ResourceType, time.Now())
		}
		pageNav := e.ResourceType == "Document" && g.isPage(m.SessionID, e.FrameID)
		if g.isDoomed(m.SessionID) {
			g.refuse(ctx, m.SessionID, e.RequestID, e.NetworkID, docs, url, scope.Verdict{URL: url, Rule: ruleSecretBound,
				Reason: "a page that was open while the tab was on the site a secret was typed on sends nothing until it is closed"})
			return
		}
		v := g.ic.decideRequest(pausedRequest{session: m.SessionID, id: e.RequestID, url: url, method: e.Request.Method,
			resourceType: e.ResourceType, redirectedFrom: e.Redirected, pageNav: pageNav, tabNav: pageNav && e.FrameID == g.curTab()})
		if v.Allowed {
			g.answer(ctx, m.SessionID, "Fetch.continueRequest", map[string]any{"requestId": e.RequestID}, url)
			return
		}
		if g.refuse(ctx, m.SessionID, e.RequestID, e.NetworkID, docs, url, v) {
			// A page target's main frame has the target's id: a refused
			// document load there is the tab's own navigation.
			if e.ResourceType == "Document" && g.isPage(m.SessionID, e.FrameID) {
				g.ic.log.navBlocked(e.FrameID, url)
			}
		}
	case "Fetch.authRequired":
		g.authRequired(ctx, m)
	case "Target.attachedToTarget":
		var e struct {
			SessionID          string     `json:"sessionId"`
			TargetInfo         targetInfo `json:"targetInfo"`
			WaitingForDebugger bool       `json:"waitingForDebugger"`
		}
		if json.Unmarshal(m.Params, &e) != nil {
			return
		}
		t := e.TargetInfo
		if m.SessionID == "" && g.browserMadeTab(ctx, t.TargetID) {
			return
		}
		ours := g.isOurs(t, m.SessionID != "")
		g.mu.Lock()
		seen := g.guarded[t.TargetID]
		if ours && !seen {
			g.guarded[t.TargetID] = true
		}
		g.mu.Unlock()
		if !ours || seen {
			if e.WaitingForDebugger && g.user && g.heldElsewhere(t.TargetID) {
				// A new page another of the daemon's sessions holds (its
				// page had the browser make it, or it has not judged it
				// yet) stays paused and attached until that one has: a
				// detach, like a run, would let it go.
				g.releaseAfterOthers(ctx, e.SessionID, t.TargetID)
				return
			}
			g.release(ctx, e.SessionID, e.WaitingForDebugger)
			return
		}
		g.noteOpener(t)
		g.mu.Lock()
		if t.Type == "page" {
			g.pages[e.SessionID] = t.TargetID
		}
		if t.Type == "page" || t.Type == "iframe" {
			if _, ok := g.frames[t.TargetID]; !ok {
				g.frames[t.TargetID] = "" // its main frame has its id
			}
		}
		if m.SessionID != "" {
			g.parent[e.SessionID] = m.SessionID
		}
		g.mu.Unlock()
		if t.Type == "service_worker" || t.Type == "shared_worker" {
			g.mu.Lock()
			g.workers = append(g.workers, t.TargetID)
			g.mu.Unlock()
		}
		err := g.prepare(ctx, e.SessionID, t.TargetID, t.Type, !e.WaitingForDebugger)
		if err != nil {
			g.logger.Warn("target guard: a target could not be guarded; it stays paused",
				"target", t.TargetID, "type", t.Type, "error", err)
		}
		g.mu.Lock()
		// A tab let go while it was being prepared (an adoption that
		// timed out) is not kept: its guard session detaches.
		wanted := g.guarded[t.TargetID]
		if err == nil && wanted {
			g.ready[t.TargetID] = true
		}
		done := g.waiting[t.TargetID]
		delete(g.waiting, t.TargetID)
		g.mu.Unlock()
		if !wanted {
			g.release(ctx, e.SessionID, false)
		}
		if done != nil {
			done <- err
		}
	}
}

// guardWorld names the isolated world the guard's own page scripts run in
// (no_speculation.js), apart from observe's (worldName).
const guardWorld = "browsergate-guard"

// httpHeader is one header of a paused response.
type httpHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// continueResponse lets a document's response (paused at its headers, in
// the user's context) go on, without a Speculation-Rules header: the rules
// it names would have the browser process prefetch and prerender where no
// interception sees it (no_speculation.js takes out the inline ones). Its
// own Permissions-Policy and Feature-Policy fields are taken out and it
// gets browsergate's Permissions-Policy alone, which turns off in the
// document what a permission prompt could ask for (permissions.go).
func (g *targetGuard) continueResponse(ctx context.Context, session, id, frame, url string, status int, text string, headers []httpHeader) {
	kept := make([]httpHeader, 0, len(headers)+1)
	for _, h := range headers {
		if !droppedResponseHeader(h.Name) {
			kept = append(kept, h)
		}
	}
	changed := len(kept) != len(headers)
	// (Not on a redirect, whose document is the next response's, nor on
	// a response that failed.)
	if status >= 200 && (status < 300 || status >= 400) {
		kept = append(kept, httpHeader{Name: "Permissions-Policy", Value: permissionsPolicy})
		changed = true
	}
	if !changed {
		g.answer(ctx, session, "Fetch.continueResponse", map[string]any{"requestId": id}, url)
		return
	}
	// Changed headers go with the status line (Chromium wants all three).
	params := map[string]any{"requestId": id, "responseCode": status, "responseHeaders": kept}
	if text != "" {
		params["responsePhrase"] = text
	}
	if !g.answer(ctx, session, "Fetch.continueResponse", params, url) {
		g.refuse(ctx, session, id, "", g.frameLoaders(cdp.FrameID(frame), url, ""), url, scope.Verdict{URL: url, Rule: "speculation-rules",
			Reason: "the response's headers could not be changed (its Speculation-Rules taken out, browsergate's Permissions-Policy added)"})
	}
}

// droppedResponseHeader reports whether a document's response header is
// taken out before the browser reads it (continueResponse):
//
//   - Speculation-Rules, whose rules the browser process would follow
//     where no interception sees them;
//   - the server's Permissions-Policy: Chromium joins every field of the
//     header into one list and, if that list does not parse, drops the
//     whole policy, browsergate's with it (a server's "camera=(self" would
//     turn every feature back on). Only browsergate's own field is sent;
//   - Feature-Policy, the header Permissions-Policy replaced, which
//     Chromium 156 still reads: it has no say on a feature the
//     Permissions-Policy names, but it is the server's, and browsergate
//     does not let the server's policy headers near its own.
//
// The page loses whatever else its server's policy turned off (autoplay,
// sync-xhr, ...): none of it is a permission prompt.
func droppedResponseHeader(name string) bool {
	name = strings.TrimSpace(name)
	for _, h := range []string{"Speculation-Rules", "Permissions-Policy", "Feature-Policy"} {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// refusalDocs are the hosts of the documents that may have made a request
// of frame refused at at (Blocked.Docs), as the browser named them. For a
// document load, every document of the frame's window group (loadDocs,
// guard_loaders.go). For another request, the frame's document (its
// parent's when it has no host of its own: about:blank, srcdoc, data:)
// and the one it replaced, when that was less than gate.LeftGrace before
// (its unload handlers run after the next document committed). nil when
// none is known.
func (g *targetGuard) refusalDocs(frame, kind string, at time.Time) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if kind == "Document" {
		return g.loadDocs(frame, at)
	}
	doc := g.docHost(frame)
	if doc == "" {
		return nil
	}
	docs := []string{doc}
	if r, ok := g.replaced[frame]; ok && at.Sub(r.at) < gate.LeftGrace {
		docs = append(docs, r.host)
	}
	return docs
}

// docHost is the host of frame's document, or of the nearest frame
// embedding it that has one ("": none known). g.mu held.
func (g *targetGuard) docHost(frame string) string {
	for depth := 0; frame != "" && depth <= maxEmbedDepth; depth++ {
		if h := hostOf(g.frames[frame]); h != "" {
			return h
		}
		frame = g.frameParents[frame]
	}
	return ""
}

// replacedDoc is the host of a frame's document before the one it has,
// and when it was replaced.
type replacedDoc struct {
	host string
	at   time.Time
}

// refuse fails a paused request (network: the Network domain's id of it,
// "" when not known; docs: the documents that may have made it, taken as
// it was paused, refusalDocs) and logs the refusal for the session.
func (g *targetGuard) refuse(ctx context.Context, session, id, network string, docs []string, url string, v scope.Verdict) bool {
	if !g.answer(ctx, session, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"}, url) {
		return false
	}
	b := Blocked{Time: time.Now(), URL: url, Request: network, Rule: v.Rule, Reason: v.Reason, Layer: "interception", Ask: v.Ask, Docs: docs}
	g.ic.log.add(b)
	return true
}

// isDoomed reports whether a session is a doomed popup or one of its
// frames or workers.
func (g *targetGuard) isDoomed(session string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; session != "" && i < 32; i++ {
		if g.doomed[session] {
			return true
		}
		session = g.parent[session]
	}
	return false
}

// isOurs decides whether a target the guard attached is the session's. A
// child of a prepared page (child: it attached on its parent's session) is
// the session's. A top-level target is, in a browser context of the
// session's own, if it lives there; in the user's context, if it is the
// session's tab or a page one of the session's pages opened (the user's
// tabs, and the service and shared workers, are the user's).
func (g *targetGuard) isOurs(t targetInfo, child bool) bool {
	if child || t.TargetID == g.home || t.TargetID == g.curTab() {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.extra[t.TargetID] {
		return true
	}
	if !g.user {
		return t.BrowserContextID == g.context
	}
	if t.Type == "page" {
		for _, id := range g.pages {
			if t.OpenerID == id {
				return true
			}
		}
		return false
	}
	// A service or shared worker is the user's: the session's pages have
	// neither (user_context.js), and the user's own pages share them.
	return false
}

// isPage reports whether frame is the main frame of the page target the
// guard attached as session.
func (g *targetGuard) isPage(session, frame string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return frame != "" && g.pages[session] == frame
}

// release lets a target that is not the session's run, and detaches from
// it: the guard enables nothing on it.
func (g *targetGuard) release(ctx context.Context, session string, waiting bool) {
	if waiting {
		if _, err := g.call(ctx, session, "Runtime.runIfWaitingForDebugger", map[string]any{}); err != nil {
			g.logger.Debug("target guard: resuming a target of another context", "error", err)
		}
	}
	if _, err := g.call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": session}); err != nil {
		g.logger.Debug("target guard: detaching from a target of another context", "error", err)
	}
}

func (g *targetGuard) answer(ctx context.Context, session, method string, params map[string]any, url string) bool {
	if _, err := g.call(ctx, session, method, params); err != nil {
		g.logger.Warn("target guard: answering a paused request failed", "url", url, "method", method, "error", err)
		return false
	}
	return true
}

// prepare enables interception on one target session, removes WebRTC from
// its documents, makes its own children pause at start, and lets it run.
// renderlessWait bounds the wait for an answer that a target without a
// renderer yet gives only once it runs.
const renderlessWait = 200 * time.Millisecond

func (g *targetGuard) prepare(ctx context.Context, session, target, kind string, running bool) error {
	// A target that is already running (a user's tab adopted) answers at
	// once: each answer is awaited in full, so that nothing it loads next
	// (the adoption's reload) can overtake its interception or its
	// service-worker bypass. A paused one may answer only once it runs.
	wait, tolerate := renderlessWait, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
	if running {
		wait, tolerate = guardCallWait, func(error) bool { return false }
	}
	// late are the answers not awaited in full (a paused target with no
	// renderer yet): they are read once it runs (checkLate).
	var late []lateReply
	patterns := []map[string]any{{"urlPattern": "*"}}
	if g.user {
		// Documents are also paused at their response headers, for the
		// Speculation-Rules header (continueResponse).
		patterns = append(patterns, map[string]any{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"})
	}
	enable := map[string]any{"patterns": patterns}
	if g.proxyAuth != nil {
		enable["handleAuthRequests"] = true
	}
	if _, err := g.call(ctx, session, "Fetch.enable", enable); err != nil {
		if !strings.Contains(kind, "worker") || g.user {
			// In the user's context no proxy stands behind interception:
			// a target it cannot intercept stays paused. That includes a
			// dedicated worker (no Fetch domain in Chromium 156): let run,
			// its nested workers and its WebTransport went around the
			// guard (TestLivePagesReachNothingByWorkers/dw-nested,
			// TestEgressWebTransport/live), so for now it does not run.
			return fmt.Errorf("Fetch.enable: %w", err)
		}
		// Not every worker kind speaks Fetch; its traffic still goes
		// through the session's egress proxy.
		g.logger.Debug("target guard: no Fetch on a worker", "type", kind, "error", err)
	}
	if g.user {
		// WebSockets: no proxy sees them here, so the network service
		// holds them to the scope (guard_websockets.go), before the target runs.
		for _, c := range []struct {
			method string
			params map[string]any
		}{
			{"Network.enable", map[string]any{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}},
			{wsRulesMethod, nil}, // the current rules, as they are sent
			// The user's own service workers do not answer for the
			// session's pages (they would fetch unguarded).
			{"Network.setBypassServiceWorker", map[string]any{"bypass": true}},
		} {
			var ch chan cdpReply
			var err error
			if c.method == wsRulesMethod {
				g.wsMu.Lock()
				g.wsSessions[session] = true
				ch, err = g.send(session, c.method, map[string]any{"matchedNetworkConditions": g.netRulesFor(session)})
				g.wsMu.Unlock()
			} else {
				ch, err = g.send(session, c.method, c.params)
			}
			if err == nil {
				if _, err = g.await(ctx, c.method, ch, wait); err != nil && tolerate(err) {
					late = append(late, lateReply{c.method, ch})
				}
			}
			if err != nil && !tolerate(err) {
				return fmt.Errorf("%s: %w", c.method, err)
			}
		}
	}
	if !g.user && (kind == "page" || kind == "iframe") {
		// The session's network emulation (guard_emulation.go), before
		// the target runs; sent only while there is one.
		g.wsMu.Lock()
		g.wsSessions[session] = true
		var ch chan cdpReply
		var err error
		if g.throttle != nil {
			ch, err = g.send(session, wsRulesMethod, map[string]any{"matchedNetworkConditions": g.netRules()})
		}
		g.wsMu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", wsRulesMethod, err)
		}
		if ch != nil {
			late = append(late, lateReply{wsRulesMethod, ch})
		}
	}
	if kind == "page" || kind == "iframe" {
		// The no-WebRTC script is registered with the Page domain, which
		// must be on. The commands are sent in order, and the target's
		// agent handles them in order, ahead of the runIfWaitingForDebugger
		// that lets it run. A page that has no renderer yet (a popup
		// opened with noopener) answers them only once it runs, so the
		// answers are awaited briefly (wait), for their errors.
		enable, err := g.send(session, "Page.enable", map[string]any{})
		if err != nil {
			return fmt.Errorf("Page.enable: %w", err)
		}
		// The permission script reports through a binding, added first so
		// that the script finds it (permissions.go); Chromium 156 reports
		// a binding's calls only to a client that has Runtime enabled.
		runtimeOn, err := g.send(session, "Runtime.enable", map[string]any{})
		if err != nil {
			return fmt.Errorf("Runtime.enable: %w", err)
		}
		binding, err := g.send(session, "Runtime.addBinding", map[string]any{"name": permissionBinding})
		if err != nil {
			return fmt.Errorf("Runtime.addBinding: %w", err)
		}
		source := noWebRTCJS + ";\n" + permissionsScript(g.user)
		if g.user {
			source += ";\n" + userContextJS
		}
		scripts := []map[string]any{{"source": source, "runImmediately": true}}
		if g.user {
			scripts = append(scripts, map[string]any{"source": noSpeculationJS, "runImmediately": true, "worldName": guardWorld})
		}
		// The hold of a click that may open a tab (element.go), ahead of
		// the page's listeners.
		scripts = append(scripts, map[string]any{"source": noNewTabEarlyJS, "runImmediately": true, "worldName": worldName})
		if kind == "page" {
			// A tab's documents are watched for the quiet-DOM wait
			// (dom_quiet.go), in the world its reads run in.
			scripts = append(scripts, map[string]any{"source": domWatchJS, "runImmediately": true, "worldName": worldName})
		}
		replies := []chan cdpReply{enable, runtimeOn, binding}
		replyMethods := []string{"Page.enable", "Runtime.enable", "Runtime.addBinding"}
		for _, params := range scripts {
			ch, err := g.send(session, "Page.addScriptToEvaluateOnNewDocument", params)
			if err != nil {
				return fmt.Errorf("Page.addScriptToEvaluateOnNewDocument: %w", err)
			}
			replies, replyMethods = append(replies, ch), append(replyMethods, "Page.addScriptToEvaluateOnNewDocument")
		}
		if kind == "page" {
			// The session's emulation (guard_emulation.go), before the
			// page's first document.
			for _, c := range g.emulationCalls(target) {
				ch, err := g.send(session, c.method, c.params)
				if err != nil {
					return fmt.Errorf("%s: %w", c.method, err)
				}
				replies, replyMethods = append(replies, ch), append(replyMethods, c.method)
			}
		}
		for i, ch := range replies {
			method := replyMethods[i]
			if _, err := g.await(ctx, method, ch, wait); err != nil {
				if !tolerate(err) {
					return fmt.Errorf("%s: %w", method, err)
				}
				// A page with no renderer yet answers none of them until
				// it runs: the rest are not waited for now either, or each
				// would hold its start back by wait again. They are read
				// once it runs.
				for j := i; j < len(replies); j++ {
					late = append(late, lateReply{replyMethods[j], replies[j]})
				}
				break
			}
		}
	}
	if !strings.Contains(kind, "worker") {
		params := map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}
		if g.user {
			// The service and shared workers a page relates to are the
			// user's in the user's context (the session's pages have
			// none): the page's auto-attachment leaves them alone.
			params["filter"] = []map[string]any{{"type": "service_worker", "exclude": true}, {"type": "shared_worker", "exclude": true}, {}}
		}
		ch, err := g.send(session, "Target.setAutoAttach", params)
		if err == nil {
			if _, err = g.await(ctx, "Target.setAutoAttach", ch, wait); err != nil && tolerate(err) {
				late = append(late, lateReply{"Target.setAutoAttach", ch})
			}
		}
		if err != nil && !tolerate(err) {
			return fmt.Errorf("Target.setAutoAttach: %w", err)
		}
	}
	_, err := g.call(ctx, session, "Runtime.runIfWaitingForDebugger", map[string]any{})
	if err == nil && len(late) > 0 {
		go g.checkLate(session, target, late)
	}
	return err
}

// lateReply is the answer to a command of prepare's that was not awaited
// in full.
type lateReply struct {
	method string
	ch     chan cdpReply
}

// checkLate reads the answers a target gave only once it ran. Any
// failure (an error, or no answer at all) means the target may be
// running without its interception, its WebSocket rules or its page
// scripts: it is closed (fail closed), with the top-level page it
// belongs to for a frame or a worker of one.
func (g *targetGuard) checkLate(session, target string, late []lateReply) {
	for _, r := range late {
		_, err := g.await(context.Background(), r.method, r.ch, guardCallWait)
		if err == nil {
			continue
		}
		select {
		case <-g.done:
			return // the connection went: nothing of it is guarded, or runs on it
		default:
		}
		page := g.pageOf(session)
		g.logger.Warn("target guard: a target failed a command of its preparation once it ran; its page is closed",
			"method", r.method, "page", page, "error", err)
		if page == "" {
			page = target // a service or shared worker
		}
		if _, err := g.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": page}); err != nil {
			g.logger.Warn("target guard: closing a target that failed its preparation", "page", page, "error", err)
		}
		return
	}
}

// pageOf is the page target a guard session is, or is a frame or worker
// of ("" when the guard knows none).
func (g *targetGuard) pageOf(session string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; session != "" && i < 32; i++ {
		if id, ok := g.pages[session]; ok {
			return id
		}
		session = g.parent[session]
	}
	return ""
}
