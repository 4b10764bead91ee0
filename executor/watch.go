package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/tracing"
)

// Stability bounds: the wait ends after maxSettle even if the network never
// goes quiet (pages that poll or stream), and after maxLoad if a frame
// never stops loading.
const (
	maxSettle = 3 * time.Second
	maxLoad   = 15 * time.Second
)

// pageWatch follows the events of one tab: requests in flight, frames
// loading, and JavaScript dialogs (dialogs.go: held for the agent, or
// answered so they cannot block the tab). Its listener runs on chromedp's
// read loop, so it only records and signals.
type pageWatch struct {
	mu           sync.Mutex
	inflight     map[network.RequestID]bool
	loading      map[cdp.FrameID]bool
	mainFrame    cdp.FrameID // the tab's main frame (its id is the target's)
	docLoading   bool
	lastActivity time.Time
	navigations  int
	// committed is the URL of the main frame's latest document as the
	// browser committed it (after any redirect): the page's own history
	// calls do not change it (unreachable_redirect.go).
	committed string
	// committedByRedirect: the main frame's latest document came by a
	// server's redirect of its own document request (its loader is the
	// one redirectLoader names), not by a navigation of its own (a
	// script's, a meta refresh's: a new loader, whose request begins
	// with no redirect response).
	committedByRedirect bool
	redirectLoader      cdp.LoaderID // the main frame's latest redirected document request
	// docRequests counts the document requests of the tab's frames (one
	// that commits no document may have become a download) and the
	// navigations the page asked for as downloads (a download link).
	docRequests int
	dialogs     dialogState
	changed     chan struct{}
	log         *pageLog // console_messages and network_log
	// cast gathers the screencast frames of the call that runs, when the
	// manifest records one (recording.go); nil otherwise.
	cast atomic.Pointer[screencast]
	// trace gathers the events of a performance_trace's trace while one
	// is recorded (commands_insight.go); nil otherwise.
	trace atomic.Pointer[traceSink]
}

// newPageWatch watches a tab whose JavaScript dialogs are handled as the
// manifest's [browser] dialogs says (toolclad.Dialogs*).
// mask masks the session's secrets in what a document (by its host) says
// in them.
func newPageWatch(mainFrame cdp.FrameID, dialogs string, mask func(text, host string) string) *pageWatch {
	return &pageWatch{
		mainFrame:    mainFrame,
		inflight:     map[network.RequestID]bool{},
		loading:      map[cdp.FrameID]bool{},
		lastActivity: time.Now(),
		changed:      make(chan struct{}, 1),
		dialogs:      dialogState{mode: dialogs, mask: mask, answers: make(chan dialogAnswer, 8)},
		log:          newPageLog(mainFrame),
	}
}

// listen is given to chromedp.WithListener.
func (w *pageWatch) listen(ev any) {
	switch e := ev.(type) {
	case *page.EventScreencastFrame:
		if c := w.cast.Load(); c != nil {
			c.frame(e)
		}
		return
	case *tracing.EventDataCollected:
		if t := w.trace.Load(); t != nil {
			t.add(e)
		}
		return
	case *tracing.EventTracingComplete:
		if t := w.trace.Load(); t != nil {
			t.complete()
		}
		return
	}
	w.log.record(ev)
	w.mu.Lock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Type == network.ResourceTypeDocument {
			w.docRequests++
			if e.RedirectResponse != nil && e.FrameID == w.mainFrame {
				w.redirectLoader = e.LoaderID
			}
		}
		// Requests of the main frame only: an iframe's request may finish
		// (or fail) in another process and never be reported here.
		if e.FrameID == w.mainFrame || e.FrameID == "" {
			w.inflight[e.RequestID] = true
		}
	case *network.EventLoadingFinished:
		delete(w.inflight, e.RequestID)
	case *network.EventLoadingFailed:
		delete(w.inflight, e.RequestID)
	case *page.EventFrameRequestedNavigation:
		if e.Disposition == page.ClientNavigationDispositionDownload {
			w.docRequests++
		}
	case *page.EventFrameStartedLoading:
		// Only the main frame: an iframe in another process reports that
		// it stopped to its own target, never here, and the main
		// document's load event already waits for its iframes.
		if e.FrameID == w.mainFrame {
			w.loading[e.FrameID] = true
		}
	case *page.EventFrameStoppedLoading:
		delete(w.loading, e.FrameID)
	case *page.EventFrameDetached:
		delete(w.loading, e.FrameID) // a removed frame never reports that it stopped
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			// A new main document until its load event: the network can
			// be quiet while it still parses and runs its scripts. The old
			// document's requests are gone with it.
			w.navigations++
			w.committed = e.Frame.URL
			w.committedByRedirect = e.Frame.LoaderID != "" && e.Frame.LoaderID == w.redirectLoader
			w.docLoading = true
			w.mainFrame = e.Frame.ID
			clear(w.inflight)
			w.dialogs.drop("the tab showed another document")
		}
	case *page.EventLoadEventFired:
		w.docLoading = false
	case *page.EventJavascriptDialogOpening:
		host := hostOf(e.URL)
		if host == "" {
			host = w.log.frameHost(e.FrameID) // about:blank, srcdoc: the document that made it
		}
		w.dialogs.opened(e, w.mainFrame, host)
	case *page.EventJavascriptDialogClosed:
		w.dialogs.closed(e)
	case *inspector.EventTargetCrashed:
		w.dialogs.drop("the page crashed")
	default:
		w.mu.Unlock()
		return
	}
	w.lastActivity = time.Now()
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// documentRequests is how many document requests the tab's frames made.
func (w *pageWatch) documentRequests() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.docRequests
}

