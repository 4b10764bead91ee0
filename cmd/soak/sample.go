package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browsergate/browsergate/internal/proctree"
)

// sample is one minute's reading of the daemon and what it made.
type sample struct {
	At    time.Duration // since the agents started (negative: before)
	Phase string        // idle (before the agents), run, after (agents gone)

	Calls, Errors int64
	Downloads     int64 // downloads asked for: by the agents' calls and by pages

	DaemonPSS, TreePSS int64 // bytes
	// EvidenceMapPSS is the part of DaemonPSS that is the daemon's mapping
	// of the evidence file: bbolt maps the whole file, so it grows with
	// the evidence by design.
	EvidenceMapPSS int64
	ChromiumProcs  int
	Goroutines     float64
	HeapInuse      float64 // bytes
	HeapAlloc      float64 // bytes
	// HeapHeld is the Go heap the daemon holds from the system (obtained
	// less released): what of its heap counts in its PSS, in use or not.
	HeapHeld      float64 // bytes
	FDs           int     // the daemon's, from /proc/PID/fd
	Sessions      float64 // MCP sessions open, as the daemon says
	ProfileDirs   int     // browsergate-chromium-* in the daemon's TMPDIR
	FilesDirs     int     // browsergate-files-* (a session's files, its download staging)
	StagingDirs   int     // downloads-* inside those
	OtherTemp     int     // anything else in the daemon's TMPDIR
	EvidenceBytes int64
	Downloaded    int // files in the download directory
}

// columns are the CSV's header, in the order of row.
var columns = []string{"seconds", "phase", "calls", "errors", "downloads", "daemon_pss_bytes", "evidence_map_pss_bytes", "tree_pss_bytes", "chromium_processes",
	"goroutines", "heap_inuse_bytes", "heap_alloc_bytes", "heap_held_bytes", "daemon_fds", "mcp_sessions", "profile_dirs", "files_dirs",
	"staging_dirs", "other_temp_entries", "evidence_bytes", "downloaded_files"}

func (s sample) row() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	d := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{f(s.At.Seconds()), s.Phase, d(s.Calls), d(s.Errors), d(s.Downloads), d(s.DaemonPSS), d(s.EvidenceMapPSS), d(s.TreePSS), strconv.Itoa(s.ChromiumProcs),
		f(s.Goroutines), f(s.HeapInuse), f(s.HeapAlloc), f(s.HeapHeld), strconv.Itoa(s.FDs), f(s.Sessions), strconv.Itoa(s.ProfileDirs),
		strconv.Itoa(s.FilesDirs), strconv.Itoa(s.StagingDirs), strconv.Itoa(s.OtherTemp), d(s.EvidenceBytes), strconv.Itoa(s.Downloaded)}
}

// sampler reads the daemon from outside (/proc, its temporary directory,
// its files) and from inside (/metrics, with an operator's token).
type sampler struct {
	pid                   int
	metricsURL, operator  string
	tmp, evidence, downld string
}

// read takes one sample; a reading that fails is an error, not a zero
// that would read as a value in the slopes.
func (sm *sampler) read(ctx context.Context) (sample, error) {
	var s sample
	tree := proctree.Descendants(sm.pid)
	var err error
	if s.DaemonPSS, err = proctree.PSS(sm.pid); err != nil {
		return s, fmt.Errorf("the daemon's PSS: %w", err)
	}
	evidence := sm.evidence
	if real, err := filepath.EvalSymlinks(evidence); err == nil {
		evidence = real // as the kernel names the mapping
	}
	if s.EvidenceMapPSS, err = proctree.MappingPSS(sm.pid, evidence); err != nil {
		return s, fmt.Errorf("the daemon's mapping of the evidence file: %w", err)
	}
	s.TreePSS = s.DaemonPSS
	for _, p := range tree {
		v, err := proctree.PSS(p)
		if err != nil {
			continue // ended between the listing and the reading
		}
		s.TreePSS += v
		if isChromium(p) {
			s.ChromiumProcs++
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", sm.pid))
	if err != nil {
		return s, fmt.Errorf("the daemon's open files: %w", err)
	}
	s.FDs = len(fds)
	m, err := sm.metrics(ctx)
	if err != nil {
		return s, err
	}
	var heapSys, heapReleased float64
	for name, dst := range map[string]*float64{"go_goroutines": &s.Goroutines, "go_memstats_heap_inuse_bytes": &s.HeapInuse,
		"go_memstats_heap_alloc_bytes": &s.HeapAlloc, "go_memstats_heap_sys_bytes": &heapSys, "go_memstats_heap_released_bytes": &heapReleased,
		"browsergate_mcp_sessions_open": &s.Sessions} {
		v, ok := m[name]
		if !ok {
			return s, fmt.Errorf("%s: no gauge %s", sm.metricsURL, name)
		}
		*dst = v
	}
	s.HeapHeld = heapSys - heapReleased
	if err := sm.temp(&s); err != nil {
		return s, err
	}
	st, err := os.Stat(sm.evidence)
	if err != nil {
		return s, err
	}
	s.EvidenceBytes = st.Size()
	files, err := os.ReadDir(sm.downld)
	if err != nil {
		return s, err
	}
	s.Downloaded = len(files)
	return s, nil
}

// metrics scrapes the daemon's /metrics.
func (sm *sampler) metrics(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", sm.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+sm.operator)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", sm.metricsURL, res.Status, strings.TrimSpace(string(body)))
	}
	return parseMetrics(string(body))
}

// parseMetrics reads Prometheus's text format as /metrics writes it:
// `name value` lines (no labels), comments skipped.
func parseMetrics(text string) (map[string]float64, error) {
	out := map[string]float64{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("/metrics line %d: %q: want `name value`", i+1, line)
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics line %d: %q: %v", i+1, line, err)
		}
		out[fields[0]] = v
	}
	return out, nil
}

// temp counts what the daemon made in its temporary directory: the
// browser's profile directories, the sessions' file directories (and
// their download staging directories), and anything else.
func (sm *sampler) temp(s *sample) error {
	entries, err := os.ReadDir(sm.tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, "browsergate-chromium-"):
			s.ProfileDirs++
		case strings.HasPrefix(name, "browsergate-files-"):
			s.FilesDirs++
			staging, _ := filepath.Glob(filepath.Join(sm.tmp, name, "downloads-*"))
			s.StagingDirs += len(staging)
		default:
			s.OtherTemp++
		}
	}
	return nil
}

// isChromium reports whether the process runs a Chromium executable (its
// browser, renderers, GPU and utility processes, zygotes).
func isChromium(pid int) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		exe, _, _ = strings.Cut(string(cmd), "\x00")
	}
	return strings.Contains(filepath.Base(exe), "chrom")
}
