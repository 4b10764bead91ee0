package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// BenchmarkLoginFlow measures what an agent waits for in a sign-in flow
// through the real binary over MCP stdio, with the full gate and durable
// evidence on: navigate, snapshot, type two fields by ref, click, and the
// state of the next page. The browser is warm (launched before the timer).
// The shipped policies allow 5 form submissions per session, so every
// fourth iteration starts a new server (outside the timer).
//
// Sub-benchmarks: launch (interception and the egress proxy), live in the
// user's context (interception and the WebSocket rules, no proxy) and
// live with context = "isolated" (as launch, on a running browser).
func BenchmarkLoginFlow(b *testing.B) {
	b.Run("launch", func(b *testing.B) { benchLogin(b, func() *fixture { return start(b, "launch", "") }) })
	for _, context := range []string{"user", "isolated"} {
		b.Run("live-"+context, func(b *testing.B) {
			port, _ := startChromium(b)
			manifest := strings.Replace(fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = \"http://127.0.0.1:%d\"", port)),
				"[browser]\n", "[browser]\ncontext = \""+context+"\"\n", 1)
			benchLogin(b, func() *fixture { return startWith(b, manifest) })
		})
	}
}

func benchLogin(b *testing.B, newFixture func() *fixture) {
	var f *fixture
	i := 0
	for b.Loop() {
		if i%4 == 0 {
			b.StopTimer()
			if f != nil {
				f.cs.Close()
			}
			f = newFixture()
			f.mustAllow(b, "e2e.navigate", map[string]any{"url": f.siteURL + "/"})
			b.StartTimer()
		}
		i++
		after := f.login(b)
		if !strings.Contains(after, `title="Dashboard"`) {
			b.Fatalf("login did not reach the dashboard: %s", after)
		}
		b.StopTimer()
		f.mustAllow(b, "e2e.navigate", map[string]any{"url": f.siteURL + "/logout"})
		b.StartTimer()
	}
}

// BenchmarkSnapshot measures one snapshot call of the demo documentation
// page and reports its size in bytes (about 4 bytes a token).
func BenchmarkSnapshot(b *testing.B) {
	f := start(b, "launch", "")
	f.mustAllow(b, "e2e.navigate", map[string]any{"url": f.siteURL + "/docs"})
	var size int
	for b.Loop() {
		size = len(f.mustAllow(b, "e2e.snapshot", nil))
	}
	b.ReportMetric(float64(size), "bytes/snapshot")
}

// BenchmarkAdoptedTab measures the guard on a user's tab in live mode's
// user context: one op loads the demo documentation page (with its
// subresources) in the tab. "user-unguarded" is the user loading it
// themselves over their own DevTools connection, before any session
// adopts the tab; "adopted" is browsergate's navigate in the same tab
// after switch_tab (the whole governed call: observe, decide, Cedar,
// interception of every request, evidence); "session-tab" is the same
// call in the session's own tab, for comparison.
func BenchmarkAdoptedTab(b *testing.B) {
	port, _ := startChromium(b)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	f := start(b, "live", endpoint)
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), endpoint)
	defer cancelAlloc()
	user, cancelUser := chromedp.NewContext(alloc)
	defer cancelUser()
	page := f.siteURL + "/docs"
	if err := chromedp.Do(user, chromedp.Navigate(page+"?user")); err != nil {
		b.Fatal(err)
	}
	b.Run("user-unguarded", func(b *testing.B) {
		for b.Loop() {
			if err := chromedp.Do(user, chromedp.Navigate(page)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("session-tab", func(b *testing.B) {
		for b.Loop() {
			f.mustAllow(b, "e2e.navigate", map[string]any{"url": page})
		}
	})
	tab := f.tabID(b, "e2e", "user", "/docs")
	f.mustAllow(b, "e2e.switch_tab", map[string]any{"tab": tab})
	b.Run("adopted", func(b *testing.B) {
		for b.Loop() {
			f.mustAllow(b, "e2e.navigate", map[string]any{"url": page})
		}
	})
}
