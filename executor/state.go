package executor

import (
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
)

// PageState is what the executor observes of a session's tab before and
// after each action. Cedar sees every field; the agent sees the fields the
// manifest lists in [browser.state].
type PageState struct {
	URL             string `json:"url"`
	Title           string `json:"title"`
	Domain          string `json:"domain"`
	HasForms        bool   `json:"has_forms"`
	IsAuthenticated bool   `json:"is_authenticated"`
	PageLoaded      bool   `json:"page_loaded"`
	TabCount        int    `json:"tab_count"`
}

// Map returns the state as a record keyed by the [browser.state] field
// names.
func (p PageState) Map() map[string]any {
	return map[string]any{
		"url":              p.URL,
		"title":            p.Title,
		"domain":           p.Domain,
		"has_forms":        p.HasForms,
		"is_authenticated": p.IsAuthenticated,
		"page_loaded":      p.PageLoaded,
		"tab_count":        p.TabCount,
	}
}

// Select returns only the named fields, in a map (for the agent's reply).
func (p PageState) Select(fields []string) map[string]any {
	all := p.Map()
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

// stateJS reads what the page itself knows in one round trip.
//
// is_authenticated (documented rule, part 1): the page shows a control whose
// text or label says log out / sign out / log off.
const stateJS = `(() => {
  const d = document;
  const re = /\b(log\s?out|sign\s?out|log\s?off)\b/i;
  let logout = false;
  for (const e of d.querySelectorAll('a, button, [role=button], input[type=submit], input[type=button]')) {
    const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim();
    if (re.test(t)) { logout = true; break; }
  }
  return {url: location.href, title: d.title, has_forms: d.forms.length > 0,
          logout: logout, ready: d.readyState === 'complete'};
})()`

// sessionCookie is the documented rule, part 2, for is_authenticated: the
// browser holds a cookie for the page whose name contains sess, sid, auth,
// token, jwt or login (PHPSESSID, JSESSIONID, ASP.NET_SessionId,
// wordpress_logged_in_…, auth_token, …). It errs towards "authenticated",
// the cautious side for policies.
var sessionCookie = regexp.MustCompile(`(?i)sess|sid|auth|token|jwt|login`)

type pageFacts struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	HasForms bool   `json:"has_forms"`
	Logout   bool   `json:"logout"`
	Ready    bool   `json:"ready"`
}

// readState observes the tab. It never fails the call: a page that cannot
// be read (navigating, crashed) reports what could be read, and page_loaded
// false.
func (s *session) readState(ctx context.Context) PageState {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// The three reads are independent: send them together, one round trip
	// of latency instead of three.
	var (
		wg      sync.WaitGroup
		cookies []*network.Cookie
		tabs    int
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		// No URLs: the cookies the browser would send to the current page.
		if res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{}); err == nil {
			cookies = res.Cookies
		}
	}()
	go func() {
		defer wg.Done()
		tabs = s.tabCount(ctx)
	}()
	var st PageState
	facts, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](stateJS))
	if err == nil {
		st.URL, st.Title, st.HasForms, st.PageLoaded = facts.URL, facts.Title, facts.HasForms, facts.Ready
		st.IsAuthenticated = facts.Logout
	} else {
		// A page that cannot be read counts as authenticated: policies
		// that guard authenticated pages must not fail open.
		st.IsAuthenticated = true
		if loc, lerr := chromedp.Run(ctx, chromedp.Location()); lerr == nil {
			st.URL = loc
		}
	}
	wg.Wait()
	if u, err := scope.ParseURL(st.URL); err == nil {
		st.Domain = u.Host
	}
	for _, c := range cookies {
		if sessionCookie.MatchString(c.Name) {
			st.IsAuthenticated = true
			break
		}
	}
	st.TabCount = tabs
	return st
}

// tabCount counts the page targets of the session's browser context: its
// own tab plus any popups the pages opened.
func (s *session) tabCount(ctx context.Context) int {
	tabs, err := s.tabs(ctx)
	if err != nil {
		return 0
	}
	return len(tabs)
}
