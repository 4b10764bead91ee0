package executor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/internal/sparetime"
)

// TestPageThatSpinsRunsOnSpareTimeWhileItsSessionWaits: one session's
// page spins in for (;;) {} after it loads, another's page is idle. While
// the spinning page's session has no call, its renderer (the one of the
// browser's that used the most processor time, and no other) is lowered
// to spare processor time; the other session's calls run; and while the
// spinning page's session's next call runs, its renderer has its priority
// back.
func TestPageThatSpinsRunsOnSpareTimeWhileItsSessionWaits(t *testing.T) {
	t.Parallel()
	if !sparetime.Allowed() {
		t.Skip("this process may not give a thread its priority back (CAP_SYS_NICE or RLIMIT_NICE 20)")
	}
	h := newHarness(t, 50, false)
	mux := http.NewServeMux()
	mux.HandleFunc("/spin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>spin</title><p>spinning</p><script>setTimeout(() => { for (;;) {} }, 300)</script>`)
	})
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>work</title><p>working</p>`)
	})
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	for s, page := range map[string]string{"worker": "/work", "spinner": "/spin"} {
		if r := h.call(t, s, "navigate", map[string]any{"url": site + page}); r.IsError {
			t.Fatalf("%s: %s", s, r.Text)
		}
	}
	// The watch looks once a second, wants two busy seconds and three
	// since the session's last call.
	var lowered []int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if lowered = renderers(t, h.ex, sparetime.Idle); len(lowered) > 0 {
			break
		}
	}
	if len(lowered) != 1 {
		t.Fatalf("renderers on spare time: %v, want the spinning page's alone", lowered)
	}
	spinner := lowered[0]
	top, _ := proctree.ReadStat(spinner)
	for _, pid := range renderers(t, h.ex, func(int) bool { return true }) {
		if st, _ := proctree.ReadStat(pid); pid != spinner && st.CPU >= top.CPU {
			t.Errorf("renderer %d used %d ticks, the lowered one %d: the lowered one is not the spinning page's", pid, st.CPU, top.CPU)
		}
	}
	if r := h.call(t, "worker", "snapshot", nil); r.IsError || !strings.Contains(r.Text, "working") {
		t.Errorf("the other session's snapshot: %+v", r)
	}
	// Its session's next call (list_tabs: it reads the browser, and waits
	// for the page that does not answer a few seconds).
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r := h.call(t, "spinner", "list_tabs", nil); r.IsError {
			t.Errorf("the spinning page's session's call: %s", r.Text)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	for polls := 0; ; polls++ {
		if sparetime.Idle(spinner) {
			t.Errorf("the spinning page's renderer is on spare time %d ms into its session's call", 200+100*polls)
		}
		select {
		case <-done:
			if sparetime.Idle(spinner) {
				t.Error("the spinning page's renderer is on spare time right after its session's call")
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// renderers are the renderers of ex's browsers for which keep is true.
func renderers(t *testing.T, ex *executor.Executor, keep func(pid int) bool) []int {
	t.Helper()
	var out []int
	stats := proctree.Stats()
	for _, b := range ex.BrowserPIDs() {
		for _, pid := range proctree.DescendantsIn(stats, b) {
			if proctree.ChromiumType(pid) == "renderer" && keep(pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}
