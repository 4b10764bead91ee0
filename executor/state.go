package executor

import (
	"regexp"

	"github.com/browsergate/browsergate/gate"
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
//   - has_forms: the document has a <form>, read in the isolated
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
