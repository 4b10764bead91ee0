package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestPerformanceTraceKeepsNoSecretInTheEvidence: a page on the secret's
// own site that puts the typed value in the URL of a request of its own
// and in a user timing mark has it in the trace twice over, spelled as
// the URL's percent-encoding and the trace's JSON spell it. The reply's
// list of the slowest requests shows the request with the value masked,
// and the evidence file (the trace is a recording blob in it) holds the
// value in none of its spellings (docs/secrets.md).
func TestPerformanceTraceKeepsNoSecretInTheEvidence(t *testing.T) {
	const value = `Tr4ce S3cr"t<Val77>`
	t.Setenv("BROWSERGATE_TEST_TRACE_PW", value)
	mux := http.NewServeMux()
	mux.HandleFunc("/f", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>f</title><input type=password id=pw oninput="window.v = this.value">
<script>setInterval(() => { if (window.v) { performance.mark('m-' + window.v); fetch('/echo?v=' + window.v).catch(() => {}) } }, 100)</script>`)
	})
	echoed := make(chan string, 1)
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		select {
		case echoed <- r.URL.Query().Get("v"):
		default:
		}
		fmt.Fprint(w, "ok")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", "")+`[browser.commands.performance_trace]
args.duration_ms = {}
[secrets.PW]
env = "BROWSERGATE_TEST_TRACE_PW"
domains = ["127.0.0.1"]
`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/f"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"})
	out := f.mustAllow(t, "e2e.performance_trace", map[string]any{"duration_ms": 1500})
	t.Logf("performance_trace:\n%s", out)
	if got := <-echoed; got != value {
		t.Fatalf("the page sent %q, want the typed value: the test proves nothing", got)
	}
	if !strings.Contains(out, "/echo?v=[secret PW]") {
		t.Errorf("the reply does not list the page's request with the value masked (/echo?v=[secret PW])")
	}
	f.cs.Close()
	db, err := os.ReadFile(f.evidence)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(value) // "…\"…\u003c…\u003e"
	spellings := []string{value, url.QueryEscape(value), url.PathEscape(value),
		strings.NewReplacer(" ", "%20", `"`, "%22", "<", "%3C", ">", "%3E").Replace(value),
		string(quoted[1 : len(quoted)-1]), strings.NewReplacer(`"`, `\"`).Replace(value), "Tr4ce", "Val77"}
	for _, s := range spellings {
		if n := bytes.Count(bytes.ToLower(db), []byte(strings.ToLower(s))); n > 0 {
			t.Errorf("the evidence file holds the secret's value spelled %q %d time(s)", s, n)
		}
	}
}
