package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// list_tabs, switch_tab, new_tab and close_tab: the tabs as the agent
// sees and moves between them. The session's tabs themselves (which are
// whose, switching, letting go) are tabs.go's.

func actListTabs(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return output{}, err
	}
	tabs, hidden := s.listTabs(all)
	tabs = s.labelContexts(tabs, all)
	for i, t := range tabs {
		// Each tab's title is its page's: masked for the secrets considered
		// on that page, as read; its URL for those of the documents that
		// may have chosen it (session.shownURL). Both marked done, so that
		// nothing masks them again for the pages the call reads.
		tabs[i].Title, tabs[i].URL = pagetext.Done(s.shownTitle(string(t.Target), t.Title, t.URL)), pagetext.Done(s.shownURL(string(t.Target), t.URL))
	}
	return output{Text: tabsText(tabs, hidden), Structured: tabsStructured(tabs, hidden)}, nil
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
		owner := t.Owner
		if t.Context != "" {
			owner += ", context " + t.Context
		}
		fmt.Fprintf(&b, "%s [%s] %s %s%s\n", t.ID, owner, quotedTitle(t.Title), valueOrDone(t.URL), mark)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "%d other tab(s) of the user's, outside the scope, not shown\n", hidden)
	}
	return b.String()
}

// quotedTitle is a tab's title quoted, marked as valueOrDone marks it.
func quotedTitle(title string) string {
	if pagetext.HasMarks(title) {
		return pagetext.Done(strconv.Quote(pagetext.Unmarked(title)))
	}
	return pagetext.Value(strconv.Quote(title))
}

// valueOrDone marks s as a page's value, unless it is marked already (a
// URL shownURL masked, marked done).
func valueOrDone(s string) string {
	if pagetext.HasMarks(s) {
		return s
	}
	return pagetext.Value(s)
}

func tabsStructured(tabs []tabInfo, hidden int) map[string]any {
	list := make([]map[string]any, 0, len(tabs))
	for _, t := range tabs {
		entry := map[string]any{"tab": t.ID, "url": t.URL, "title": t.Title, "owner": t.Owner, "active": t.Active}
		if t.Context != "" {
			entry["context"] = t.Context
		}
		list = append(list, entry)
	}
	out := map[string]any{"tabs": list}
	if hidden > 0 {
		out["hidden_tabs"] = hidden
	}
	return out
}

func actSwitchTab(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	tb := f.Tab
	tab := target.ID(tb.Page)
	if tb.User && !s.egress.guard.isUserTab(string(tab)) {
		// The user's tab comes under the guard with every page of its
		// browsing-context group (groups.go; the decision refused a group
		// with a page the session cannot take), then each gets a fresh
		// document born under it: what the page ran before (a worker, a
		// saved reference to a constructor the guard removes, a
		// connection) is gone with the old document. All are guarded
		// before any is reloaded, so no new document can reach one still
		// unguarded. An adoption that stops half-way is undone: the
		// session goes back to its tab and lets the user's go, so that it
		// never acts in a tab whose old document lives on.
		prev := s.tab.targetID()
		var taken []target.ID
		undo := func(err error) (output, error) {
			if s.tab.targetID() != prev {
				_ = s.switchTo(ctx, prev)
			}
			for _, id := range taken {
				s.letGo(id)
			}
			return output{}, fmt.Errorf("%w; the tab was let go and the session stays on its tab", err)
		}
		var ids []target.ID
		for _, m := range f.TabGroup {
			ids = append(ids, target.ID(m.Page))
		}
		ids = append(ids, tab) // last: the current tab after
		for _, id := range ids {
			if !claimedTabs.claim(id, s.id) {
				return undo(fmt.Errorf("tab %s is held by another session", s.tabIDs.id(id)))
			}
			taken = append(taken, id)
			if err := s.noteForeign(ctx, id); err != nil {
				return undo(err)
			}
			if err := s.egress.guard.adopt(ctx, string(id), true); err != nil {
				return undo(err)
			}
			s.tabs.roots = append(s.tabs.roots, id)
		}
		for _, id := range ids {
			delete(s.tabs.foreign, id) // the group's pages are the session's now
		}
		for _, id := range ids {
			if err := s.switchTo(ctx, id); err != nil {
				return undo(err)
			}
			before := s.tab.watch.navigationCount()
			tctx, cancel := s.onCurrent(ctx)
			err := reloadFresh(tctx)
			cancel()
			if err != nil {
				return undo(fmt.Errorf("reload the adopted tab %s: %w", s.tabIDs.id(id), err))
			}
			if s.tab.watch.navigationCount() == before {
				return undo(fmt.Errorf("the adopted tab %s's reload did not give it a new document", s.tabIDs.id(id)))
			}
		}
		return output{Text: fmt.Sprintf("switched to %s, the user's tab at %s (now under the session's guard; reloaded%s)", tb.ID, pagetext.Done(s.shownURL(string(tb.Page), tb.URL)), describeGroup(f.TabGroup))}, nil
	}
	if err := s.switchTo(ctx, tab); err != nil {
		return output{}, err
	}
	return output{Text: fmt.Sprintf("switched to %s (%s)", tb.ID, pagetext.Done(s.shownURL(string(tb.Page), tb.URL)))}, nil
}

