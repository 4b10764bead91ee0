package perf_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/perf"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// trace is a browser's trace of two tabs: the tab's main frame F (in
// process 10, with a child frame C in process 11) and another tab's frame
// O (process 20), each loading a page, with tasks, shifts and requests.
var trace = []string{
	`{"name":"TracingStartedInBrowser","ph":"I","pid":1,"tid":1,"ts":0,"args":{"data":{"frames":[{"frame":"F","processId":10},{"frame":"O","processId":20}]}}}`,
	`{"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":10,"args":{"data":{"frame":"C","parent":"F","processId":11}}}`,
	`{"name":"thread_name","ph":"M","pid":10,"tid":5,"args":{"name":"CrRendererMain"}}`,
	`{"name":"thread_name","ph":"M","pid":20,"tid":5,"args":{"name":"CrRendererMain"}}`,
	`{"name":"navigationStart","ph":"R","pid":10,"tid":5,"ts":1000000,"args":{"frame":"F","data":{"isLoadingMainFrame":true,"documentLoaderURL":"http://site/"}}}`,
	`{"name":"firstContentfulPaint","ph":"R","pid":10,"tid":5,"ts":1300000,"args":{"frame":"F"}}`,
	`{"name":"largestContentfulPaint::Candidate","ph":"R","pid":10,"tid":5,"ts":1400000,"args":{"frame":"F"}}`,
	`{"name":"largestContentfulPaint::Candidate","ph":"R","pid":10,"tid":5,"ts":1900000,"args":{"frame":"F"}}`,
	`{"name":"RunTask","ph":"X","pid":10,"tid":5,"ts":2000000,"dur":200000}`,
	`{"name":"ParseHTML","ph":"X","pid":10,"tid":5,"ts":2000000,"dur":180000}`,
	`{"name":"FunctionCall","ph":"X","pid":10,"tid":5,"ts":2000000,"dur":150000}`,
	`{"name":"EvaluateScript","ph":"X","pid":10,"tid":5,"ts":2010000,"dur":100000}`,
	`{"name":"Layout","ph":"X","pid":10,"tid":5,"ts":2160000,"dur":30000}`,
	`{"name":"RunTask","ph":"X","pid":10,"tid":5,"ts":2300000,"dur":40000}`,
	`{"name":"LayoutShift","ph":"I","pid":10,"tid":5,"ts":2400000,"args":{"frame":"F","data":{"weighted_score_delta":0.1}}}`,
	`{"name":"LayoutShift","ph":"I","pid":10,"tid":5,"ts":2500000,"args":{"frame":"F","data":{"weighted_score_delta":0.05}}}`,
	`{"name":"LayoutShift","ph":"I","pid":10,"tid":5,"ts":2600000,"args":{"frame":"F","data":{"weighted_score_delta":0.5,"had_recent_input":true}}}`,
	`{"name":"LayoutShift","ph":"I","pid":10,"tid":5,"ts":9000000,"args":{"frame":"F","data":{"weighted_score_delta":0.12}}}`,
	`{"name":"ResourceSendRequest","ph":"I","pid":1,"tid":3,"ts":1100000,"args":{"data":{"frame":"F","requestId":"1","url":"http://site/slow.js","requestMethod":"GET"}}}`,
	`{"name":"ResourceReceiveResponse","ph":"I","pid":1,"tid":3,"ts":1800000,"args":{"data":{"frame":"F","requestId":"1","statusCode":200}}}`,
	`{"name":"ResourceFinish","ph":"I","pid":1,"tid":3,"ts":1900000,"args":{"data":{"frame":"F","requestId":"1"}}}`,
	`{"name":"ResourceSendRequest","ph":"I","pid":1,"tid":3,"ts":1100000,"args":{"data":{"frame":"C","requestId":"2","url":"http://site/frame.css","requestMethod":"GET"}}}`,
	`{"name":"ResourceFinish","ph":"I","pid":1,"tid":3,"ts":1200000,"args":{"data":{"frame":"C","requestId":"2"}}}`,
	`{"name":"ResourceSendRequest","ph":"I","pid":1,"tid":3,"ts":1000000,"args":{"data":{"frame":"O","requestId":"3","url":"http://other/private-tab","requestMethod":"GET"}}}`,
	`{"name":"ResourceFinish","ph":"I","pid":1,"tid":3,"ts":9000000,"args":{"data":{"frame":"O","requestId":"3"}}}`,
	`{"name":"RunTask","ph":"X","pid":20,"tid":5,"ts":2000000,"dur":900000}`,
	`{"name":"BrowserWork","ph":"X","pid":1,"tid":1,"ts":2000000,"dur":900000}`,
}

func raw(t *testing.T) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, e := range trace {
		if !json.Valid([]byte(e)) {
			t.Fatalf("invalid event %s", e)
		}
		out = append(out, json.RawMessage(e))
	}
	return out
}

