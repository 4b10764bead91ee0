package executor

import (
	"fmt"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// A navigate whose URL answers with a redirect to a site that does not
// answer lands the tab on the egress proxy's error response for the
// redirect's target, not on anything the site said. The check of
// unreachable.go is made again where the tab landed, so that such a
// navigate is the same clear error as one to a dead site, naming both
// URLs, and no snapshot shows the proxy's words as the page.

// landedUnanswered says where the tab landed after a navigate to asked
// and why that URL did not answer, when the tab committed a document
// since navs (the navigation count before the navigate) and the proxy
// noted a failed dial for its URL after mark ("" when the tab is on asked
// itself, committed nothing, or its landing answered); and whether the
// landing was a server's redirect of the navigate's own document request
// (pageWatch.committedByRedirect), not a page that loaded and moved on by
// itself (a script, a meta refresh). The landing is the URL the browser
// committed the document at (pageWatch.committed), never the page's
// location, which its scripts can rewrite (history.pushState) to name a
// request of their own that failed.
func (s *session) landedUnanswered(mark, navs int, asked string) (landed, why string, redirected bool) {
	w := s.tab.watch
	if w == nil {
		return "", "", false
	}
	w.mu.Lock()
	landed, moved, redirected := w.committed, w.navigations != navs, w.committedByRedirect
	w.mu.Unlock()
	if !moved || landed == "" || canonicalNav(landed) == canonicalNav(asked) {
		return "", "", false
	}
	return landed, s.egress.unreachable.since(mark, landed), redirected
}

// redirectDidNotAnswer is navigate's error when the tab went from asked
// to landed, which could not be reached (why): by the server's redirect
// (redirected), or because the page at asked moved on by itself. Only a
// redirect is called one: a page that loaded and then left is the
// page's doing, not the site's answer to the navigate.
func (s *session) redirectDidNotAnswer(asked, landed, why string, redirected, committed bool) error {
	var err error
	if redirected {
		err = fmt.Errorf("the site did not answer: %s redirected to %s, which could not be reached (%s); no page was loaded",
			pagetext.Value(asked), pagetext.Value(inert(landed)), why)
	} else {
		err = fmt.Errorf("the site did not answer: the page at %s moved on to %s, which could not be reached (%s)",
			pagetext.Value(asked), pagetext.Value(inert(landed)), why)
	}
	return s.blankAfterSilence(err, committed)
}
