package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// session is one agent session on one manifest: an MCP session's calls to
// the tools of one manifest. It owns a browser context and one tab in it,
// its element refs and its counters. Calls on a session run one at a time.
type session struct {
	id       string // evidence session id
	mcpID    string
	manifest *toolclad.Manifest
	backend  *backend
	secrets  *secretSet // the manifest's secrets, for type_text
	// typedSecrets are the secrets typed into the page since navigation
	// typedNavs (see noteSecretsTyped).
	typedSecrets map[*toolclad.Secret]bool
	typedNavs    int
	// maskText masks every manifest's secret values: output is masked
	// before it is clipped, and again as a whole when the call ends.
	maskText func(string) string

	blocked      *blockLog     // requests the egress gate refused for this session
	proxy        *egress.Proxy // the session's egress proxy
	mu           sync.Mutex    // held for the whole of a call
	created      time.Time
	lastCall     time.Time
	expired      string // non-empty: why this session takes no more calls
	ended        bool   // the MCP session ended or the executor closed
	idleTimer    *time.Timer
	lifeTimer    *time.Timer
	interactions int
	counts       map[string]int // executed commands by name

	tab       context.Context // chromedp context of the session's tab; nil until first use
	closeTab  context.CancelFunc
	browserID cdp.BrowserContextID
	watch     *pageWatch
	refs      map[string]cdp.BackendNodeID
	worldID   runtime.ExecutionContextID // the gate's isolated world (see world.go)
	worldNavs int                        // navigation count when worldID was made

	// held is the approval a call of this session opened and asked the
	// client's user about (a two-round call); guarded by mu. Any other
	// call of the session withdraws it.
	held string
	// abortMu guards abort, the way to stop a call waiting for a human
	// without taking mu (which the waiting call holds).
	abortMu sync.Mutex
	abort   context.CancelFunc
}

// setAbort records how to stop the call's wait for a human (nil: none).
func (s *session) setAbort(f context.CancelFunc) {
	s.abortMu.Lock()
	s.abort = f
	s.abortMu.Unlock()
}

// abortWait stops a call that waits for a human, so that the session can
// be ended without waiting for the answer; the call is denied.
func (s *session) abortWait() {
	s.abortMu.Lock()
	if s.abort != nil {
		s.abort()
	}
	s.abortMu.Unlock()
}

func newSessionID(tool string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return tool + "-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// ensureTab opens the session's browser context and tab on first use, and
// again if the tab died (browser crash, live Chrome restarted, reset
// failure); a reopened tab starts blank and its old refs are gone.
func (s *session) ensureTab() error {
	if s.tab != nil && s.tab.Err() == nil {
		return nil
	}
	s.close()
	s.refs, s.worldID = nil, 0
	w := newPageWatch("")
	ctx, cancel, err := s.backend.newSessionContext(s, chromedp.WithListener(w.listen))
	if err != nil {
		return err
	}
	if t := chromedp.FromContext(ctx).Target; t != nil {
		w.mu.Lock()
		w.mainFrame = cdp.FrameID(t.TargetID)
		w.mu.Unlock()
	}
	s.tab, s.closeTab, s.watch = ctx, cancel, w
	s.browserID = chromedp.FromContext(ctx).BrowserContextID
	go w.dismissDialogs(ctx)
	return nil
}

// close releases the browser context (and with it every tab, cookie and
// storage item of the session).
func (s *session) close() {
	if s.closeTab != nil {
		s.closeTab()
		s.closeTab, s.tab = nil, nil
	}
}

// end closes the session for good: no further call runs on it.
func (s *session) end() {
	s.ended = true
	for _, t := range []*time.Timer{s.idleTimer, s.lifeTimer} {
		if t != nil {
			t.Stop()
		}
	}
	s.close()
}

// resetTab sends the tab to about:blank and clears its history, so that
// go_back cannot return to where it was. If that fails the browser
// context is closed instead (the next call opens a fresh one).
func (s *session) resetTab(ctx context.Context) error {
	err := chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	if err == nil {
		_, err = chromedp.Call(ctx, page.ResetNavigationHistory, struct{}{})
	}
	s.refs = nil
	if err != nil {
		s.close()
	}
	return err
}

// closeStrayTabs closes every other tab of the session (popups the pages
// opened) whose URL is out of scope, and names them. A popup that has not
// committed its first URL yet is given up to settle to do so.
func (s *session) closeStrayTabs(ctx context.Context, sc *scope.Scope, settle time.Duration) ([]string, error) {
	own := chromedp.FromContext(s.tab).Target
	deadline := time.Now().Add(settle)
	for {
		tabs, err := s.tabs(ctx)
		if err != nil {
			return nil, err
		}
		pending := false
		var closed []string
		for _, t := range tabs {
			if own != nil && t.TargetID == own.TargetID {
				continue
			}
			if t.URL == "" || isBlank(t.URL) {
				// A popup whose own navigation the guard refused may
				// still show about:blank: it is out of scope all the same.
				if to := s.blocked.blockedNav(string(t.TargetID)); to != "" {
					if err := closeTarget(ctx, t.TargetID); err != nil {
						return closed, err
					}
					closed = append(closed, fmt.Sprintf("%s (its navigation to %s was refused)", t.URL, to))
					continue
				}
				pending = true
				continue
			}
			if v := sc.Check(t.URL); !v.Allowed {
				if err := closeTarget(ctx, t.TargetID); err != nil {
					return closed, fmt.Errorf("close tab %s: %w", t.URL, err)
				}
				closed = append(closed, fmt.Sprintf("%s (%s)", t.URL, v.Reason))
			}
		}
		if len(closed) > 0 {
			s.awaitTabCount(ctx, len(tabs)-len(closed))
			return closed, nil
		}
		if !pending || time.Now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func closeTarget(ctx context.Context, id target.ID) error {
	_, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
	return err
}

// popupSettle bounds the wait for a new popup's first URL. A popup that
// stays blank longer is left open; it is checked again before the next
// call.
const popupSettle = 500 * time.Millisecond

// awaitTabCount waits (bounded) until the closed tabs are gone from the
// browser's target list, so the state reported next counts them out.
func (s *session) awaitTabCount(ctx context.Context, want int) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if n := s.tabCount(ctx); n <= want {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// tabs lists the page targets of the session's browser context.
func (s *session) tabs(ctx context.Context) ([]*target.Info, error) {
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, err
	}
	var out []*target.Info
	for _, t := range all {
		if t.Type == "page" && t.BrowserContextID == s.browserID {
			out = append(out, t)
		}
	}
	return out, nil
}

// counters returns the per-session counters Cedar sees (interaction_count
// is handled separately): session_<command>_count for every built-in
// command, declared or not, so that the schema can declare them all and a
// policy never reads a missing attribute; and the documented
// session_submit_count.
func (s *session) counters() map[string]int {
	out := make(map[string]int, len(builtinCommands)+1)
	for _, c := range builtinCommands {
		out["session_"+c+"_count"] = s.counts[c]
	}
	out["session_submit_count"] = s.counts["submit_form"]
	return out
}

var builtinCommands = toolclad.BuiltinCommands()
