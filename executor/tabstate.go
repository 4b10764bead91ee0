package executor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
)

// Reading the tab's page state (PageState, state.go) for observe and for
// the read after each action: over CDP and in the isolated world
// (world.go), never in the page's own world.

// domFacts are what js/state.js reports from the isolated world.
type domFacts struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	HasForms bool   `json:"has_forms"`
	Logout   bool   `json:"logout"`
	Ready    bool   `json:"ready"`
	Forms    int    `json:"forms"`
	Status   int    `json:"status"`
}

// readState observes the tab. It never fails the call: a page that cannot
// be read (navigating, crashed) reports what could be read, with
// page_loaded false and is_authenticated true; an empty URL means the
// state could not be read at all, which the gate refuses to judge.
func (s *session) readState(ctx context.Context) PageState {
	st, _, _, _ := s.readPage(ctx)
	return st
}

// readPage is readState, and also the number of forms in the document (-1
// when unknown) and the page targets of the session's browser context
// (with the error listing them).
func (s *session) readPage(ctx context.Context) (PageState, int, []*target.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// The reads are independent: send them together, one round trip of
	// latency instead of four.
	var (
		wg         sync.WaitGroup
		cookies    []*network.Cookie
		cookiesErr error
		pages      []*target.Info
		pagesErr   error
		hist       *page.NavigationEntry
		loader     cdp.LoaderID
	)
	guard := s.egress.guard
	if !s.hasSecrets() {
		guard = nil // no URL to mask: which document it is from does not matter
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		// No URLs: the cookies the browser would send to the current page.
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
		if err == nil {
			cookies = res.Cookies
		}
		cookiesErr = err
	}()
	go func() {
		defer wg.Done()
		pages, pagesErr = s.pages(ctx)
	}()
	go func() {
		defer wg.Done()
		// The document the history names: the main frame's, read before
		// and after it, when the two agree (guard_loaders.go, "Which
		// document a read of a tab's URL is from").
		before := s.mainLoader(ctx, guard)
		if h, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{}); err == nil &&
			h.CurrentIndex >= 0 && int(h.CurrentIndex) < len(h.Entries) {
			hist = h.Entries[h.CurrentIndex]
		}
		if after := s.mainLoader(ctx, guard); after == before && hist != nil && hist.URL != "" {
			loader = after
		}
	}()
	var st PageState
	var dom domFacts
	forms := -1
	// While a dialog is held open the page's scripts are stopped: a read
	// in the page would wait for the agent's answer.
	err := errors.New("a JavaScript dialog is open")
	if s.tab.watch.pendingDialog() == nil {
		err = s.evalValueInWorld(ctx, stateJS, &dom)
	}
	if err == nil {
		st.HasForms, st.PageLoaded, st.IsAuthenticated = dom.HasForms, dom.Ready, dom.Logout
		st.HTTPStatus = dom.Status
		forms = dom.Forms
	} else {
		// A page that cannot be read counts as authenticated and as
		// having forms: policies that guard such pages must not fail open.
		st.IsAuthenticated, st.HasForms = true, true
	}
	wg.Wait()
	if cookiesErr != nil {
		st.IsAuthenticated = true // the session cookie may be there
	}
	if hist != nil && hist.URL != "" {
		st.URL, st.Title = hist.URL, hist.Title
	} else {
		// Between documents the history may not answer; the browser's
		// target list (also CDP) names the tab's URL and title.
		own := s.tab.targetID()
		for _, p := range pages {
			if p.TargetID == own {
				st.URL, st.Title = p.URL, p.Title
			}
		}
	}
	if u, err := scope.ParseURL(st.URL); err == nil {
		st.Domain = u.Host
	}
	for _, c := range cookies {
		if sessionCookie.MatchString(c.Name) {
			st.IsAuthenticated = true
			break
		}
	}
	st.TabCount = len(pages)
	st.Tab = string(s.tab.targetID())
	if guard != nil {
		st.Doc = string(loader)
		if st.Doc == "" {
			st.Doc = unnamedDoc
		}
		guard.settleRead(ctx, st.Tab, st.Doc, st.URL)
	}
	return st, forms, pages, pagesErr
}

// mainLoader is the loader id of the tab's main frame's document ("":
// not read), read only for a guard.
func (s *session) mainLoader(ctx context.Context, guard *targetGuard) cdp.LoaderID {
	if guard == nil {
		return ""
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return ""
	}
	return tree.FrameTree.Frame.LoaderID
}
