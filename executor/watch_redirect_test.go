package executor

import (
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// TestWatchTellsAServerRedirectFromThePagesOwnMove: a main-frame document
// that commits on the loader of a document request the server redirected
// came by a redirect; one that commits on a new loader (a script's or a
// meta refresh's navigation, whose request has no redirect response) did
// not, even right after a redirect; and an iframe's redirect says nothing
// of the main frame.
func TestWatchTellsAServerRedirectFromThePagesOwnMove(t *testing.T) {
	w := newPageWatch("main", "", func(s, _ string) string { return s })
	request := func(frame cdp.FrameID, loader cdp.LoaderID, redirected bool) {
		e := &network.EventRequestWillBeSent{RequestID: network.RequestID(loader), LoaderID: loader, FrameID: frame,
			Type: network.ResourceTypeDocument, Request: &network.Request{URL: "http://127.0.0.1/"}}
		if redirected {
			e.RedirectResponse = &network.Response{Status: 302}
		}
		w.listen(e)
	}
	commit := func(loader cdp.LoaderID) bool {
		w.listen(&page.EventFrameNavigated{Frame: &cdp.Frame{ID: "main", LoaderID: loader, URL: "http://127.0.0.1:1/"}})
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.committedByRedirect
	}

	request("main", "L1", false)
	request("main", "L1", true) // the server's 302
	if !commit("L1") {
		t.Error("a document the server redirected to is not taken for a redirect")
	}
	request("main", "L2", false) // the page's location.replace
	if commit("L2") {
		t.Error("the page's own move is taken for a redirect")
	}
	request("main", "L3", false)
	request("child", "L4", true) // an iframe's redirect
	if commit("L3") {
		t.Error("an iframe's redirect is taken for the main document's")
	}
}
