package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/publicsuffix"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/scope"
)

// Browsing-context groups. A page can script or navigate more than its own
// tab: its opener (window.opener), the popups it opened (the handles
// window.open returned), and any window of its browsing-context group that
// it may navigate by name (window.open(url, name)). In the user's browser
// context those may be the user's own, unguarded tabs, so a session never
// takes one tab of a group alone: adopting a user's tab (switch_tab) takes
// every page of its group that the scope allows with it, and is refused
// when the group holds a page the session cannot guard. A secret is typed
// only into a page whose group is wholly the session's, with no unguarded
// page of its site beside it (those share its cookies and storage).
//
// Chromium does not name a page's group over DevTools; its target list
// names each page's opener (openerId, even for a noopener popup or an
// opener since disowned) and whether the page can still reach it
// (canAccessOpener). Two pages are taken to be in one group when
//
//   - one opened the other and the opened one can still reach its opener,
//   - one opened the other and they are of one origin: a noopener popup
//     is a group of its own (HTML, "rel=noopener"), but a popup that
//     disowned its opener (window.opener = null) is not, and Chromium
//     reports both alike; pages of one origin in one group can find and
//     script each other by name, so the doubt counts against them,
//   - they share an opener (open, closed or disowned) and are of one
//     origin, for the same reason.
//
// Pages of different origins in one group whose opener link is cut
// cannot navigate each other (HTML's "allowed to navigate": neither is
// the other's opener nor of its origin), so those are not joined.

// groupPeers returns the pages of all, in id's browser context, that share
// a browsing-context group with page id (id itself left out).
func groupPeers(all []*target.Info, id target.ID) []*target.Info {
	return peersBy(all, id, joined)
}

// linkedPeers returns the pages of all, in id's browser context, joined to
// page id by opener links of any kind (id itself left out): every page
// that may share its browsing-context group. A popup that disowned its
// opener (window.opener = null) stays in the opener's group, and the two
// are not joined only while they are of different origins: the opener's
// own script may move it to the popup's origin at any time and then find
// the popup by name (window.open("", name)) and script it, reading a
// field the secret was typed into (TestSecretNotTypedBesideADisownedOpener).
// The target list cannot tell such a popup from a noopener one (a group
// of its own), so for a secret the doubt counts against it.
func linkedPeers(all []*target.Info, id target.ID) []*target.Info {
	return peersBy(all, id, func(a, b *target.Info) bool {
		return a.OpenerID == b.TargetID || b.OpenerID == a.TargetID || a.OpenerID != "" && a.OpenerID == b.OpenerID
	})
}

// peersBy returns the pages of all, in id's browser context, that rel
// joins to page id, directly or through others (id itself left out).
func peersBy(all []*target.Info, id target.ID, rel func(a, b *target.Info) bool) []*target.Info {
	var self *target.Info
	for _, t := range all {
		if t.TargetID == id {
			self = t
		}
	}
	if self == nil {
		return nil
	}
	var pages []*target.Info
	for _, t := range all {
		if t.Type == "page" && t.BrowserContextID == self.BrowserContextID {
			pages = append(pages, t)
		}
	}
	in := map[target.ID]bool{id: true}
	for grew := true; grew; {
		grew = false
		for _, a := range pages {
			if in[a.TargetID] {
				continue
			}
			for _, b := range pages {
				if in[b.TargetID] && rel(a, b) {
					in[a.TargetID], grew = true, true
					break
				}
			}
		}
	}
	var out []*target.Info
	for _, t := range pages {
		if in[t.TargetID] && t.TargetID != id {
			out = append(out, t)
		}
	}
	return out
}

// joined reports whether pages a and b are taken to be of one group
// (groupPeers says when).
func joined(a, b *target.Info) bool {
	switch {
	case a.OpenerID == b.TargetID:
		return a.CanAccessOpener || sameOrigin(a.URL, b.URL)
	case b.OpenerID == a.TargetID:
		return b.CanAccessOpener || sameOrigin(a.URL, b.URL)
	case a.OpenerID != "" && a.OpenerID == b.OpenerID:
		return sameOrigin(a.URL, b.URL)
	}
	return false
}

// originOf is a URL's origin as the browser writes it — scheme://host,
// with :port only when it is not the scheme's default — with the host as
// scope canonicalises it, the way Chromium reads it ("" for a URL without
// a host: about:blank, data:).
func originOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port == "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + ":" + u.Port
}

