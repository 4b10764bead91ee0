package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestPerformanceTraceKeepsOutTheUsersTab: in the user's browser (live),
// a user's tab of the session page's site may share its renderer process
// (--process-per-site here; Chrome does so too past its renderer process
// limit), and the requests of that tab's main thread and of its worker
// name no frame. Neither reaches the session's trace summary nor the
// stored trace.
func TestPerformanceTraceKeepsOutTheUsersTab(t *testing.T) {
	flag := "--process-per-site" // BROWSERGATE_TEST_TRACE_FLAG=--no-first-run: the control run
	if v := os.Getenv("BROWSERGATE_TEST_TRACE_FLAG"); v != "" {
		flag = v
	}
	port, _ := testkit.StartChromiumPreloadingOff(t, append(testkit.ChromiumFlags(), flag)...)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	mux := http.NewServeMux()
	mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>user</title><script>
new Worker('/worker.js');
setInterval(() => fetch('/users-main-thread-private?t=' + Math.random()).catch(() => {}), 100);
</script>`)
	})
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `setInterval(() => fetch('/users-worker-private?t=' + Math.random()).catch(() => {}), 100);`)
	})
	mux.HandleFunc("/session", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>session</title><p>session page</p>`)
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))+"[browser.commands.performance_trace]\nargs.duration_ms = {}\n")
	user := usersBrowser(t, endpoint)
	ctx, cancel := context.WithTimeout(user, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/user")); err != nil {
		t.Fatal(err)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/session"})
	out := f.mustAllow(t, "e2e.performance_trace", map[string]any{"duration_ms": 2000})
	t.Logf("performance_trace:\n%s", out)
	if strings.Contains(out, "users-") {
		t.Errorf("the session's trace summary shows the user's own tab's requests")
	}
	f.cs.Close()
	db, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(db), "users-worker-private") || strings.Contains(string(db), "users-main-thread-private") {
		t.Errorf("the stored trace holds the user's own tab's requests")
	}
}
