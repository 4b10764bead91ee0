package executor

import (
	"fmt"
	"testing"
)

// BenchmarkStart measures a governed session's start on Debian's Chromium,
// stage by stage:
//
//   - launch: the browser started (its browser-wide egress proxy, the
//     process and its DevTools port, answering; no tab of its own), as
//     serve does at start;
//   - first-navigate: a new MCP session's first call, navigate, on a
//     running browser (the session, its browser context with its own
//     egress proxy, its tab, the guard attached, then observe, decide,
//     act and record);
//   - navigate: the same navigate on a session that has its tab.
//
// first-navigate less navigate is what a session's context and tab cost.
func BenchmarkStart(b *testing.B) {
	rig := newBenchRig(b, []byte("<!doctype html><title>Start</title><p><a href=/next>Continue</a></p>"))
	start := func(e *Executor) {
		e.mu.Lock()
		bk := e.backendLocked(rig.m)
		e.mu.Unlock()
		if err := bk.warm(); err != nil {
			b.Fatal(err)
		}
	}
	navigate := func(e *Executor, session string) {
		rig.call(b, e, session, "navigate", map[string]any{"url": rig.url})
	}

	b.Run("launch", func(b *testing.B) {
		for b.Loop() {
			e := rig.newExecutor()
			start(e)
			b.StopTimer()
			e.Close()
			b.StartTimer()
		}
	})
	e := rig.newExecutor()
	defer e.Close()
	start(e)
	b.Run("first-navigate", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			id := fmt.Sprintf("first-%d", i)
			navigate(e, id)
			b.StopTimer()
			e.EndSession(id)
			b.StartTimer()
		}
	})
	b.Run("navigate", func(b *testing.B) {
		for b.Loop() {
			navigate(e, "warm")
		}
	})
}