func (w *pageWatch) navigationCount() int {
	if w == nil {
		return 0 // the tab is gone
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.navigations
}

// quietFor reports whether nothing loads and nothing has happened for d
// since the later of the last event and since, and how long to wait before
// asking again.
func (w *pageWatch) quietFor(d time.Duration, since time.Time) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.docLoading || len(w.loading) > 0 || len(w.inflight) > 0 {
		return false, d
	}
	last := w.lastActivity
	if since.After(last) {
		last = since
	}
	idle := time.Since(last)
	if idle >= d {
		return true, 0
	}
	return false, d - idle
}

func (w *pageWatch) isLoading() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.docLoading || len(w.loading) > 0
}

// afterLoadWindow is the quiet window once the action has taken the tab
// to a new document and that document has loaded: the action's "moment
// later" is past (it navigated), and a script of the new page that
// navigates again as it loads is still caught.
const afterLoadWindow = 20 * time.Millisecond

// waitStable waits, event by event, until the tab is stable after an
// action that began at start: frames done loading (up to maxLoad), no
// request in flight and no event for window (so a navigation the action
// triggers a moment later is still caught; up to maxSettle past the load),
// and a short mutation-free window of the DOM of the document the tab is
// on (domQuiet). If the tab navigated, the network's window is
// afterLoadWindow once the new document has loaded, and newDocument is
// called then. It returns how the last DOM wait ended.
//
// The DOM wait comes once the network is quiet, and counts its window
// from the document's last mutation, which the document's watch in the
// isolated world remembers (dom_changes.js): a document that stayed still
// while the network wait ran is quiet at once, and one that changed while
// it ran (a render a moment after a click, a fetch after load and then a
// render) is waited for until it stops. Its cap, domQuietCap, counts from
// the action's end, or from the new document's load, not from the DOM
// wait's start: after a network wait as long as the cap it has no time
// left. Only the top document's own mutations are watched: changes inside
// shadow roots and frames are not seen. A document whose readyState stays
// "loading" (document.open without close) holds the action up to
// maxSettle (maxLoad while the browser reports it loading).
func (w *pageWatch) waitStable(tab context.Context, start time.Time, window time.Duration, newDocument func(), domQuiet domQuietFunc) domQuietEnd {
	navs := w.navigationCount()
	seenNav, domFrom := navs, start
	for {
		win := window
		if n := w.navigationCount(); n != navs && !w.isLoading() {
			win = min(window, afterLoadWindow)
			if n != seenNav {
				seenNav, domFrom = n, time.Now()
				newDocument()
			}
		}
		quiet, wait := w.quietFor(win, start)
		if quiet {
			// Events reach the listener on chromedp's read loop, which can
			// lag behind the browser on a busy machine. The DOM wait is a
			// round trip on the same connection, and so a barrier: once its
			// answer is back, every event sent before it has been seen, and
			// the network's quiet is asked again. It also reads, in the
			// isolated world where the page cannot redefine it, whether
			// the document has finished loading. A document that is not
			// complete is still loading, whatever the events said: wait for
			// it (bounded by maxLoad), so the state read next is the new
			// page's.
			// An unread wait reads readyState in the isolated world too
			// (waitDOMQuiet); "" (no world answered) is not complete, and
			// the loop waits on, bounded by maxSettle and maxLoad.
			dom := domQuiet(tab, max(domQuietCap-time.Since(domFrom), 0))
			ready := dom.Ready
			again, left := w.quietFor(win, start)
			if again && (ready == "complete" || time.Since(start) > maxLoad) {
				return dom
			}
			wait = left
			if again {
				wait = 20 * time.Millisecond
			}
		}
		elapsed := time.Since(start)
		if elapsed > maxLoad || (elapsed > maxSettle && !w.isLoading()) {
			break
		}
		timer := time.NewTimer(wait)
		select {
		case <-tab.Done():
			timer.Stop()
			return domQuietEnd{End: domQuietUnread}
		case <-w.changed:
		case <-timer.C:
		}
		timer.Stop()
	}
	// The network never went quiet (a page that polls or streams): the
	// DOM is still waited for, within what is left of its cap.
	return domQuiet(tab, max(domQuietCap-time.Since(domFrom), 0))
}
