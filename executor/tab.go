package executor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/scope/egress"
)

// tab is a session's browser context and the one tab in it that the
// session drives: its chromedp context, the watch on its events, the
// element refs of its latest snapshot and the isolated world.
type tab struct {
	ctx       context.Context // chromedp context of the tab; nil until first use
	cancel    context.CancelFunc
	browserID cdp.BrowserContextID
	watch     *pageWatch
	refs      map[string]snapshot.Ref
	refsNavs  int // navigation count when refs were handed out: the document they belong to
	// paged is the latest snapshot or read that did not fit one reply.
	paged     paged
	worldID   runtime.ExecutionContextID // the isolated world (see world.go)
	worldNavs int                        // navigation count when worldID was made
	// treeBuilt says a snapshot has had Chromium build the accessibility
	// tree of the document of navigation treeNavs (buildTree).
	treeBuilt bool
	treeNavs  int
	frames    *frameConns // its out-of-process frames attached (oopif.go)
}

// open reports whether the tab is usable: its context alive and its
// target still attached (a tab that closed, by its page's window.close()
// or the user's hand, is not).
func (t *tab) open() bool { return t.ctx != nil && attached(t.ctx) }

// ensureTab opens the session's browser context and tab on first use, and
// again if the tab died (browser crash, live Chrome restarted, reset
// failure); a reopened tab starts blank and its old refs are gone.
func (s *session) ensureTab() error {
	if s.tab.open() || s.backToFirstTab() {
		return nil
	}
	lost := s.egress.guard // the context whose tabs are gone (nil: none yet)
	s.closeTabs()
	if err := s.openContext(); err != nil {
		return err
	}
	if lost == nil {
		return nil
	}
	// The context opened again (its first tab crashed or was closed) is
	// the session's still: it gets the session's emulation back, and the
	// autoload state again at this call (a context of the session's own
	// is opened empty).
	s.autoloadDone = s.autoloadDeny != nil
	ctx, cancel := context.WithTimeout(s.tab.ctx, tabAttachWait)
	defer cancel()
	if err := s.carryEmulation(ctx, lost); err != nil {
		return fmt.Errorf("reopened the session's tab, but could not give it the session's emulation: %w", err)
	}
	return nil
}

// openContext opens a browser context of the session's (the user's, in
// the user's context) and its first tab, with the session's guards: its
// egress proxy, request guard, permissions and downloads
// (newSessionContext). The session's first context, and each that
// new_context opens (contexts.go), is opened here.
func (s *session) openContext() error {
	w := newPageWatch("", s.manifest.Browser.Dialogs, s.maskDialog)
	w.log.details = readsRequests(s.manifest)
	ctx, cancel, err := s.backend.newSessionContext(s, w, chromedp.WithListener(w.listen))
	if err != nil {
		return err
	}
	if t := chromedp.FromContext(ctx).Target; t != nil {
		w.mu.Lock()
		w.mainFrame = cdp.FrameID(t.TargetID)
		w.mu.Unlock()
	}
	s.tab = tab{ctx: ctx, cancel: cancel, watch: w, browserID: chromedp.FromContext(ctx).BrowserContextID, frames: newFrameConns()}
	s.tabs = sessionTabs{home: s.tab.targetID(), homeCtx: ctx, parked: map[target.ID]tab{}}
	claimedTabs.claim(s.tabs.home, s.id)
	go w.answerDialogs(ctx)
	return nil
}

// closeTabs lets go of every tab the session holds: the tabs it opened
// or adopted first (their chromedp contexts only detach), then its first
// tab, whose cancellation closes it and ends the session's guard (and,
// in a browser context of the session's own, the context with every page
// in it).
func (s *session) closeTabs() {
	if s.tab.open() {
		s.emptyUserTab(s.tab.ctx)
	}
	home := s.tabs.home
	var first tab
	for id, t := range s.tabs.parked {
		if id == home {
			first = t
			continue
		}
		t.close()
	}
	if s.tab.targetID() == home || home == "" {
		first = s.tab
	} else {
		s.tab.close()
	}
	first.close()
	claimedTabs.release(s.id)
	s.tab = tab{}
	s.tabs = sessionTabs{}
}

