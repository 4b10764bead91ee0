package executor

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/toolclad"
)

// attach runs chromedp's attach of ctx's target (a tab or an
// out-of-process frame), which enables the domains chromedp reads, then
// turns off what the executor never reads and what costs the browser in
// every session: the CSS domain (its agent reports every style sheet to
// the client and keeps track of them), and Network's copies of response
// bodies, which chromedp's Network.enable leaves at Chromium's default
// (up to 100 MB a page, kept in its renderer) and no command reads. The
// Network events that the page log and the load wait read are kept. With
// metrics, the Performance domain is enabled too, while the page still
// answers: it is how the daemon finds a busy renderer's tab (spinning.go).
// bodies is Network's buffer for response bodies, per resource (0: none);
// a session whose manifest declares network_request keeps them
// (bodyBuffer).
func attach(ctx context.Context, metrics bool, bodies int64) error {
	if err := chromedp.Do(ctx); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, css.Disable, cdp.Empty{}); err != nil {
		return fmt.Errorf("CSS.disable: %w", err)
	}
	total := bodies * bodiesPerTab
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{MaxTotalBufferSize: &total, MaxResourceBufferSize: &bodies}); err != nil {
		return fmt.Errorf("Network.enable: %w", err)
	}
	if metrics {
		// Without it the tab's renderer is never found busy: it keeps its
		// priority, and the tab works as before.
		_, _ = chromedp.Call(ctx, performance.Enable, performance.EnableParams{})
	}
	return nil
}

// bodiesPerTab is how many of the largest bodies a tab's buffer holds.
const bodiesPerTab = 16

// bodyBuffer is the response-body buffer a session's tabs get: none,
// unless its manifest declares network_request, which reads the bodies
// (maxBodyFetched each, bodiesPerTab times that a tab).
func bodyBuffer(m *toolclad.Manifest) int64 {
	if readsRequests(m) {
		return maxBodyFetched
	}
	return 0
}

// readsRequests reports whether a manifest declares network_request, for
// which a session's tabs keep their requests' detail and bodies.
func readsRequests(m *toolclad.Manifest) bool { return m.Command("network_request") != nil }
