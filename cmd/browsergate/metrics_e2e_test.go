package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// metricGauge reads one gauge of a /metrics answer ("name value" on a line
// of its own); ok is false when it is not there.
func metricGauge(text, name string) (float64, bool) {
	for line := range strings.Lines(text) {
		if v, found := strings.CutPrefix(strings.TrimSpace(line), name+" "); found {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestHTTPMetrics: the real serve --http answers /metrics only for an
// operator's token: without a token, with an agent's and with a wrong one
// it is refused (401) and says no gauge; for the operator it gives the
// daemon's gauges in Prometheus's text format, and its sessions gauge
// counts the agent's session that is browsing.
func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "", "--operator-token-file", operatorFile(t))
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer alice-token"}, {"Authorization": "Bearer " + strings.Repeat("0", 32)}} {
		code, hdr, body := d.raw(t, "GET", "/metrics", h, "")
		if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || strings.Contains(body, "go_goroutines") {
			t.Errorf("/metrics with %v: %d %q\n%s, want 401 and no gauges", h, code, hdr.Get("WWW-Authenticate"), body)
		}
	}
	site, _ := serveLogged(t, map[string]string{"/p": `<title>p</title><p>hello</p>`})
	cs := d.connect(t, "alice-token")
	if text, isErr := callText(t, cs, "e2e.navigate", map[string]any{"url": site + "/p"}); isErr {
		t.Fatalf("navigate: %s", text)
	}
	code, hdr, body := d.raw(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + olga}, "")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics for the operator: %d %q\n%s", code, hdr.Get("Content-Type"), body)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_open_fds", "browsergate_held_calls"} {
		if v, ok := metricGauge(body, name); !ok || v < 0 {
			t.Errorf("gauge %s: %v %v\n%s", name, v, ok, body)
		}
	}
	if v, ok := metricGauge(body, "browsergate_mcp_sessions_open"); !ok || v != 1 {
		t.Errorf("browsergate_mcp_sessions_open = %v (%v), want 1 (alice's)\n%s", v, ok, body)
	}
}