// backToFirstTab: when the tab the session was in has closed (another
// than its first), the session goes back to its first tab, if that is
// open, and says so in its next reply.
func (s *session) backToFirstTab() bool {
	gone := s.tab.targetID()
	home, ok := s.tabs.parked[s.tabs.home]
	if s.tab.ctx == nil || gone == s.tabs.home || !ok || !home.open() {
		return false
	}
	s.tab.close()
	delete(s.tabs.parked, s.tabs.home)
	s.tab = home
	s.egress.guard.setTab(string(s.tabs.home))
	s.letGo(gone)
	s.notice = "the tab the session was in has closed; the session is back on its first tab"
	return true
}

// close releases the browser context (and with it every tab, cookie and
// storage item of the session).
func (t *tab) close() {
	if t.watch != nil && t.ctx != nil {
		// A tab the session lets go of (a user's) must not stay stopped
		// by a dialog held for the agent.
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		t.watch.dismissHeld(ctx)
		cancel()
	}
	if t.cancel != nil {
		t.cancel()
	}
	*t = tab{}
}

// targetID is the tab's own target.
func (t *tab) targetID() target.ID {
	if t.ctx == nil {
		return ""
	}
	if c := chromedp.FromContext(t.ctx); c != nil && c.Target != nil {
		return c.Target.TargetID
	}
	return ""
}

// reset sends the tab to about:blank and clears its history, so that
// go_back cannot return to where it was. If that fails the browser
// context is closed instead (the next call opens a fresh one).
func (t *tab) reset(ctx context.Context) error {
	err := chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	if err == nil {
		_, err = chromedp.Call(ctx, page.ResetNavigationHistory, struct{}{})
	}
	t.refs, t.paged = nil, paged{}
	if err != nil {
		t.close()
	}
	return err
}

// pages lists the session's page targets: its own tab and any popups its
// pages opened.
func (s *session) pages(ctx context.Context) ([]*target.Info, error) {
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, err
	}
	return sessionPagesExcept(all, s.tab.browserID, s.tabs.foreign, s.rootIDs()...), nil
}

// sessionPages picks the session's pages out of the browser's targets: in
// a browser context of the session's own, its pages; in the user's context
// (browserID ""), the session's tabs (roots: its first tab, the tabs it
// opened, the user's tabs it adopted) and the pages opened from them, and
// from those (by opener), never the user's other tabs.
func sessionPages(all []*target.Info, browserID cdp.BrowserContextID, roots ...target.ID) []*target.Info {
	return sessionPagesExcept(all, browserID, nil, roots...)
}

// sessionPagesExcept is sessionPages, with the pages in foreign (and
// those they opened) never the session's: the pages a user's tab had
// opened before the session adopted it are the user's.
func sessionPagesExcept(all []*target.Info, browserID cdp.BrowserContextID, foreign map[target.ID]bool, roots ...target.ID) []*target.Info {
	var out []*target.Info
	if browserID != "" {
		for _, ti := range all {
			if ti.Type == "page" && ti.BrowserContextID == browserID {
				out = append(out, ti)
			}
		}
		return out
	}
	ours := map[target.ID]bool{}
	for _, r := range roots {
		ours[r] = true
	}
	for grew := true; grew; {
		grew = false
		for _, ti := range all {
			if ti.Type == "page" && !ours[ti.TargetID] && !foreign[ti.TargetID] && ti.OpenerID != "" && ours[ti.OpenerID] {
				ours[ti.TargetID], grew = true, true
			}
		}
	}
	for _, ti := range all {
		if ti.Type == "page" && ours[ti.TargetID] {
			out = append(out, ti)
		}
	}
	return out
}