func TestFilterKeepsOnlyTheTabsEvents(t *testing.T) {
	tr, err := perf.Filter(raw(t), "F")
	if err != nil {
		t.Fatal(err)
	}
	js := string(tr.JSON())
	if strings.Contains(js, "private-tab") || strings.Contains(js, `"pid":20`) || strings.Contains(js, "BrowserWork") {
		t.Errorf("the filtered trace keeps another tab's or the browser's events:\n%s", js)
	}
	if !strings.Contains(js, "frame.css") || !strings.Contains(js, "slow.js") {
		t.Errorf("the filtered trace lost the tab's own requests (its main frame's and its child frame's):\n%s", js)
	}
	var file struct{ TraceEvents []json.RawMessage }
	if err := json.Unmarshal(tr.JSON(), &file); err != nil || len(file.TraceEvents) != tr.Events() {
		t.Errorf("JSON is not a trace file of the %d events kept: %v", tr.Events(), err)
	}
	if _, err := perf.Filter(raw(t)[2:], "F"); err == nil {
		t.Error("a trace that does not say where the tab runs was filtered; want an error")
	}
}

// TestFilterKeepsOutAnotherTabInTheSameProcess: another tab's frame O2
// runs in the tab's process 10 (a site's process shared). Its worker's
// request names no frame: it is dropped, and so is every other event of
// process 10 that names no frame, but the events of the tab's own worker
// (its thread tied to frame F by TracingSessionIdForWorker) are kept.
func TestFilterKeepsOutAnotherTabInTheSameProcess(t *testing.T) {
	events := append(raw(t),
		json.RawMessage(`{"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":20,"args":{"data":{"frame":"O2","processId":10}}}`),
		json.RawMessage(`{"name":"TracingSessionIdForWorker","ph":"I","pid":10,"tid":5,"ts":30,"args":{"data":{"frame":"F","workerThreadId":8}}}`),
		json.RawMessage(`{"name":"TracingSessionIdForWorker","ph":"I","pid":10,"tid":5,"ts":30,"args":{"data":{"frame":"O2","workerThreadId":7}}}`),
		json.RawMessage(`{"name":"ResourceSendRequest","ph":"I","pid":10,"tid":7,"ts":1000000,"args":{"data":{"requestId":"7","url":"http://site/users-worker-private","requestMethod":"GET"}}}`),
		json.RawMessage(`{"name":"ResourceSendRequest","ph":"I","pid":10,"tid":8,"ts":1000000,"args":{"data":{"requestId":"8","url":"http://site/tabs-worker","requestMethod":"GET"}}}`))
	tr, err := perf.Filter(events, "F")
	if err != nil {
		t.Fatal(err)
	}
	js := string(tr.JSON())
	if !tr.Shared || strings.Contains(js, "users-worker-private") || strings.Contains(js, `"RunTask"`) {
		t.Errorf("the filtered trace (shared %v) keeps another tab's events of a process the tab shares:\n%s", tr.Shared, js)
	}
	if !strings.Contains(js, "tabs-worker") || !strings.Contains(js, "slow.js") {
		t.Errorf("the filtered trace lost the tab's own worker's or frame's requests:\n%s", js)
	}
	if base, _ := perf.Filter(raw(t), "F"); base.Shared || !strings.Contains(string(base.JSON()), `"RunTask"`) {
		t.Errorf("a process the tab shares with no other tab is taken as shared (%v), or its events naming no frame dropped", base.Shared)
	}
}

func TestAnalyzeReadsTheSummary(t *testing.T) {
	tr, err := perf.Filter(raw(t), "F")
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Analyze("F")
	checks := []struct {
		name      string
		got, want any
	}{
		{"loaded", s.Loaded, true},
		{"FCP", s.FCP, 300 * time.Millisecond},
		{"LCP (the last candidate)", s.LCP, 900 * time.Millisecond},
		{"CLS (the largest window, input excluded)", s.CLS, 0.15000000000000002},
		{"long tasks", s.LongTasks, 1},
		{"TBT", s.TBT, 150 * time.Millisecond},
		{"scripting (self time)", s.Categories["scripting"], 150 * time.Millisecond},
		{"rendering", s.Categories["rendering"], 30 * time.Millisecond},
		{"loading (the parse less the script in it)", s.Categories["loading"], 30 * time.Millisecond},
		{"other", s.Categories["other"], 30 * time.Millisecond},
		{"slowest", len(s.Slowest), 2},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Slowest[0].URL != "http://site/slow.js" || s.Slowest[0].Status != 200 || s.Slowest[0].Duration != 800*time.Millisecond {
		t.Errorf("slowest = %+v, want slow.js 200 in 800 ms", s.Slowest[0])
	}
	text := s.Text()
	if want := "- 800 ms " + pagetext.Value("GET") + " 200 " + pagetext.Value("http://site/slow.js"); !strings.Contains(text, want) {
		t.Errorf("Text does not mark the request's method and URL as the page's (%q):\n%q", want, text)
	}
	text = pagetext.Unmarked(text)
	for _, w := range []string{"LCP 900 ms, FCP 300 ms", "CLS 0.150", "long tasks 1, total blocking time 150 ms", "scripting 150 ms", "- 800 ms GET 200 http://site/slow.js"} {
		if !strings.Contains(text, w) {
			t.Errorf("Text lacks %q:\n%s", w, text)
		}
	}
}
