package executor

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
)

// PageState is what the executor observes of a session's tab before and
// after each action (gate.PageState, which the decision reads). Cedar sees
// every field; the agent sees the fields the manifest lists in
// [browser.state].
//
// No field comes from the page's own JavaScript world, so a page cannot
// forge what the gate judges:
//
//   - url, title: the tab's current history entry, over CDP
//     (Page.getNavigationHistory), as the browser itself keeps them;
//   - domain: the host of url, canonicalised by package scope;
//   - has_forms: the document has a <form>, read in the gate's isolated
//     world (js/state.js), whose built-ins the page cannot redefine;
//   - is_authenticated: the isolated world sees a log out / sign out / log
//     off control, or the browser holds a cookie for the page whose name
//     says session (Network.getCookies); a page that cannot be read (or
//     whose cookies cannot) counts as authenticated, and as having forms;
//   - page_loaded: the document's readyState is complete (isolated world);
//   - tab_count: the page targets of the session's browser context, over
//     CDP (Target.getTargets).
type PageState = gate.PageState

// sessionCookie is the documented rule, part 2, for is_authenticated: the
// browser holds a cookie for the page whose name contains sess, sid, auth,
// token, jwt or login (PHPSESSID, JSESSIONID, ASP.NET_SessionId,
// wordpress_logged_in_…, auth_token, …). It errs towards "authenticated",
// the cautious side for policies.
var sessionCookie = regexp.MustCompile(`(?i)sess|sid|auth|token|jwt|login`)

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
	)
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
		if h, err := chromedp.Call(ctx, page.GetNavigationHistory, struct{}{}); err == nil &&
			h.CurrentIndex >= 0 && int(h.CurrentIndex) < len(h.Entries) {
			hist = h.Entries[h.CurrentIndex]
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
	return st, forms, pages, pagesErr
}