// closePages closes the given targets (popups the decision refused) and
// waits, bounded, until they are gone from the browser's target list, so
// that the state read next counts them out.
func (t *tab) closePages(ctx context.Context, ids []target.ID) error {
	for _, id := range ids {
		if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		left, err := chromedp.Targets(ctx)
		if err != nil {
			return nil
		}
		gone := true
		for _, p := range left {
			for _, id := range ids {
				gone = gone && p.TargetID != id
			}
		}
		if gone {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// newSessionContext returns a chromedp context for a new browser context
// and a tab in it, whose traffic goes through an egress proxy of the
// session's own (so that what it refuses is reported to that session).
// The browser is started (launch) or connected (live) first, bounded by
// the startup timeout. The returned stop func closes the context and the
// session's proxy.
func (b *backend) newSessionContext(s *session, w *pageWatch, opts ...chromedp.ContextOption) (context.Context, context.CancelFunc, error) {
	parent, wsURL, header, err := b.running()
	if err != nil {
		return nil, nil, err
	}
	b.openings <- struct{}{}
	defer func() { <-b.openings }()
	if b.sessionOpening != nil {
		b.sessionOpening()
	}
	t0 := time.Now()
	var proxy *egress.Proxy
	var proxyAuth *proxyCredentials
	stop := func() {}
	if !b.userContext() {
		p, err := b.newDialProxy(s.egress.blocked, &s.egress)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: egress proxy: %v", ErrBrowserStart, err)
		}
		server, creds, stopProxy, err := b.provider.sessionProxy(b, p)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: egress proxy: %v", ErrBrowserStart, err)
		}
		proxy, stop = p, stopProxy
		if creds != nil {
			proxyAuth = &proxyCredentials{gate: strings.TrimPrefix(server, "http://"), Credentials: *creds}
		}
		newContext := chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
			p.ProxyServer, p.ProxyBypassList = server, proxyBypass
		})
		opts = append([]chromedp.ContextOption{newContext}, opts...)
	}
	ctx, cancel := chromedp.NewContext(parent, opts...)
	{
		closeProxy := stop
		stop = func() { cancel(); closeProxy() }
	}
	t1 := time.Now()
	if err := runBounded(b.startup, func() error { return attach(ctx, b.metrics(), bodyBuffer(s.manifest)) }); err != nil {
		stop()
		b.forgetGoneBrowser(wsURL)
		return nil, nil, fmt.Errorf("%w: open a browser context: %v", ErrBrowserStart, err)
	}
	if !b.userContext() {
		// Before the tab, blank still, loads anything.
		if err := setPermissions(ctx, chromedp.FromContext(ctx).BrowserContextID, s.manifest.Browser.Permissions); err != nil {
			stop()
			return nil, nil, fmt.Errorf("%w: set the session's permissions: %v", ErrBrowserStart, err)
		}
	}
	t2 := time.Now()
	s.egress.proxy = proxy
	{
		// A guard on a connection of the session's own intercepts the
		// session's tab and every target that descends from it or opens
		// in its browser context, and nothing else: in live mode the
		// user's own tabs share the browser (browser-level Fetch would
		// pause every request the user makes), and in both modes each
		// refusal is the session's own to report.
		c := chromedp.FromContext(ctx)
		ic := &interceptor{check: s.check, log: s.egress.blocked, acting: s.egress.acting, navs: w.navigationCount, bound: s.egress.bound,
			pacing: requestPacing{limiter: b.hostLimiter(), within: time.Duration(s.manifest.Tool.TimeoutSeconds) * time.Second}}
		cfg := guardConfig{wsURL: wsURL, header: header, context: string(c.BrowserContextID), tab: string(c.Target.TargetID), user: b.userContext(), proxyAuth: proxyAuth}
		grants, log := s.manifest.Browser.Permissions, s.egress.blocked
		logger := b.logger.With("session", s.id) // the grant's log line, as a refusal's names its session
		cfg.permissionAsked = func(payload string, from askingFrame) { permissionAsked(log, grants, logger, payload, from) }
		var rulesGen uint64
		if cfg.user {
			rulesGen = b.listeners.generation()
			cfg.wsRules = webSocketRules(b.scope.Load(), b.wsAllowed())
			if b.rulesBuilt != nil {
				b.rulesBuilt() // a test's endpoint, registered before the session watches
			}
		}
		dl, err := s.downloadsFor(b)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("%w: %v", ErrBrowserStart, err)
		}
		cfg.downloads = dl
		guard, err := guardTargets(ctx, cfg, ic, b.logger)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("%w: enable request interception: %v", ErrBrowserStart, err)
		}
		s.egress.ic.Store(ic)
		s.egress.guard = guard
		w.log.followGuard(guard)
		inner := stop
		unwatch := func() {}
		if cfg.user {
			// The rules allow what the scope allows but the daemon's own
			// endpoints, and those come and go (another session's egress
			// proxy, another manifest's browser): the rules after each
			// change are sent to every target of the session before the
			// change returns, and their answers awaited one after another
			// (up to 200 ms each: a target that has not run yet answers
			// once it runs). A change made since the rules were built is
			// sent at once.
			refresh := func() {
				guard.refreshWebSocketRules(ctx, func() []wsRule { return webSocketRules(b.scope.Load(), b.wsAllowed()) })
			}
			var gen uint64
			gen, unwatch = b.listeners.watch(refresh)
			if gen != rulesGen {
				refresh()
			}
		}
		if !cfg.user && s.guardLost != nil {
			// Without its guard a session's pages are neither
			// intercepted nor paused at start, and a remote session
			// cannot answer its gate: a connection lost (not closed by
			// stop) ends the session, which closes its browser context.
			// In the user's context the pages are the user's tabs,
			// which are left open.
			go func() {
				<-guard.lost()
				if !guard.closedByUs() {
					b.logger.Warn("a session's request guard lost its DevTools connection: the session ends", "session", s.id)
					s.guardLost()
				}
			}()
		}
		stop = func() {
			unwatch()
			if cfg.user {
				// In the user's context nothing disposes of the session's
				// popups with a browser context: they are closed while
				// still guarded (the session's tab closes with its
				// chromedp context below).
				guard.closePopups(cfg.tab)
			}
			// The cancels of downloads a page began as the session ended
			// go over the guard's connection: answered before it closes.
			guard.downloads.awaitCancels(time.Now().Add(cancelEndWait))
			guard.Close()
			inner()
		}
	}
	// WebRTC sends STUN over UDP, which no HTTP proxy sees, and Chromium
	// 156 sent it even with --force-webrtc-ip-handling-policy (measured by
	// the egress suite): the session's pages get no WebRTC.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: noWebRTCJS, RunImmediately: ptrTrue(),
	}); err != nil {
		stop()
		return nil, nil, fmt.Errorf("%w: disable WebRTC: %v", ErrBrowserStart, err)
	}
	b.logger.Debug("session context ready", "session", s.id, "proxy_ms", msBetween(t0, t1), "context_and_tab_ms", msBetween(t1, t2),
		"guard_ms", msSince(t2))
	return ctx, stop, nil
}