// noteForeign records the pages the user's tab id opened (by opener,
// transitively) before the session adopts it: they stay the user's.
func (s *session) noteForeign(ctx context.Context, id target.ID) error {
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return fmt.Errorf("list the tabs the user's tab opened: %w", err)
	}
	if s.tabs.foreign == nil {
		s.tabs.foreign = map[target.ID]bool{}
	}
	for _, p := range sessionPages(all, "", id) {
		if p.TargetID != id {
			s.tabs.foreign[p.TargetID] = true
		}
	}
	return nil
}

func actNewTab(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	u, _ := args["url"].(string)
	params := map[string]any{"url": "about:blank"}
	if s.tab.browserID != "" && !s.backend.userContext() {
		params["browserContextId"] = s.tab.browserID
	}
	raw, err := s.egress.guard.call(ctx, "", "Target.createTarget", params)
	if err != nil {
		return output{}, fmt.Errorf("open a tab: %w", err)
	}
	var created struct {
		TargetID target.ID `json:"targetId"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.TargetID == "" {
		return output{}, fmt.Errorf("open a tab: no target id in %s", raw)
	}
	claimedTabs.claim(created.TargetID, s.id)
	// A tab that could not be made the session's is closed (still
	// guarded, if it came under the guard) and leaves no claim behind.
	undo := func(err error) (output, error) {
		cctx, cancel := context.WithTimeout(context.Background(), tabAttachWait)
		defer cancel()
		_, _ = s.egress.guard.call(cctx, "", "Target.closeTarget", map[string]any{"targetId": created.TargetID})
		s.letGo(created.TargetID)
		return output{}, fmt.Errorf("%w; the new tab was closed", err)
	}
	// Blank, it has sent nothing: it comes under the guard before it
	// loads the URL.
	if err := s.egress.guard.adopt(ctx, string(created.TargetID), false); err != nil {
		return undo(err)
	}
	s.tabs.roots = append(s.tabs.roots, created.TargetID)
	if err := s.switchTo(ctx, created.TargetID); err != nil {
		return undo(err)
	}
	if u == "" {
		// Without a URL the tab stays blank, as wcore-browser's new_tab
		// does: about:blank is no page of any site, so it is inside every
		// scope (gate.After).
		return output{Text: fmt.Sprintf("opened %s, blank (about:blank)", s.tabIDs.id(created.TargetID))}, nil
	}
	tctx, cancel := s.onCurrent(ctx)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		return output{}, fmt.Errorf("navigate the new tab to %s: %w", u, err)
	}
	return output{Text: fmt.Sprintf("opened %s at %s", s.tabIDs.id(created.TargetID), pagetext.Value(u))}, nil
}

func actCloseTab(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	tb := f.Tab
	tab := target.ID(tb.Page)
	if tab == s.tab.targetID() {
		// The session goes back to its first tab.
		if err := s.switchTo(ctx, s.tabs.home); err != nil {
			return output{}, err
		}
	}
	// ctx may be the closed tab's own, which ends as it is let go: what
	// follows runs on the current tab's.
	cctx, cancel := context.WithTimeout(s.tab.ctx, tabAttachWait)
	defer cancel()
	// Closed while still guarded, then let go: it never runs unguarded.
	_, err := s.egress.guard.call(cctx, "", "Target.closeTarget", map[string]any{"targetId": tab})
	s.letGo(tab)
	if err != nil {
		return output{}, fmt.Errorf("close %s: %w", tb.ID, err)
	}
	return output{Text: fmt.Sprintf("closed %s (%s)", tb.ID, pagetext.Done(s.shownURL(string(tb.Page), tb.URL)))}, nil
}
