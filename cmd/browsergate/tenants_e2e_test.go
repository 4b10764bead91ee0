package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/internal/testkit"
)

// TestOneBackendCannotReachAnother: with two manifests in one daemon each
// launches its own browser behind its own proxies. A page or an agent of
// one must not reach the other's DevTools endpoint (/json/list hands out
// its session URLs, /json/close closes its tabs) or its egress proxy.
func TestOneBackendCannotReachAnother(t *testing.T) {
	t.Parallel()
	body := fmt.Sprintf(egressManifest, "launch", "")
	other := testkit.WriteFile(t, t.TempDir(), "other.toml", strings.Replace(body, `name = "egress"`, `name = "other"`, 1))
	f := &egressFixture{fixture: startWith(t, body, "--manifest", other)}
	f.stillWorks(t)                                                              // egress's browser
	f.mustAllow(t, "other.navigate", map[string]any{"url": f.siteURL + "/docs"}) // other's browser

	browsers := launchedBrowsers(t, f.pid)
	if len(browsers) != 2 {
		t.Fatalf("found %d launched browsers under serve, want 2", len(browsers))
	}
	for i, flags := range browsers {
		devtools, proxy := devToolsPort(flags), proxyPort(flags)
		if devtools == 0 || proxy == 0 {
			t.Fatalf("browser %d: no DevTools or proxy port in %v", i, flags)
		}
		for _, port := range []int{devtools, proxy} {
			// The agent asks for it.
			f.mustRefuse(t, "egress.navigate", map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/json/list", port)}, "DENIED at scope")
			// A page asks for it from script.
			f.probePort(t, "devtools-port", port)
		}
	}
	// The other backend still works: its tab was not closed or read.
	f.mustAllow(t, "other.snapshot", nil)
}

// launchedBrowsers finds every Chromium browser process among the children
// of pid and returns each one's --name=value switches.
func launchedBrowsers(t *testing.T, pid int) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, child := range proctree.Descendants(pid) {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(child), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(args) == 1 {
			args = strings.Fields(args[0])
		}
		if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "chrom") {
			continue
		}
		flags := map[string]string{}
		for _, a := range args[1:] {
			if name, ok := strings.CutPrefix(a, "--"); ok {
				k, v, _ := strings.Cut(name, "=")
				flags[k] = v
			}
		}
		if _, helper := flags["type"]; !helper && flags["user-data-dir"] != "" {
			out = append(out, flags)
		}
	}
	return out
}

// TestRefusalsBetweenCallsAreRecorded: a page that reaches for a
// forbidden host after the call that loaded it has returned is refused,
// logged as it happens, and recorded with the next call (marked as the
// page's own, between calls), where an export shows it.
func TestRefusalsBetweenCallsAreRecorded(t *testing.T) {
	t.Parallel()
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", ""), "--log-level", "warn")
	mux := http.NewServeMux()
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>late</title><p id=s>waiting</p><script>
setTimeout(() => fetch(%q).catch(() => {}).finally(() => { document.getElementById('s').textContent = 'tried'; }), 4000);
</script>`, f.canaryTo+"/late-beacon")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/late"}); strings.Contains(out, "late-beacon") {
		t.Fatalf("the page's timer fired during the navigate call; the test needs it later:\n%s", out)
	}
	testkit.Eventually(t, func() string {
		if !strings.Contains(f.stderr.String(), "late-beacon") {
			return "the refusal between calls was not logged as it happened"
		}
		return ""
	})
	out := f.mustAllow(t, "e2e.snapshot", nil)
	if !strings.Contains(out, "late-beacon") || !strings.Contains(out, "made by the pages themselves since the previous call") {
		t.Errorf("the next call's reply does not report the refusal between calls:\n%s", out)
	}
	if n := f.canary.Hits(); n != 0 {
		t.Fatalf("the canary saw %d request(s)", n)
	}
	f.cs.Close()
	export, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, export)
	}
	found := false
	for _, line := range strings.Split(export, "\n") {
		if strings.Contains(line, `"command":"snapshot"`) && strings.Contains(line, "late-beacon") && strings.Contains(line, `"between_calls":true`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the export has no snapshot record with the refusal marked between_calls:\n%s", export)
	}
}
