package main

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestUsersOwnClicksWorkInATabTheSessionLetGo: the early hold
// (no_new_tab.js) is in every document of the session's pages, an adopted
// user's tab too (switch_tab reloads it under the guard), and it stays in
// that document after the session lets the tab go ("let go as they are",
// live-mode.md). It cancels only clicks a script made: the user's own
// Shift-click on a checkbox (a range selection in a mail list) still
// ticks it, and the user's own Control-click on a link still opens a
// tab, after the session has ended.
func TestUsersOwnClicksWorkInATabTheSessionLetGo(t *testing.T) {
	t.Parallel()
	usersClicksAfterTheSession(t, true)
}

// TestUsersOwnClicksWorkInATabNoSessionAdopted: the same clicks in a
// user's tab no session adopted tick the box and open the tab (the
// control of the test above).
func TestUsersOwnClicksWorkInATabNoSessionAdopted(t *testing.T) {
	t.Parallel()
	usersClicksAfterTheSession(t, false)
}

// usersClicksAfterTheSession has the user Shift-click a checkbox and
// Control-click a link in a tab of theirs, after a session in their
// browser (which adopted the tab when adopt) has ended.
func usersClicksAfterTheSession(t *testing.T, adopt bool) {
	port, _ := startUsersChromium(t) // "Preload pages" off, as the README says
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	site, log := serveLogged(t, map[string]string{
		"/page":   `<title>page</title><input type=checkbox id=c style="position:absolute;left:20px;top:20px;width:30px;height:30px"><a id=l href="/linked" style="position:absolute;left:20px;top:100px;font-size:40px">link</a>`,
		"/linked": `<title>linked</title>`,
	})
	userTab, f := liveSessionBesideAUsersTab(t, endpoint, site, adopt)
	// The session ends (its connections drop, as when the daemon stops).
	if err := syscall.Kill(f.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	click := func(x, y float64, mods int64) {
		t.Helper()
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			if _, err := chromedp.Call(userTab, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1, Modifiers: mods}); err != nil {
				t.Fatal(err)
			}
		}
	}
	click(35, 35, 8) // Shift: the user's Shift-click on the checkbox
	checked, err := chromedp.Run(userTab, chromedp.Evaluate[bool](`document.getElementById('c').checked`))
	if err != nil {
		t.Fatal(err)
	}
	before := log.count("/linked")
	click(40, 120, 2) // Control: the user's Control-click on the link: a new tab
	time.Sleep(1500 * time.Millisecond)
	opened := log.count("/linked") - before
	t.Logf("after the session: Shift-click ticked the checkbox: %v; Control-click opened %d tab(s)", checked, opened)
	if !checked {
		t.Errorf("the user's own Shift-click on a checkbox in the tab the session let go did not tick it")
	}
	if opened != 1 {
		t.Errorf("the user's own Control-click on a link in the tab the session let go opened %d tab(s), want 1", opened)
	}
}
