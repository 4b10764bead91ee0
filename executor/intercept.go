package executor

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
)

// Request interception is the first layer of the egress gate: Fetch is
// enabled on the browser's own DevTools session, which pauses every
// request of every target the browser runs — pages, popups, iframes in
// their own process, dedicated, shared and service workers — before it is
// sent. Each is checked against the scope and failed as BlockedByClient
// when out of scope. (Measured on Chromium 156: browser-level Fetch sees
// the requests of all those targets; WebSockets are not Fetch requests, and
// the egress proxy is what stops them.)

// Blocked is one request the egress gate refused.
type Blocked struct {
	Time   time.Time
	URL    string
	Rule   string
	Reason string
	Layer  string // "interception" or "proxy"
}

// blockLog collects refused requests so that each call can report those
// that happened while it ran.
type blockLog struct {
	mu      sync.Mutex
	entries []Blocked
	base    int // number of entries dropped from the front
}

// maxBlockLog bounds memory: older entries are dropped.
const maxBlockLog = 1000

func (l *blockLog) add(b Blocked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, b)
	if len(l.entries) > maxBlockLog {
		drop := len(l.entries) - maxBlockLog
		l.entries = append([]Blocked(nil), l.entries[drop:]...)
		l.base += drop
	}
}

// mark is the position to collect from.
func (l *blockLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base + len(l.entries)
}

// since returns the entries added after mark.
func (l *blockLog) since(mark int) []Blocked {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := max(mark-l.base, 0)
	if i >= len(l.entries) {
		return nil
	}
	return append([]Blocked(nil), l.entries[i:]...)
}

// interceptor checks every paused request of one browser connection.
type interceptor struct {
	check func(url string) scope.Verdict
	// route returns the log of the session a request's frame belongs to
	// and whether the request is ours to judge at all. In live mode the
	// user's own tabs share the browser and are not ours; in launch mode
	// every request is, and a frame no session claims (a same-process
	// subframe) goes to the backend's shared log.
	route  func(cdp.FrameID) (*blockLog, bool)
	logger *slog.Logger
	// page: intercept on the tab's own session instead of the browser's.
	page bool
}

// answer sends the decision for a paused request: continue or fail.
func (ic *interceptor) answer(ctx context.Context, params any, url string) bool {
	switch p := params.(type) {
	case fetch.ContinueRequestParams:
		return answerLogged(ctx, ic.logger, ic.page, fetch.ContinueRequest, p, url)
	case fetch.FailRequestParams:
		return answerLogged(ctx, ic.logger, ic.page, fetch.FailRequest, p, url)
	}
	return false
}

// start enables Fetch on the browser session of ctx and serves paused
// requests until ctx ends.
func (ic *interceptor) start(ctx context.Context) error {
	listen, call := chromedp.ListenBrowser, chromedp.CallBrowser[fetch.EnableParams, cdp.Empty]
	if ic.page {
		listen, call = chromedp.Listen, chromedp.Call[fetch.EnableParams, cdp.Empty]
	}
	err := listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			go ic.handle(ctx, e) // never block chromedp's read loop
		}
	})
	if err != nil {
		return err
	}
	_, err = call(ctx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*"}},
	})
	return err
}

// handle decides one paused request. Schemes that never leave the machine
// (data:, blob:, about:) continue; http(s) and ws(s) are checked against
// the scope; everything else is refused.
func (ic *interceptor) handle(ctx context.Context, e *fetch.EventRequestPaused) {
	url := ""
	if e.Request != nil {
		url = e.Request.URL
		if e.Request.URLFragment != "" {
			url += e.Request.URLFragment
		}
	}
	log, ours := ic.route(e.FrameID)
	if !ours {
		ic.answer(ctx, fetch.ContinueRequestParams{RequestID: e.RequestID}, url)
		return
	}
	v := ic.decide(url)
	if v.Allowed {
		ic.answer(ctx, fetch.ContinueRequestParams{RequestID: e.RequestID}, url)
		return
	}
	// A request whose refusal cannot be delivered stays paused: it still
	// never leaves. It is logged, and recorded only once refused.
	if ic.answer(ctx, fetch.FailRequestParams{
		RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient,
	}, url) {
		log.add(Blocked{Time: time.Now(), URL: url, Rule: v.Rule, Reason: v.Reason, Layer: "interception"})
	}
}

// answerLogged sends one answer; a failure is logged (the target may have
// gone away meanwhile).
func answerLogged[P any](ctx context.Context, logger *slog.Logger, page bool, cmd cdp.Command[P, cdp.Empty], params P, url string) bool {
	call := chromedp.CallBrowser[P, cdp.Empty]
	if page {
		call = chromedp.Call[P, cdp.Empty]
	}
	if _, err := call(ctx, cmd, params); err != nil {
		if ctx.Err() == nil && logger != nil {
			logger.Warn("interception: answering a paused request failed", "url", url, "method", cmd.Method, "error", err)
		}
		return false
	}
	return true
}

func (ic *interceptor) decide(url string) scope.Verdict {
	lower := strings.ToLower(url)
	for _, local := range []string{"data:", "blob:", "about:"} {
		if strings.HasPrefix(lower, local) {
			return scope.Verdict{Allowed: true, URL: url, Rule: "local scheme"}
		}
	}
	return ic.check(url)
}

// targetSet is the set of target ids (which are also the ids of their
// main frames) of one browser context, kept current from target events.
type targetSet struct {
	mu  sync.Mutex
	ids map[cdp.FrameID]bool
}

func (t *targetSet) has(f cdp.FrameID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ids[f]
}

func (t *targetSet) add(f cdp.FrameID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ids == nil {
		t.ids = map[cdp.FrameID]bool{}
	}
	t.ids[f] = true
}

// ownTargets follows the targets of ctx's browser context into set: its
// tabs, popups, out-of-process iframes and workers. (The frames inside the
// session's tab are added by its pageWatch as they attach.)
func ownTargets(ctx context.Context, set *targetSet) error {
	bc := chromedp.FromContext(ctx).BrowserContextID
	add := func(info *target.Info) {
		if info != nil && info.BrowserContextID == bc {
			set.add(cdp.FrameID(info.TargetID))
		}
	}
	if err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch e := ev.(type) {
		case *target.EventTargetCreated:
			add(e.TargetInfo)
		case *target.EventTargetInfoChanged:
			add(e.TargetInfo)
		}
	}); err != nil {
		return err
	}
	// Target events reach a browser session only once it asks for them
	// (chromedp asks on page sessions only).
	if _, err := chromedp.CallBrowser(ctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		return err
	}
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		return err
	}
	for _, info := range infos {
		add(info)
	}
	return nil
}
