package main

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShortSoakAgainstTheRealDaemon: a short soak through the real
// browsergate serve --http, Debian's Chromium and the MCP SDK's client,
// with two agents whose sessions end and start again: every kind of work
// is done without an error (navigations, rebuilt pages, tabs opened and
// closed, downloads by the agent and by a page, saved into the download
// directory), every sample reads the daemon's /metrics and /proc, the CSV
// holds them all, and once the agents have ended their sessions and the
// daemon has stopped, nothing of it is left in its TMPDIR.
func TestShortSoakAgainstTheRealDaemon(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "browsergate")
	build := exec.Command("go", "build", "-o", binary, "../browsergate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := config{binary: binary, policies: "../../policies", out: filepath.Join(dir, "soak.csv"), dir: filepath.Join(dir, "work"),
		agents: 2, duration: 80 * time.Second, every: 20 * time.Second, sessionEvery: 30 * time.Second}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := run(ctx, c, &out)
	t.Logf("the soak's output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	tl := res.tally
	if tl.errs.Load() != 0 {
		t.Errorf("%d errors: %v", tl.errs.Load(), tl.errorLines())
	}
	if tl.calls.Load() == 0 || tl.tabs.Load() == 0 || tl.downloads.Load() == 0 || tl.pageDownloads.Load() == 0 {
		t.Errorf("some work was never done: %d calls, %d tabs, %d downloads, %d pages that started one",
			tl.calls.Load(), tl.tabs.Load(), tl.downloads.Load(), tl.pageDownloads.Load())
	}
	// Each agent's first session is shorter than the next, and the next
	// ends at 30 s: more sessions than agents.
	if tl.sessions.Load() <= int64(c.agents) {
		t.Errorf("%d MCP sessions opened by %d agents: no session ended and started again", tl.sessions.Load(), c.agents)
	}
	files, err := os.ReadDir(filepath.Join(c.dir, "downloads"))
	if err != nil || len(files) == 0 {
		t.Errorf("the download directory: %d files, %v", len(files), err)
	}
	var phases []string
	for _, s := range res.samples {
		phases = append(phases, s.Phase)
		if s.Phase == "run" && (s.Goroutines == 0 || s.HeapInuse == 0 || s.HeapHeld < s.HeapInuse || s.FDs == 0 || s.TreePSS <= s.DaemonPSS || s.ChromiumProcs == 0 || s.ProfileDirs != 1 ||
			s.EvidenceMapPSS <= 0 || s.EvidenceMapPSS >= s.DaemonPSS) {
			t.Errorf("a sample missed a reading: %+v", s)
		}
	}
	if phases[0] != "idle" || phases[len(phases)-1] != "after" || slices.Index(phases, "run") != 1 || len(phases) < 5 {
		t.Errorf("the samples' phases: %v, want idle, four or so runs, after", phases)
	}
	last := res.samples[len(res.samples)-1]
	if last.Sessions != 0 || last.FilesDirs != 0 || last.StagingDirs != 0 {
		t.Errorf("after every agent ended its session: %+v", last)
	}
	if len(res.left) != 0 {
		t.Errorf("the daemon's TMPDIR after it stopped: %v", res.left)
	}

	f, err := os.Open(c.out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if len(rows) != len(res.samples)+1 || !slices.Equal(rows[0], columns) {
		t.Errorf("the CSV: %d rows, header %v; want %d and %v", len(rows), rows[0], len(res.samples)+1, columns)
	}
	if !strings.Contains(out.String(), "| resource | after warm-up | at end |") || !strings.Contains(out.String(), "| goroutines |") {
		t.Errorf("no summary table in the output")
	}
}
