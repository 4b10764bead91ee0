package executor_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/internal/sparetime"
)

// TestPageThatSpinsRunsOnSpareTimeWhileItsSessionWaits: one session's
// page spins in for (;;) {} after it loads, another's page is idle. While
// the spinning page's session has no call, its renderer (and no other of
// the browser's) is lowered to spare processor time; the session's next
// call gives it its priority back before it runs, and the other session's
// calls run throughout.
func TestPageThatSpinsRunsOnSpareTimeWhileItsSessionWaits(t *testing.T) {
	t.Parallel()
	if !sparetime.Allowed() {
		t.Skip("this process may not give a thread its priority back (root, CAP_SYS_NICE or RLIMIT_NICE 20)")
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
		if lowered = loweredRenderers(t, h.ex); len(lowered) > 0 {
			break
		}
	}
	if len(lowered) != 1 {
		t.Fatalf("renderers on spare time: %v, want the spinning page's alone", lowered)
	}
	st0, _ := proctree.ReadStat(lowered[0])
	if r := h.call(t, "worker", "snapshot", nil); r.IsError || !strings.Contains(r.Text, "working") {
		t.Errorf("the other session's snapshot: %+v", r)
	}
	st1, _ := proctree.ReadStat(lowered[0])
	if st1.CPU <= st0.CPU {
		t.Errorf("the lowered renderer used no processor time meanwhile (%d ticks, then %d): it is not the spinning page's", st0.CPU, st1.CPU)
	}
	// Its session's next call: list_tabs reads the browser, not the page
	// that does not answer.
	if r := h.call(t, "spinner", "list_tabs", nil); r.IsError {
		t.Errorf("the spinning page's session's call: %s", r.Text)
	}
	if sparetime.Idle(lowered[0]) {
		t.Error("the spinning page's renderer is still on spare time after its session's call began")
	}
	if now := loweredRenderers(t, h.ex); len(now) != 0 {
		t.Errorf("renderers on spare time right after the call: %v, want none", now)
	}
}

// loweredRenderers are the renderers of ex's browsers whose main thread
// runs on spare time only.
func loweredRenderers(t *testing.T, ex *executor.Executor) []int {
	t.Helper()
	var out []int
	stats := proctree.Stats()
	for _, b := range ex.BrowserPIDs() {
		for _, pid := range proctree.DescendantsIn(stats, b) {
			cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if err == nil && strings.Contains(string(cmd), "--type=renderer") && sparetime.Idle(pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}
