package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/toolclad"
)

// TestSessionTabKeepsNoResponseBodies: chromedp's attach turns Network on
// with Chromium's default buffers, which keep a copy of every response
// body in the page's renderer (up to 100 MB a page, across navigations)
// though no command reads one; attach turns them off. The page's own
// document must then have no body to give over CDP, where with the default
// buffers Network.getResponseBody returns it.
func TestSessionTabKeepsNoResponseBodies(t *testing.T) {
	t.Parallel()
	e, m, site := newNavigator(t, "nobodies")
	t.Cleanup(e.Close)
	cmd := m.Command("navigate")
	args, err := cmd.Validate(map[string]any{"url": site})
	if err != nil {
		t.Fatal(err)
	}
	call := &toolclad.Call{Manifest: m, Command: cmd, SessionID: "s", Args: args, Progress: func(string) {}}
	if r := e.Run(context.Background(), call); r.IsError || !strings.Contains(r.Text, `title="here"`) {
		t.Fatalf("navigate: %+v", r)
	}
	e.mu.Lock()
	var tab context.Context
	for k, s := range e.sessions {
		if k.mcp == "s" {
			tab = s.tab.ctx
		}
	}
	e.mu.Unlock()
	if tab == nil {
		t.Fatal("no session s after its navigate")
	}
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	tree, err := chromedp.Call(ctx, page.GetFrameTree, struct{}{})
	if err != nil {
		t.Fatalf("read the tab's frame tree: %v", err)
	}
	// A document's request has its loader's id.
	body, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: network.RequestID(tree.FrameTree.Frame.LoaderID)})
	if err == nil {
		t.Fatalf("the session's tab kept the page's body (%q): Network's buffers are on", body.Body)
	}
}
