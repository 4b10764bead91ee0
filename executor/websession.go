package executor

import (
	"context"
	"net/url"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// A session's share of the browserless engine (webengine.go): its HTTP
// client, cookie jar and egress proxy, and the page fetch_page last read,
// which is its page state.

// webSession is a session's share of the browserless engine.
type webSession struct {
	ctx    context.Context // ended with the session
	cancel context.CancelFunc
	client *web.Client
	proxy  *egress.Proxy
	jar    *web.Jar
	page   PageState // the page fetch_page last read
	// hop judges a redirect of the call running now (nil: none runs).
	hop func(hop int, url string) error
	// The call running now: its arguments as the agent gave them, those
	// of them brought to a bound (toolclad.Command.Clamped), and the
	// executor's clock, so that a reply can say what it was asked, what
	// it gives and when it fetched.
	asked   map[string]any
	clamped map[string]int64
	now     func() time.Time
}

// fetchTime is the time of a fetch, on the executor's clock.
func (w *webSession) fetchTime() time.Time {
	if w.now == nil {
		return time.Now()
	}
	return w.now()
}

// close ends the session's requests and connections.
func (w *webSession) close() {
	if w == nil {
		return
	}
	w.cancel()
	w.client.CloseIdle()
	w.proxy.Close()
}

// factsFor are what the browserless engine observes for a call: the page
// fetch_page last read, with is_authenticated also true when the engine
// holds a session cookie for where the call goes (its url argument, or
// the search backend), since the request carries it. (Errs towards
// "authenticated", the cautious side for policies.)
func (w *webSession) factsFor(args map[string]any, m *toolclad.Manifest) *facts {
	st := w.page
	target, _ := args["url"].(string)
	if _, searching := args["query"]; searching {
		target = m.Browser.Search.URL
	}
	if u, err := url.Parse(target); err == nil && target != "" && !st.IsAuthenticated {
		st.IsAuthenticated = w.sessionCookie(u)
	}
	return &facts{State: st, Forms: -1}
}

// sessionCookie reports whether the jar holds a cookie for u whose name
// says session (the browser's rule: sessionCookie).
func (w *webSession) sessionCookie(u *url.URL) bool {
	for _, c := range w.jar.Cookies(u) {
		if sessionCookie.MatchString(c.Name) {
			return true
		}
	}
	return false
}