// openingsAtOnce bounds the sessions of one browser that open their
// contexts, tabs and guards at the same time. An opening is mostly
// Chromium's work (a renderer process starts for the tab), and every
// guard already there attaches to each new tab: 64 agents starting at
// once, all opening together on two cores, left calls failing their
// deadlines; one at a time, a slow opening held back every other.
const openingsAtOnce = 4

// running starts the browser unless it runs (again, should the launched
// one have died) and returns what a session's context is opened from: the
// context its tab descends from and the browser's DevTools WebSocket. Only
// this holds b.mu: sessions open their contexts, tabs and guards at the
// same time (up to openingsAtOnce), not one after another. header is what
// a connection of the session's own to wsURL sends.
func (b *backend) running() (parent context.Context, wsURL string, header http.Header, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil, "", nil, fmt.Errorf("%w: the executor is shutting down", ErrBrowserStart)
	}
	if b.started && b.root != nil && b.root.Err() != nil {
		// The launched browser died (crash, OOM kill): start a new one.
		b.release()
	}
	if b.started && b.alloc != nil && b.alloc.Err() != nil {
		b.release()
	}
	if err := b.startLocked("browser started"); err != nil {
		return nil, "", nil, err
	}
	parent = b.root
	if b.provider.ownConnections() {
		// Each session of a browser the daemon does not own (the user's,
		// a pool host's) holds its own DevTools connection; closing it
		// closes the session's tab (and disposes of its browser context)
		// and leaves the browser running.
		parent = b.alloc
	}
	return parent, b.wsURL, b.dialHeader, nil
}

// downloadsFor returns the session's downloads handler, made with its
// staging directory on first use: a directory of the session's own in a
// browser context of its own; in the user's context one shared by every
// session of this process (the setting is the profile's, and the last
// session to set it names the directory).
func (s *session) downloadsFor(b *backend) (*downloads, error) {
	if s.downloads != nil {
		return s.downloads, nil
	}
	var staging string
	if !b.userContext() {
		// (In the user's context the guard names the shared directory as
		// it joins: joinLive.)
		dir, err := s.fileDir()
		if err == nil {
			staging, err = os.MkdirTemp(dir, "downloads-")
		}
		if err != nil {
			return nil, fmt.Errorf("make the downloads' staging directory: %w", err)
		}
	}
	f := s.manifest.Browser.Files
	d := newDownloads(s.manifest.Command("download") != nil, f.DownloadDir, f.MaxDownloadBytes, staging, s.check, b.logger)
	d.gate, d.record, d.view = s.downloadGate, s.downloadRecord, s.view()
	s.downloads = d
	return d, nil
}
