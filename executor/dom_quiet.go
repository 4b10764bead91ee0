package executor

import (
	"context"
	"time"
)

// The quiet-DOM wait: after an action and the network's quiet window, the
// document the tab is on must have seen no mutation for 20 ms (client-side
// rendering), counted from its last mutation. Each document's mutations
// are watched in browsergate's isolated world from the end of its parsing
// (js/dom_watch.js, js/dom_changes.js), so what the page's own scripts do
// to MutationObserver, timers or the clock cannot shorten the wait, and
// the page cannot see the watch.

// domQuietCap bounds the wait for a document that never stops changing
// (an animation that writes the DOM every frame, a ticking clock): the
// reply then shows the page as it was when the cap passed.
const domQuietCap = 500 * time.Millisecond

// How a quiet-DOM wait ended (domQuietEnd.End).
const (
	// domQuietStill: the document had been still for the whole window
	// when the wait began; it ended at once.
	domQuietStill = "quiet"
	// domQuietWaited: the document changed within the window, and the
	// wait waited until it had been still for the window.
	domQuietWaited = "waited"
	// domQuietCapped: the document kept changing until domQuietCap.
	domQuietCapped = "capped"
	// domQuietUnread: the wait could not be run or did not answer (the
	// document went away under it, the tab closed, the page's thread was
	// busy past the wait's bound).
	domQuietUnread = "unread"
)

// domQuietEnd is how a quiet-DOM wait ended, as dom_quiet.js says it:
// End is one of the domQuiet* names above; Watched says whether the
// document's watch was there before the wait (false: the wait started it,
// and counted its window from its own start, as for a document that began
// before the session's tab was watched or never finished parsing); Ready
// is the document's readyState as the wait ended, read in the isolated
// world ("" when the wait went unread and no world answered).
type domQuietEnd struct {
	End     string `json:"end"`
	Watched bool   `json:"watched"`
	Ready   string `json:"ready"`
}

// domQuietFunc runs a quiet-DOM wait on the tab's document with the given
// cap (waitStable's last step).
type domQuietFunc func(tab context.Context, cap time.Duration) domQuietEnd
