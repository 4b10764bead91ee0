package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/proctree"
)

// BenchmarkEngines measures what an agent waits for to read a
// documentation page, both ways, on the same pages served from loopback
// in the same run, through the real binary over MCP stdio with the whole
// gate and durable evidence on:
//
//   - http: fetch_page (text, max_length 20000) on the browserless engine;
//   - browser: navigate + snapshot on a Chromium the daemon launched (warm:
//     started before the timer).
//
// MiB-pss is the memory of serve and every process it started (the
// browser's), read after the last op: the sum of their proportional set
// sizes (shared pages split between the processes that share them, so
// Chromium's processes are not counted many times over); procs is how many
// processes that is.
func BenchmarkEngines(b *testing.B) {
	site := serveWebSite(b)
	web := startWith(b, fmt.Sprintf(webManifest, 0, b.TempDir(), site.URL))
	browser := startWith(b, fmt.Sprintf(e2eManifest, "launch", ""))
	browser.mustAllow(b, "e2e.navigate", map[string]any{"url": site.URL + "/docs/go-memory-model.html"})
	for _, page := range []string{"go-memory-model.html", "wikipedia-time-loops.html"} {
		u := site.URL + "/docs/" + page
		name := strings.TrimSuffix(page, ".html")
		b.Run("http/"+name, func(b *testing.B) {
			for b.Loop() {
				if out := web.mustAllow(b, "web.fetch_page", map[string]any{"url": u, "max_length": 20000}); !strings.Contains(out, "URL: "+u) {
					b.Fatalf("fetch_page: %s", out)
				}
			}
			reportTree(b, web.pid)
		})
		b.Run("browser/"+name, func(b *testing.B) {
			for b.Loop() {
				browser.mustAllow(b, "e2e.navigate", map[string]any{"url": u})
				browser.mustAllow(b, "e2e.snapshot", nil)
			}
			reportTree(b, browser.pid)
		})
	}
}

// reportTree reports the memory of pid and its descendants.
func reportTree(b *testing.B, pid int) {
	procs := append(proctree.Descendants(pid), pid)
	var total int64
	for _, p := range procs {
		total += pss(b, p)
	}
	b.ReportMetric(float64(total)/(1<<20), "MiB-pss")
	b.ReportMetric(float64(len(procs)), "procs")
}

// pss is a process's proportional set size, in bytes (0 when it has
// ended).
func pss(b *testing.B, pid int) int64 {
	n, err := proctree.PSS(pid)
	var gone *fs.PathError // the file cannot be read: the process has ended
	if err != nil && !errors.As(err, &gone) {
		b.Fatal(err)
	}
	return n
}