// siteOf is a URL's site as cookies know it: the registrable domain of its
// host (its host when that is an IP address or a public suffix), whatever
// the scheme and port ("" for a URL without a host). A cookie the field's
// page sets is a host's (no port) or its domain's, and a page of the site
// at another origin frames the field's origin with first-party storage:
// an origin alone missed a user's page of the field's host at another
// port, which read the value from a cookie (TestSecretNotTypedBesideAUsersPageOfTheSite).
func siteOf(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.IP.IsValid() {
		return u.Host
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(u.Host); err == nil {
		return d
	}
	return u.Host
}

// sameOrigin reports whether two URLs are of one origin. A page on
// about:blank (or any URL without a host) inherits its creator's origin,
// which the target list does not say: it counts as of every origin.
func sameOrigin(a, b string) bool {
	oa, ob := originOf(a), originOf(b)
	return oa == "" || ob == "" || oa == ob
}

// describeGroup is the sentence a reply gives of the pages taken with a
// tab.
func describeGroup(members []gate.GroupMember) string {
	if len(members) == 0 {
		return ""
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.Listed
	}
	return fmt.Sprintf("; %s, of its browsing-context group (they can script or navigate each other), taken with it", strings.Join(ids, ", "))
}

// unguardedBeside names the pages a secret typed into the field at
// fieldURL, in the session's current tab, could reach without the guard:
// the pages of the tab's browsing-context group that are not the
// session's, and the user's pages of the field's origin, which share its
// storage (localStorage, BroadcastChannel, IndexedDB) and so could be
// handed the value and send it anywhere. Empty in a browser context of
// the session's own, where every page is guarded.
func (s *session) unguardedBeside(all []*target.Info, fieldURL string) []string {
	if !s.backend.userContext() {
		return nil
	}
	cur := s.tab.targetID()
	ours := map[target.ID]bool{}
	for _, p := range sessionPagesExcept(all, s.tab.browserID, s.tabs.foreign, s.rootIDs()...) {
		ours[p.TargetID] = true
	}
	tabs, _ := s.listTabs(all)
	listed := map[target.ID]string{}
	for _, l := range tabs {
		listed[l.Target] = l.ID
	}
	var context cdp.BrowserContextID
	for _, t := range all {
		if t.TargetID == cur {
			context = t.BrowserContextID
		}
	}
	site := siteOf(fieldURL)
	seen := map[target.ID]bool{}
	var out []string
	add := func(t *target.Info, why string) {
		if ours[t.TargetID] || seen[t.TargetID] {
			return
		}
		seen[t.TargetID] = true
		m := gate.GroupMember{Page: gate.PageID(t.TargetID), URL: t.URL, Listed: listed[t.TargetID]}
		out = append(out, m.Name()+" ("+why+")")
	}
	for _, p := range groupPeers(all, cur) {
		add(p, "of the tab's browsing-context group")
	}
	for _, p := range linkedPeers(all, cur) {
		add(p, "linked to the tab by an opener, so perhaps of its browsing-context group, where it can find the tab by name once of its origin")
	}
	for _, t := range all {
		if t.BrowserContextID != context || site == "" || siteOf(t.URL) != site {
			continue
		}
		switch t.Type {
		case "page":
			add(t, "of the field's site, sharing its storage and cookies")
		case "service_worker", "shared_worker":
			// A worker of the user's runs on after its pages close and
			// hears the field's page on a BroadcastChannel (which the
			// session's pages keep); the guard never holds it
			// (TestSecretNotTypedBesideAUsersWorkerOfTheSite).
			if !seen[t.TargetID] {
				seen[t.TargetID] = true
				out = append(out, "a "+strings.ReplaceAll(t.Type, "_", " ")+" of the user's on the field's site (sharing its storage, BroadcastChannel included)")
			}
		}
	}
	return out
}

// holdsGroup reports whether a user's tab the session adopted must stay
// under the guard rather than be let go: another page of the session's
// shares its browsing-context group, and could script or navigate it once
// unguarded. When the tabs cannot be listed it says yes (fail closed: a
// tab kept under the guard only loses the user its use until the session
// ends).
func (s *session) holdsGroup(ctx context.Context, id target.ID) bool {
	all, err := chromedp.Targets(ctx)
	if err != nil {
		return true
	}
	ours := map[target.ID]bool{}
	for _, p := range sessionPagesExcept(all, s.tab.browserID, s.tabs.foreign, s.rootIDs()...) {
		ours[p.TargetID] = p.TargetID != id
	}
	// Any opener link counts here, not only groupPeers' rule: a page
	// that disowned its opener stays in its group, and the two can come
	// to one origin later (linkedPeers).
	for _, p := range linkedPeers(all, id) {
		if ours[p.TargetID] {
			return true
		}
	}
	return false
}

// holdUserTab keeps a user's tab that left the scope under the guard
// (holdsGroup): its refused navigation is reported once, not again by
// every later call.
func (s *session) holdUserTab(id target.ID) {
	if s.tabs.held == nil {
		s.tabs.held = map[target.ID]bool{}
	}
	s.tabs.held[id] = true
	s.egress.blocked.forgetNav(string(id))
}
