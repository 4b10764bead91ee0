package daemon

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The operators' metrics: GET /metrics answers, for an operator's bearer
// token, a few gauges of the daemon's own process in Prometheus's text
// format (version 0.0.4), so that a soak run or a monitoring system can see
// a leak as a slope. They say nothing of any session's content, but how
// many sessions and held calls there are is the operators' business, not
// an agent's or the web's: the token is the same as /events asks for.

// metricsContentType is Prometheus's text exposition format.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// serveMetrics is /metrics, for an operator's bearer token.
func (f *Front) serveMetrics(w http.ResponseWriter, r *http.Request) {
	token, _ := bearer(r.Header.Get("Authorization"))
	if f.operators().Lookup(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="browsergate operators"`)
		http.Error(w, "an operator's token is required (Authorization: Bearer <token>)", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", metricsContentType)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(f.metricsText()))
}

// gauge is one metric of /metrics.
type gauge struct {
	name, help string
	value      float64
}

// Gauge is a gauge of /metrics the daemon's other parts add
// (Config.Gauges): a name in Prometheus's form, one line of help, a value.
type Gauge struct {
	Name, Help string
	Value      float64
}

// metricsText is the gauges as Prometheus's text format reads them.
func (f *Front) metricsText() string {
	var ms runtime.MemStats
	// ReadMemStats stops the world for a moment; a scrape a minute costs
	// nothing a call would notice.
	runtime.ReadMemStats(&ms)
	gauges := []gauge{
		{"go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())},
		{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.", float64(ms.HeapAlloc)},
		{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse)},
		{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from the system.", float64(ms.HeapSys)},
		{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", float64(ms.HeapReleased)},
		{"go_memstats_heap_objects", "Number of allocated objects.", float64(ms.HeapObjects)},
		{"go_memstats_sys_bytes", "Number of bytes obtained from the system.", float64(ms.Sys)},
		{"browsergate_mcp_sessions_open", "MCP sessions open over HTTP.", float64(f.openSessions())},
	}
	if f.cfg.Handles != nil {
		gauges = append(gauges, gauge{"browsergate_browser_sessions_open", "Browser sessions of stateless clients (handles) open.", float64(f.cfg.Handles.count())})
	}
	held, questions := f.heldCalls()
	gauges = append(gauges,
		gauge{"browsergate_held_calls", "Calls held for a human's approval, not yet answered.", float64(held)},
		gauge{"browsergate_questions_waiting", "Agents' questions to the operator (await_human), not yet answered.", float64(questions)})
	if f.cfg.Gauges != nil {
		for _, g := range f.cfg.Gauges() {
			gauges = append(gauges, gauge{g.Name, g.Help, g.Value})
		}
	}
	// Where /proc cannot be read (not Linux), the gauge is left out rather
	// than given as 0, which would read as a value.
	if n, err := openFiles(); err == nil {
		gauges = append(gauges, gauge{"process_open_fds", "Number of open file descriptors.", float64(n)})
	}
	var b strings.Builder
	for _, g := range gauges {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %s\n", g.name, g.help, g.name, g.name, strconv.FormatFloat(g.value, 'f', -1, 64))
	}
	if f.cfg.Replica != "" {
		// An info metric, as Prometheus names them: the replica is a label
		// of a constant 1, joined to the other series by the scrape's
		// target (CheckReplica keeps the value to [a-z0-9]: no escaping).
		fmt.Fprintf(&b, "# HELP browsergate_replica_info The replica this daemon is behind its load balancer (serve --replica).\n"+
			"# TYPE browsergate_replica_info gauge\nbrowsergate_replica_info{replica=%q} 1\n", f.cfg.Replica)
	}
	return b.String()
}

// openSessions counts the MCP server's live sessions.
func (f *Front) openSessions() int {
	n := 0
	for range f.cfg.Server.Sessions() {
		n++
	}
	return n
}

// heldCalls counts the broker's requests still waiting for an answer:
// calls held for approval and agents' questions apart.
func (f *Front) heldCalls() (held, questions int) {
	if f.cfg.Broker == nil {
		return 0, 0
	}
	for _, r := range f.cfg.Broker.List() {
		if r.Replica != "" {
			continue // another replica's: its own /metrics counts it
		}
		if r.Question != "" {
			questions++
		} else {
			held++
		}
	}
	return held, questions
}

// openFiles counts the process's open file descriptors (the one reading
// the directory included, as Prometheus's own collector counts them).
func openFiles() (int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	return len(entries), nil
}
