package executor

import (
	"context"
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
// itself, committed nothing, or its landing answered). The landing is the
// URL the browser committed the document at (pageWatch.committed), never
// the page's location, which its scripts can rewrite (history.pushState)
// to name a request of their own that failed.
func (s *session) landedUnanswered(mark, navs int, asked string) (landed, why string) {
	w := s.tab.watch
	if w == nil {
		return "", ""
	}
	w.mu.Lock()
	landed, moved := w.committed, w.navigations != navs
	w.mu.Unlock()
	if !moved || landed == "" || canonicalNav(landed) == canonicalNav(asked) {
		return "", ""
	}
	return landed, s.egress.unreachable.since(mark, landed)
}

// redirectDidNotAnswer is navigate's error when asked redirected the tab
// to landed, which could not be reached (why).
func (s *session) redirectDidNotAnswer(ctx context.Context, asked, landed, why string, committed bool) error {
	err := fmt.Errorf("the site did not answer: %s redirected to %s, which could not be reached (%s); no page was loaded",
		pagetext.Value(asked), pagetext.Value(inert(landed)), why)
	return blankAfterSilence(ctx, err, committed)
}
