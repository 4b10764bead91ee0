package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/internal/proctree"
)

// stuckSessions is how many sessions work while one more sits on a page
// that blocks its renderer.
const stuckSessions = 4

// stuckPages are the pages of BenchmarkStuckNeighbour: /work, a small
// page with a button that answers a click, and /stuck, a page that blocks
// its renderer's main thread for good a little after it has loaded (late
// enough that the navigate to it has returned).
func stuckPages(b *testing.B) string {
	b.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/stuck":
			fmt.Fprint(w, `<title>stuck</title><p>this page blocks its renderer</p>
<script>setTimeout(() => { for (;;) {} }, 1500);</script>`)
		default:
			fmt.Fprintf(w, `<title>work %s</title><h1>Work</h1><ul><li>one</li><li>two</li><li>three</li></ul>
<button id=go onclick="document.getElementById('out').textContent = 'clicked ' + Date.now()">Go</button><p id=out></p>`, r.URL.Query().Get("s"))
		}
	}))
	b.Cleanup(site.Close)
	return site.URL
}

// BenchmarkStuckNeighbour measures what a page that blocks its renderer
// in one session costs the others: 4 sessions over HTTP (the real binary,
// the official MCP client) each make b.N rounds of navigate, snapshot and
// click on a small loopback page, all at once, and the latency of every
// call is kept. "alone" is those 4; "beside-stuck" has a fifth session sit,
// through the whole run, on a page whose script runs for (;;) {} (it takes
// one of the machine's cores if nothing holds it). Reported: p50 and p95
// per call (ms), calls per second, and the processor time of the daemon
// and its browser per call (cpu-ms/call: what the spinning page takes
// shows there, less noisy than latency on a shared machine), and the cores
// they kept busy in the 2 seconds before the first call (idle-cores: about
// one beside a page that spins on a quiet machine, next to none alone; a
// process that ends in the window takes its time with it, so "none" reads
// a few hundredths either side of zero).
// The goal (issue #34) is beside-stuck's p95 within 1.2× alone's. Run with
// a fixed count, so that both do the same work:
//
//	go test ./cmd/browsergate -run '^$' -bench BenchmarkStuckNeighbour -benchtime 20x -count 3
func BenchmarkStuckNeighbour(b *testing.B) {
	for _, stuck := range []bool{false, true} {
		name := "alone"
		if stuck {
			name = "beside-stuck"
		}
		b.Run(name, func(b *testing.B) {
			d := startHTTP(b, inputManifest(), "", "--log-level", "error")
			site := stuckPages(b)
			css := make([]*mcp.ClientSession, stuckSessions)
			for i := range css {
				css[i] = d.connect(b, []string{"alice-token", "bob-token"}[i%2])
				// A first round outside the timer: the context and its
				// renderer are up.
				stuckRound(b, css[i], site, i)
			}
			if stuck {
				cs := d.connect(b, "bob-token")
				if out, refused := callText(b, cs, "e2e.navigate", map[string]any{"url": site + "/stuck"}); refused {
					b.Fatalf("navigate to the stuck page: %s", out)
				}
				time.Sleep(3 * time.Second) // its loop has begun
			}
			// What the browser and the daemon spend with no call under
			// way: next to nothing alone, about a core beside a page that
			// spins (the proof that it does).
			idle0 := treeCPU(d.cmd.Process.Pid)
			time.Sleep(idleWindow)
			idleCores := float64(treeCPU(d.cmd.Process.Pid)-idle0) / float64(idleWindow)
			var mu sync.Mutex
			var took []time.Duration
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0 := treeCPU(d.cmd.Process.Pid)
			start := time.Now()
			for i, cs := range css {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					for range b.N {
						mine = append(mine, stuckRound(b, cs, site, i)...)
					}
					mu.Lock()
					took = append(took, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			cpu := treeCPU(d.cmd.Process.Pid) - cpu0
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(ms(took[len(took)*50/100]), "p50-ms/call")
			b.ReportMetric(ms(took[len(took)*95/100]), "p95-ms/call")
			b.ReportMetric(float64(len(took))/elapsed.Seconds(), "calls/s")
			b.ReportMetric(ms(cpu)/float64(len(took)), "cpu-ms/call")
			b.ReportMetric(idleCores, "idle-cores")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// idleWindow is how long BenchmarkStuckNeighbour measures the processor
// time spent before any call (idle-cores).
const idleWindow = 2 * time.Second

// stuckRound is one round of a working session: navigate, snapshot and
// click, each checked, and how long each took.
func stuckRound(b *testing.B, cs *mcp.ClientSession, site string, i int) []time.Duration {
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"e2e.navigate", map[string]any{"url": fmt.Sprintf("%s/work?s=%d", site, i)}, ""},
		{"e2e.snapshot", nil, fmt.Sprintf("work %d", i)},
		{"e2e.click", map[string]any{"selector": "#go"}, ""},
	}
	out := make([]time.Duration, 0, len(calls))
	for _, c := range calls {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		out = append(out, time.Since(t0))
		if err != nil {
			b.Errorf("session %d: %s: %v", i, c.tool, err)
			continue
		}
		if text := resultText(res); res.IsError || !strings.Contains(text, c.want) {
			b.Errorf("session %d: %s: %s", i, c.tool, firstLine(text))
		}
	}
	return out
}

// treeCPU is the processor time pid and the processes that descend from
// it have used (user and system), as /proc counts it in ticks of 10 ms
// (USER_HZ is 100 on Linux): the browser's processes with the daemon, so a
// renderer that spins shows here whatever it does to the calls.
func treeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range append(proctree.Descendants(pid), pid) {
		if st, ok := proctree.ReadStat(p); ok { // else ended meanwhile
			ticks += st.CPU
		}
	}
	return time.Duration(ticks) * time.Second / proctree.ClockTicks
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
