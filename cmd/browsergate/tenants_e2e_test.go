package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/examples/testkit"
)

// TestOneBackendCannotReachAnother: with two manifests in one daemon each
// launches its own browser behind its own proxies. A page or an agent of
// one must not reach the other's DevTools endpoint (/json/list hands out
// its session URLs, /json/close closes its tabs) or its egress proxy.
func TestOneBackendCannotReachAnother(t *testing.T) {
	t.Parallel()
	body := fmt.Sprintf(egressManifest, "launch", "")
	other := testkit.WriteFile(t, t.TempDir(), "other.toml", strings.Replace(body, `name = "egress"`, `name = "other"`, 1))
	f := &egressFixture{startWith(t, body, "--manifest", other)}
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
	for _, child := range descendants(t, pid) {
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
