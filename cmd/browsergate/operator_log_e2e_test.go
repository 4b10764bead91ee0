package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// logRecords are serve's JSON log lines, decoded.
func logRecords(stderr string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// quietManifest is a headless launched browser on 127.0.0.1.
const quietManifest = `
[tool]
name = "%s"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`

// TestOperatorLogBrowsersOwnRefusalsAreDebug: a request that reaches the
// launched browser's own proxy (where Chromium's update checks and
// sign-in probes go, which no page asked for) is refused and logged at
// debug, marked as the browser's; the requests a page makes to the same
// kind of host stay warnings of its session, and are in the evidence, so
// a page cannot pass its requests off as the browser's by the hosts it
// names.
func TestOperatorLogBrowsersOwnRefusalsAreDebug(t *testing.T) {
	t.Parallel()
	const fetched, pictured = "http://update.googleapis.com/service/update2?from=page", "http://clients2.google.com/generate_204?from=page"
	page, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>background-looking</title><p>a page</p><img src=%q><script>fetch(%q).catch(() => {})</script>`, pictured, fetched)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(quietManifest, "e2e"), "--log-level", "debug")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": page + "/"})

	// The browser's own kind of request, to its proxy: refused, at debug.
	port := proxyPort(launchedBrowserFlags(t, f.pid))
	if port == 0 {
		t.Fatal("found no --proxy-server on the launched browser")
	}
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT update.googleapis.com:443 HTTP/1.1\r\nHost: update.googleapis.com:443\r\n\r\n")
	status, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || !strings.Contains(status, " 403 ") {
		t.Fatalf("the browser's proxy answered %q, %v; want a refusal (403)", status, err)
	}

	var browserLine map[string]any
	pageLines := map[string]map[string]any{}
	testkit.Eventually(t, func() string {
		browserLine = nil
		for _, rec := range logRecords(f.stderr.String()) {
			switch {
			case rec["msg"] == "egress decision" && rec["source"] == "browser" && rec["target"] == "update.googleapis.com:443":
				browserLine = rec
			case rec["msg"] == "request refused" && (rec["url"] == fetched || rec["url"] == pictured):
				pageLines[rec["url"].(string)] = rec
			}
		}
		if browserLine == nil || len(pageLines) < 2 {
			return fmt.Sprintf("the log has not yet the browser's refusal (%v) and the page's two (%d)", browserLine != nil, len(pageLines))
		}
		return ""
	})
	if browserLine["level"] != "DEBUG" || browserLine["allowed"] != false {
		t.Errorf("the browser's own refused request is logged %v, want a refusal at DEBUG", browserLine)
	}
	for u, rec := range pageLines {
		if rec["level"] != "WARN" || rec["session"] == nil || rec["session"] == "" {
			t.Errorf("the page's refused request to %s is logged %v, want a warning naming its session", u, rec)
		}
	}
	// No refusal of the browser's own, whatever Chromium asked for in this
	// run by itself, reaches the operator above debug.
	for _, rec := range logRecords(f.stderr.String()) {
		if rec["source"] == "browser" && rec["allowed"] == false && rec["level"] != "DEBUG" {
			t.Errorf("a refusal of the browser's own above debug: %v", rec)
		}
	}
	// The page's refusals are in the evidence as before: with the next call.
	f.mustAllow(t, "e2e.snapshot", nil)
	out, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	for _, u := range []string{fetched, pictured} {
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%q", u)) {
			t.Errorf("the page's refused request to %s is not in the evidence (exit %d)", u, code)
		}
	}
}

// TestOperatorLogSandboxWarningOnce: serve running as root launches
// Chromium without its sandbox and says so once, however many browsers it
// launches (here one per manifest).
func TestOperatorLogSandboxWarningOnce(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: Chromium keeps its sandbox, and nothing is warned")
	}
	second := filepath.Join(t.TempDir(), "second.toml")
	if err := os.WriteFile(second, []byte(fmt.Sprintf(quietManifest, "second")), 0o644); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, fmt.Sprintf(quietManifest, "e2e"), "--manifest", second)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/"})
	f.mustAllow(t, "second.navigate", map[string]any{"url": f.siteURL + "/"})
	if n := len(launchedBrowsers(t, f.pid)); n < 2 {
		t.Fatalf("%d browser(s) launched, want one per manifest (2)", n)
	}
	if n := strings.Count(f.stderr.String(), "launched without its sandbox"); n != 1 {
		t.Errorf("the sandbox warning appears %d time(s) for two browsers, want once:\n%s", n, f.stderr.String())
	}
}
