package executor

import (
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/target"
)

// Tabs as the agent sees them (list_tabs): the session's own pages, and in
// the user's browser context the user's tabs whose URL the scope allows.
// A user's tab outside the scope is never named — no URL, no title — only
// counted.

// Tab owners.
const (
	ownerSession = "session" // the session's tab, a tab it opened, a popup its pages opened
	ownerUser    = "user"    // a tab of the user's own, in the user's context
)

// tabInfo is one tab in a listing.
type tabInfo struct {
	ID     string // short id, stable for the session's lifetime ("t1", "t2", ...)
	Target target.ID
	URL    string
	Title  string
	Owner  string
	Active bool // the session's current tab
}

// tabIDs hands out the short tab ids of a session: a target keeps its id
// for the session's lifetime, and an id is never given to another target.
type tabIDs struct {
	ids  map[target.ID]string
	next int
}

func (b *tabIDs) id(t target.ID) string {
	if b.ids == nil {
		b.ids = map[target.ID]string{}
	}
	if id, ok := b.ids[t]; ok {
		return id
	}
	b.next++
	id := fmt.Sprintf("t%d", b.next)
	b.ids[t] = id
	return id
}

// target returns the target an id was given to.
func (b *tabIDs) target(id string) (target.ID, bool) {
	for t, i := range b.ids {
		if i == id {
			return t, true
		}
	}
	return "", false
}

// tabListing decides which tabs the agent is shown. all is the browser's
// target list; ours the session's pages (sessionPages); current the
// session's tab. In the user's context (user) a page of the session tab's
// browser context that is not the session's is the user's, shown when
// inScope allows its URL (and it is a web page: http or https), else only
// counted in hidden. Pages of other browser contexts (another session's,
// another program's) are neither shown nor counted.
func tabListing(all []*target.Info, ours []*target.Info, current target.ID, user bool,
	inScope func(url string) bool, ids *tabIDs) (shown []tabInfo, hidden int) {
	own := map[target.ID]bool{}
	for _, t := range ours {
		own[t.TargetID] = true
		shown = append(shown, tabInfo{ID: ids.id(t.TargetID), Target: t.TargetID, URL: t.URL, Title: t.Title,
			Owner: ownerSession, Active: t.TargetID == current})
	}
	if !user {
		return shown, 0
	}
	var context string
	for _, t := range all {
		if t.TargetID == current {
			context = string(t.BrowserContextID)
		}
	}
	for _, t := range all {
		if t.Type != "page" || own[t.TargetID] || context == "" || string(t.BrowserContextID) != context {
			continue
		}
		if !isWebURL(t.URL) || !inScope(t.URL) {
			hidden++
			continue
		}
		shown = append(shown, tabInfo{ID: ids.id(t.TargetID), Target: t.TargetID, URL: t.URL, Title: t.Title, Owner: ownerUser})
	}
	return shown, hidden
}

// isWebURL reports whether u is an http or https URL.
func isWebURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// tabsText renders a listing for the agent, and tabsStructured for the
// structured content.
func tabsText(tabs []tabInfo, hidden int) string {
	var b strings.Builder
	for _, t := range tabs {
		mark := ""
		if t.Active {
			mark = " (current)"
		}
		fmt.Fprintf(&b, "%s [%s] %q %s%s\n", t.ID, t.Owner, t.Title, t.URL, mark)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "%d other tab(s) of the user's, outside the scope, not shown\n", hidden)
	}
	return b.String()
}

func tabsStructured(tabs []tabInfo, hidden int) map[string]any {
	list := make([]map[string]any, 0, len(tabs))
	for _, t := range tabs {
		list = append(list, map[string]any{"tab": t.ID, "url": t.URL, "title": t.Title, "owner": t.Owner, "active": t.Active})
	}
	out := map[string]any{"tabs": list}
	if hidden > 0 {
		out["hidden_tabs"] = hidden
	}
	return out
}
