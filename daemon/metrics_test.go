package daemon

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/toolclad"
)

// metricsFront serves agent a (token "a-token") and operator olga, with a
// broker.
func metricsFront(t *testing.T) (*Front, *approval.Broker, *atomic.Pointer[toolclad.Operators]) {
	t.Helper()
	as, err := toolclad.ParseAgents("agents.toml", []byte("[agents.a]\ntoken_sha256 = \""+toolclad.TokenHash("a-token")+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := toolclad.ParseOperators("ops", []byte("olga:"+olgaToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[toolclad.Operators]
	cur.Store(ops)
	broker := approval.NewBroker(nil)
	f := serve(t, Config{Agents: func() *toolclad.Agents { return as }, Operators: cur.Load,
		Events: events.NewHub(0), Broker: broker})
	return f, broker, &cur
}

// scrape gets /metrics with the token ("" for none).
func scrape(t *testing.T, f *Front, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.URL()+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(body)
}

// gaugeValue reads one gauge of a /metrics answer; ok is false when it is
// missing or more than once there, or its line is not `name value`.
func gaugeValue(text, name string) (v float64, ok bool) {
	found := 0
	for line := range strings.Lines(text) {
		fields := strings.Fields(line)
		if len(fields) == 2 && fields[0] == name {
			found++
			var err error
			if v, err = strconv.ParseFloat(fields[1], 64); err != nil {
				return 0, false
			}
		}
	}
	return v, found == 1
}

// TestMetricsNeedAnOperatorToken: /metrics refuses a request without a
// token, with an agent's token and with a token no longer in the operator
// file (401, WWW-Authenticate), and gives the operator the gauges in
// Prometheus's text format, each with its HELP and TYPE.
func TestMetricsNeedAnOperatorToken(t *testing.T) {
	f, _, cur := metricsFront(t)
	for _, token := range []string{"", "a-token", "not-anyones-token"} {
		code, h, body := scrape(t, f, token)
		if code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") ||
			strings.Contains(body, "go_goroutines") {
			t.Errorf("/metrics with token %q: %d %q\n%s, want 401 and no gauges", token, code, h.Get("WWW-Authenticate"), body)
		}
	}
	code, h, body := scrape(t, f, olgaToken)
	if code != http.StatusOK || h.Get("Content-Type") != metricsContentType || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("/metrics for the operator: %d %q %q\n%s", code, h.Get("Content-Type"), h.Get("Cache-Control"), body)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_memstats_heap_inuse_bytes",
		"go_memstats_heap_sys_bytes", "go_memstats_heap_released_bytes", "go_memstats_heap_objects", "go_memstats_sys_bytes", "process_open_fds",
		"browsergate_mcp_sessions_open", "browsergate_held_calls", "browsergate_questions_waiting"} {
		if _, ok := gaugeValue(body, name); !ok {
			t.Errorf("gauge %s: missing or unreadable", name)
		}
		if !strings.Contains(body, "# HELP "+name+" ") || !strings.Contains(body, "# TYPE "+name+" gauge\n") {
			t.Errorf("gauge %s: no HELP or TYPE line", name)
		}
	}
	if v, _ := gaugeValue(body, "go_goroutines"); v < 1 {
		t.Errorf("go_goroutines %v, want at least 1", v)
	}
	if v, _ := gaugeValue(body, "process_open_fds"); v < 3 {
		t.Errorf("process_open_fds %v, want at least the listener and stdio", v)
	}

	// The operator's token taken out of the file (a reload): refused.
	none, err := toolclad.ParseOperators("ops", []byte("ivan:8d0f4c3b7e2a91d65f0b3c7a9e41d2f8\n"))
	if err != nil {
		t.Fatal(err)
	}
	cur.Store(none)
	if code, _, _ := scrape(t, f, olgaToken); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a token taken out of the operator file: %d, want 401", code)
	}
}

// TestMetricsCountSessionsAndHeldCalls: the sessions gauge follows MCP
// sessions opened and ended, and the held-call gauges follow the
// broker's calls and questions until they are answered.
func TestMetricsCountSessionsAndHeldCalls(t *testing.T) {
	f, broker, _ := metricsFront(t)
	read := func(name string) float64 {
		t.Helper()
		_, _, body := scrape(t, f, olgaToken)
		v, ok := gaugeValue(body, name)
		if !ok {
			t.Fatalf("gauge %s missing:\n%s", name, body)
		}
		return v
	}
	if v := read("browsergate_mcp_sessions_open"); v != 0 {
		t.Errorf("sessions before any: %v", v)
	}
	s1, err := open(f, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := open(f, "a-token")
	if err != nil {
		t.Fatal(err)
	}
	// The server may count a session a moment longer than its client
	// waits for it (seen under -race: 3 for an instant, in about 1 of 15
	// runs), so the gauge is read until it settles.
	deadline := time.Now().Add(10 * time.Second)
	for read("browsergate_mcp_sessions_open") != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if v := read("browsergate_mcp_sessions_open"); v != 2 {
		t.Errorf("sessions with two open: %v, want 2", v)
	}
	s1.Close()
	// The client's DELETE has been answered when Close returns; the
	// server forgets the session as it answers it.
	deadline = time.Now().Add(10 * time.Second)
	for read("browsergate_mcp_sessions_open") != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if v := read("browsergate_mcp_sessions_open"); v != 1 {
		t.Errorf("sessions after one ended: %v, want 1", v)
	}
	defer s2.Close()

	call := broker.Open(approval.Request{Session: "s", Tool: "t.click", Command: "click", Why: []string{"test"}}, time.Minute)
	broker.Open(approval.Request{Session: "s", Tool: "t.await_human", Command: "await_human", Question: "which?", Why: []string{"test"}}, time.Minute)
	if held, q := read("browsergate_held_calls"), read("browsergate_questions_waiting"); held != 1 || q != 1 {
		t.Errorf("held calls %v, questions %v; want 1 and 1", held, q)
	}
	if err := broker.Decide(call.ID, approval.Outcome{Approved: true, Channel: approval.ChannelConsole}); err != nil {
		t.Fatal(err)
	}
	if held := read("browsergate_held_calls"); held != 0 {
		t.Errorf("held calls after the answer: %v, want 0", held)
	}
}
