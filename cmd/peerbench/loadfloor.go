package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The load scenario's floor (chromium-alone): one Chromium for the level,
// launched as the speed scenario's floor is (floorAllocator) by chromedp in
// this process, and each agent's session a browser context of its own with
// one tab, as browsergate and Playwright MCP give each client. The round is
// the servers' (runLevel), through floor.go's agent: each step the least any
// server needs, nothing waited for but a navigation's load event, no refs
// kept, no gate, no evidence. Its memory and CPU are the browser's tree:
// what no server that shares one Chromium among its clients can go below
// on this machine.

// startFloorLoad launches the level's Chromium, with its first tab (the
// browser's own, about:blank) kept open to hold the browser: the idle
// "server" is that browser.
func startFloorLoad() (*loadServer, error) {
	dir, err := os.MkdirTemp("", "peerbench-floor-")
	if err != nil {
		return nil, err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), floorAllocator(dir)...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	end := func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		end()
		return nil, fmt.Errorf("start Chromium: %w", err)
	}
	browser := chromedp.FromContext(bctx).Browser.Process()
	pid := browser.Pid
	var once sync.Once
	stop := func() {
		once.Do(func() {
			endTree(pid, end)
			unregisterStop(pid)
		})
	}
	registerStop(pid, stop)
	return &loadServer{
		roots: func() []int { return []int{pid} },
		connect: func(int) (*loadSession, error) {
			// A browser context and its tab, created and attached to by the
			// first Do; ending the session closes the tab and disposes of
			// the context (chromedp's cancel waits for both).
			ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
			if err := chromedp.Do(ctx); err != nil {
				cancel()
				return nil, fmt.Errorf("open a browser context: %w", err)
			}
			// chromedp's attach turns on domains the floor never reads:
			// Network (whose buffers keep every response body in the
			// renderer, and whose events cross the browser's main thread)
			// and CSS. The least a server needs is without them.
			for _, off := range []cdp.Command[cdp.Empty, cdp.Empty]{network.Disable, css.Disable} {
				if _, err := chromedp.Call(ctx, off, cdp.Empty{}); err != nil {
					cancel()
					return nil, fmt.Errorf("%s: %w", off.Method, err)
				}
			}
			return &loadSession{agent: &floorTab{ctx: ctx, cancel: cancel}, close: cancel}, nil
		},
		alive: func() error {
			// Signal 0 only asks whether the process is still there; it
			// fails once chromedp has waited for its end.
			if err := browser.Signal(syscall.Signal(0)); err != nil {
				return fmt.Errorf("Chromium ended: %v", err)
			}
			return nil
		},
		stop:    stop,
		cmdline: floorCmdline(),
	}, nil
}

// floorCmdline is how the floor's Chromium is launched, and its sessions.
func floorCmdline() string {
	var b strings.Builder
	b.WriteString("chromedp's exec allocator in this process: /usr/bin/chromium " + strings.Join(chromiumFlags, " "))
	for _, name := range slices.Sorted(maps.Keys(floorFlags)) {
		fmt.Fprintf(&b, " --%s=%q", name, floorFlags[name])
	}
	b.WriteString(" --user-data-dir=<fresh> (and chromedp's --remote-debugging-pipe); a session is a browser context with one tab" +
		" (Target.createBrowserContext and createTarget; ended by closeTarget and disposeBrowserContext)")
	return b.String()
}
