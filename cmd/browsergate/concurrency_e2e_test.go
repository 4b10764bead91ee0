package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/proctree"
)

// cookieSite sets a cookie named who to the value asked (/set?v=...) and
// shows the cookie it gets (/who).
func cookieSite(t *testing.T) string {
	t.Helper()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
			fmt.Fprint(w, "<title>set</title><p>set</p>")
		default:
			v := "nobody"
			if c, err := r.Cookie("who"); err == nil {
				v = c.Value
			}
			fmt.Fprintf(w, "<title>who</title><p>cookie=%s</p>", v)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// runConcurrent opens sessions MCP sessions over HTTP (alternately alice's
// and bob's), each in its own browser context, and has each set its own
// cookie and then make calls calls, checking on every page that it sees
// its own cookie and nobody else's. It returns the errors and the time.
func runConcurrent(t *testing.T, d *httpDaemon, sessions, calls int) (errs int64, took time.Duration) {
	t.Helper()
	site := cookieSite(t)
	css := make([]*mcp.ClientSession, sessions)
	for i := range css {
		css[i] = d.connect(t, []string{"alice-token", "bob-token"}[i%2])
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := "session-" + strconv.Itoa(i)
			fail := func(format string, args ...any) {
				if failed.Add(1) <= 5 {
					t.Errorf("session %d: "+format, append([]any{i}, args...)...)
				}
			}
			if out, refused := callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/set?v=" + mine}); refused {
				fail("set the cookie: %s", out)
				return
			}
			for n := 1; n < calls; n++ {
				tool, args := "e2e.snapshot", map[string]any(nil)
				if n%2 == 1 {
					tool, args = "e2e.navigate", map[string]any{"url": site + "/who"}
				}
				out, refused := callText(t, cs, tool, args)
				switch {
				case refused:
					fail("%s: %s", tool, firstLine(out))
				case tool == "e2e.snapshot" && !strings.Contains(out, "cookie="+mine):
					fail("saw another cookie than its own:\n%s", out)
				}
			}
		}()
	}
	wg.Wait()
	took = time.Since(start)
	for _, cs := range css {
		cs.Close()
	}
	return failed.Load(), took
}

// TestConcurrentAgentsIsolated: sessions of two agents run at once, each
// in its own browser context of one shared browser: every call succeeds,
// and each session only ever sees its own cookie.
func TestConcurrentAgentsIsolated(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "")
	if errs, _ := runConcurrent(t, d, 4, 12); errs != 0 {
		t.Errorf("%d failed call(s)", errs)
	}
}

// TestConcurrencyFigures measures the daemon under 8 concurrent sessions of
// 200 calls each (BROWSERGATE_MEASURE=1; it takes minutes): errors, calls
// per second, and the daemon's memory and the browser's processes before,
// under load and after the sessions ended. It asserts correctness only;
// the figures are logged (go test -v) for the README.
func TestConcurrencyFigures(t *testing.T) {
	if os.Getenv("BROWSERGATE_MEASURE") == "" {
		t.Skip("set BROWSERGATE_MEASURE=1 to measure (minutes)")
	}
	d := startHTTP(t, inputManifest(), "", "--log-level", "error")
	sessions, calls := 8, 200
	if n, err := strconv.Atoi(os.Getenv("BROWSERGATE_MEASURE_CALLS")); err == nil && n > 0 {
		calls = n
	}
	// A first round brings the browser up and warms it.
	if errs, _ := runConcurrent(t, d, sessions, 10); errs != 0 {
		t.Fatalf("warm-up: %d failed call(s)", errs)
	}
	time.Sleep(3 * time.Second)
	rss0, procs0 := processFigures(t, d.cmd.Process.Pid)
	errs, took := runConcurrent(t, d, sessions, calls)
	time.Sleep(5 * time.Second) // the sessions' contexts close
	rss1, procs1 := processFigures(t, d.cmd.Process.Pid)
	errs2, took2 := runConcurrent(t, d, sessions, calls)
	time.Sleep(5 * time.Second)
	rss2, procs2 := processFigures(t, d.cmd.Process.Pid)
	t.Logf("%d sessions x %d calls: %d error(s), %.1f s, %.0f calls/s; again: %d error(s), %.1f s, %.0f calls/s",
		sessions, calls, errs, took.Seconds(), float64(sessions*calls)/took.Seconds(), errs2, took2.Seconds(), float64(sessions*calls)/took2.Seconds())
	t.Logf("daemon RSS after warm-up %d MiB, after the first round %d MiB, after the second %d MiB; browser processes %d, %d, %d",
		rss0>>20, rss1>>20, rss2>>20, procs0, procs1, procs2)
	if errs+errs2 != 0 {
		t.Errorf("%d failed call(s)", errs+errs2)
	}
}

// processFigures are the resident memory of pid and how many processes
// descend from it (the browser's).
func processFigures(t testing.TB, pid int) (rss int64, descendants int) {
	t.Helper()
	rss, err := vmRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return rss, len(proctree.Descendants(pid))
}

// vmRSS is the resident memory of a process, in bytes.
func vmRSS(pid int) (int64, error) { return procBytes(pid, "status", "VmRSS") }

// procBytes reads the "field:   N kB" line of /proc/<pid>/<file>, in
// bytes (0 when the file has no such line).
func procBytes(pid int, file, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/%s: %q", pid, file, line)
			}
			return kb << 10, nil
		}
	}
	return 0, nil
}

// TestHTTPSIGKILLLosesAtMostTheCallsInFlight: two agents make calls at
// once over HTTP; the daemon is killed with SIGKILL mid-burst. The
// evidence file then opens, verifies, and holds every call that got a
// reply, plus at most one call in flight per session.
func TestHTTPSIGKILLLosesAtMostTheCallsInFlight(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "")
	site := cookieSite(t)
	var replied atomic.Int64
	var wg sync.WaitGroup
	const sessions = 2
	for i := range sessions {
		cs := d.connect(t, []string{"alice-token", "bob-token"}[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				tool, args := "e2e.snapshot", map[string]any(nil)
				if n%3 == 0 {
					tool, args = "e2e.navigate", map[string]any{"url": site + "/who"}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				cancel()
				if err != nil {
					return // the daemon is gone
				}
				replied.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for replied.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	got := replied.Load()
	store, err := evidence.Open(d.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("the evidence file does not open after SIGKILL: %v", err)
	}
	defer store.Close()
	rep, err := store.Verify()
	if err != nil || !rep.OK() {
		t.Fatalf("the evidence file does not verify after SIGKILL: %v %+v", err, rep)
	}
	if n := int64(rep.Records); n < got || n > got+sessions {
		t.Fatalf("%d calls got a reply and the log holds %d records: want %d to %d", got, n, got, got+sessions)
	}
	t.Logf("killed after %d replies; %d records, verified", got, rep.Records)
}
