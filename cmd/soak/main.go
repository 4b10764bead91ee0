// Command soak runs one browsergate daemon for a long time under mixed
// work by many agents, and samples every resource it could leak: memory
// (PSS of the daemon and of its whole process tree), Chromium's
// processes, goroutines and Go heap, open files, browser profile and
// temporary directories, and the evidence file. At the end it fits a
// least-squares slope to each and says which rise beyond noise.
//
//	go build -o browsergate ./cmd/browsergate
//	go run ./cmd/soak -binary ./browsergate -duration 1h
//
// `make soak` (SOAK_DURATION=10m for a short one) does both. See
// docs/load.md.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/toolclad"
)

// config is the soak's flags.
type config struct {
	binary, policies, out, dir string
	agents                     int
	duration, every, warmup    time.Duration
	sessionEvery               time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.binary, "binary", "./browsergate", "the browsergate `FILE` to run (go build -o browsergate ./cmd/browsergate)")
	flag.StringVar(&c.policies, "policies", "policies", "the Cedar policy `DIR` the daemon runs with (the shipped ones)")
	flag.StringVar(&c.out, "csv", "", "write the samples to `FILE` (default: soak-<time>.csv in the working directory)")
	flag.StringVar(&c.dir, "dir", "", "the soak's working `DIR` (manifest, evidence, the daemon's TMPDIR, downloads); default a new temporary one, removed at the end")
	flag.IntVar(&c.agents, "agents", 16, "concurrent agents, each with its own token and MCP session")
	flag.DurationVar(&c.duration, "duration", time.Hour, "how long the agents work")
	flag.DurationVar(&c.every, "every", time.Minute, "how often the resources are sampled")
	flag.DurationVar(&c.warmup, "warmup", 10*time.Minute, "samples before this are left out of the slopes (at most a third of -duration)")
	flag.DurationVar(&c.sessionEvery, "session-every", 3*time.Minute, "each agent ends its MCP session and opens a new one this often")
	flag.Parse()
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first Ctrl-C the agents let their calls under way finish;
	// a second one ends the soak at once (and the daemon with it).
	go func() { <-ctx.Done(); stop() }()
	res, err := run(ctx, c, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if len(res.leaks) > 0 {
		fmt.Fprintf(os.Stderr, "soak: beyond noise: %s\n", strings.Join(res.leaks, ", "))
		os.Exit(3)
	}
}

// check refuses flags that cannot make a soak, saying which and why.
func (c *config) check() error {
	switch {
	case c.agents < 1:
		return fmt.Errorf("-agents %d: want at least 1", c.agents)
	case c.every <= 0:
		return fmt.Errorf("-every %s: want a positive duration", c.every)
	case c.duration < 4*c.every:
		return fmt.Errorf("-duration %s: want at least four samples (-every %s)", c.duration, c.every)
	case c.warmup < 0:
		return fmt.Errorf("-warmup %s: want zero or more", c.warmup)
	case c.sessionEvery <= 0:
		return fmt.Errorf("-session-every %s: want a positive duration", c.sessionEvery)
	}
	if c.warmup > c.duration/3 {
		c.warmup = c.duration / 3
	}
	if _, err := os.Stat(c.binary); err != nil {
		return fmt.Errorf("-binary: %w (build it: go build -o browsergate ./cmd/browsergate)", err)
	}
	if _, err := os.Stat(filepath.Join(c.policies, "browsergate.cedarschema")); err != nil {
		return fmt.Errorf("-policies %s: not a policy directory: %w", c.policies, err)
	}
	return nil
}

// result is what run found.
type result struct {
	samples []sample
	leaks   []string
	tally   *tally
	csv     string
	left    []string // entries of the daemon's TMPDIR after it stopped
}

// manifest is the soak's tool: a launched headless Chromium, the soak's
// loopback site in scope, downloads into the working directory.
const manifest = `[tool]
name = "soak"
mode = "browser"
description = "the soak's browser"
timeout_seconds = 60

[browser]
connect = "launch"
startup_timeout_seconds = 60
max_interactions = 1000000

[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]

[browser.files]
download_dir = %q

[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
[browser.commands.click]
[browser.commands.new_tab]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.close_tab]
[browser.commands.list_tabs]
[browser.commands.download]
args.url = { type = "url", schemes = ["http"], scope_check = true }
`

// daemon is the browsergate serve the soak runs.
type daemon struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

// run does the soak: sets up the working directory and the site, starts
// the daemon, samples it idle, runs the agents for the duration while
// sampling, samples again after they are gone, stops the daemon, and
// writes the CSV and the summary to out.
func run(ctx context.Context, c config, out io.Writer) (*result, error) {
	dir := c.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "browsergate-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	tmp, downloads := filepath.Join(dir, "tmp"), filepath.Join(dir, "downloads")
	for _, d := range []string{tmp, downloads} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	site, stopSite, err := serveSite()
	if err != nil {
		return nil, err
	}
	defer stopSite()

	tokens := make([]string, c.agents)
	var agentsFile strings.Builder
	for i := range tokens {
		tokens[i] = randomToken()
		fmt.Fprintf(&agentsFile, "[agents.agent-%02d]\ntoken_sha256 = %q\ngroups = [\"soak\"]\n\n", i, toolclad.TokenHash(tokens[i]))
	}
	operator := randomToken()
	files := map[string]string{
		"soak.toml":     fmt.Sprintf(manifest, downloads),
		"agents.toml":   agentsFile.String(),
		"operators.txt": "soak:" + operator + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	evidencePath := filepath.Join(dir, "evidence.db")
	args := []string{"serve", "--manifest", filepath.Join(dir, "soak.toml"), "--policies", c.policies,
		"--evidence", evidencePath, "--http", "127.0.0.1:0", "--agents", filepath.Join(dir, "agents.toml"),
		"--operator-token-file", filepath.Join(dir, "operators.txt"), "--log-level", "warn",
		"--max-sessions", fmt.Sprint(max(2*c.agents, 64))}
	fmt.Fprintf(out, "soak: %d agents for %s, a sample every %s (warm-up %s left out of the slopes), sessions of %s\n",
		c.agents, c.duration, c.every, c.warmup, c.sessionEvery)
	fmt.Fprintf(out, "soak: %s %s\n", c.binary, strings.Join(args, " "))
	d, err := startDaemon(c.binary, args, tmp, filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer d.kill()

	sm := &sampler{pid: d.cmd.Process.Pid, metricsURL: d.url + "/metrics", operator: operator,
		tmp: tmp, evidence: evidencePath, downld: downloads}
	t := &tally{}
	res := &result{tally: t}
	var mu sync.Mutex
	start := time.Now()
	take := func(phase string) error {
		s, err := sm.read(ctx)
		if err != nil {
			return fmt.Errorf("sample at %s: %w", time.Since(start).Round(time.Second), err)
		}
		s.At, s.Phase = time.Since(start), phase
		s.Calls, s.Errors = t.calls.Load(), t.errs.Load()
		s.Downloads = t.downloads.Load() + t.pageDownloads.Load()
		mu.Lock()
		res.samples = append(res.samples, s)
		mu.Unlock()
		fmt.Fprintf(out, "soak: %7s %-5s calls %6d errors %4d  tree %6.0f MiB  daemon %5.1f MiB (evidence map %4.1f)  chromium %3d  goroutines %5.0f  heap %5.1f MiB  fds %4d  sessions %3.0f  profiles %d  files %d  evidence %6.1f MiB\n",
			s.At.Round(time.Second), phase, s.Calls, s.Errors, float64(s.TreePSS)/mib, float64(s.DaemonPSS)/mib, float64(s.EvidenceMapPSS)/mib, s.ChromiumProcs,
			s.Goroutines, s.HeapInuse/mib, s.FDs, s.Sessions, s.ProfileDirs, s.FilesDirs, float64(s.EvidenceBytes)/mib)
		return nil
	}
	// The idle sample is of the daemon with its browser up (serve starts
	// it beside the listener, without waiting for it): Chromium's
	// processes there, and their count unchanged for five seconds.
	chromium, steady := -1, 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && steady < 5; time.Sleep(time.Second) {
		tree := proctree.Descendants(sm.pid)
		n := 0
		for _, p := range tree {
			if isChromium(p) {
				n++
			}
		}
		if n > 0 && n == chromium {
			steady++
		} else {
			steady = 0
		}
		chromium = n
	}
	if err := take("idle"); err != nil {
		return nil, err
	}
	start = time.Now()

	// The agents work until the duration is over (or the soak is
	// interrupted); the sampler reads every minute meanwhile.
	work, stopWork := context.WithTimeout(ctx, c.duration)
	defer stopWork()
	var wg sync.WaitGroup
	for i, token := range tokens {
		a := &agent{n: i, token: token, endpoint: d.url + "/mcp", site: site, sessionEvery: c.sessionEvery, tally: t}
		wg.Go(func() { a.run(work, c.agents) })
	}
	sampleErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(c.every)
		defer tick.Stop()
		for {
			select {
			case <-work.Done():
				sampleErr <- nil
				return
			case <-tick.C:
				if err := take("run"); err != nil {
					stopWork()
					sampleErr <- err
					return
				}
			}
		}
	}()
	if err := <-sampleErr; err != nil {
		wg.Wait()
		return nil, err
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted after %s", time.Since(start).Round(time.Second))
	}
	// Every agent has ended its session (DELETE /mcp); a call of it still
	// running in the daemon when the soak's time ran out ends first, and
	// the daemon closes an ended session's browser context and removes
	// its files after it has answered the DELETE. What is left then is
	// what the daemon keeps without them.
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		var dirs sample
		if m, err := sm.metrics(ctx); err == nil && m["browsergate_mcp_sessions_open"] == 0 && sm.temp(&dirs) == nil && dirs.FilesDirs == 0 {
			break
		}
	}
	if err := take("after"); err != nil {
		return nil, err
	}
	if err := d.stop(); err != nil {
		fmt.Fprintf(out, "soak: the daemon's stop: %v\n", err)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		res.left = append(res.left, e.Name())
	}

	res.csv = c.out
	if res.csv == "" {
		res.csv = "soak-" + time.Now().UTC().Format("20060102T150405") + ".csv"
	}
	if err := writeCSV(res.csv, res.samples); err != nil {
		return nil, err
	}
	table, leaks := summary(res.samples, c.warmup)
	res.leaks = leaks
	report(out, c, res, table, start)
	return res, nil
}

// report prints the run's facts and the summary table.
func report(out io.Writer, c config, res *result, table string, start time.Time) {
	t := res.tally
	host, _ := os.Hostname()
	fmt.Fprintf(out, "\n## Soak, %s\n\n", start.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(out, "%d agents for %s on %s (%d CPUs, %s): %d calls (%.1f/s), %d errors, %d MCP sessions opened, %d tabs opened and closed, %d downloads by the agents, %d pages that started one. Samples: %s.\n\n",
		c.agents, c.duration, host, runtime.NumCPU(), loadAverage(), t.calls.Load(), float64(t.calls.Load())/c.duration.Seconds(),
		t.errs.Load(), t.sessions.Load(), t.tabs.Load(), t.downloads.Load(), t.pageDownloads.Load(), res.csv)
	fmt.Fprint(out, table)
	idle, last := res.samples[0], res.samples[len(res.samples)-1]
	fmt.Fprintf(out, "\nAfter the agents ended their sessions, beside the idle daemon before them: %.0f MCP sessions open; %d Chromium processes (idle %d), %.0f goroutines (idle %.0f), %d open files (idle %d), whole tree %.0f MiB (idle %.0f), daemon %.1f MiB (idle %.1f), of which its mapping of the evidence file %.1f MiB (idle %.1f); %d profile dirs, %d session file dirs, %d staging dirs. After the daemon stopped, its TMPDIR held %d entries%s.\n",
		last.Sessions, last.ChromiumProcs, idle.ChromiumProcs, last.Goroutines, idle.Goroutines, last.FDs, idle.FDs,
		float64(last.TreePSS)/mib, float64(idle.TreePSS)/mib, float64(last.DaemonPSS)/mib, float64(idle.DaemonPSS)/mib,
		float64(last.EvidenceMapPSS)/mib, float64(idle.EvidenceMapPSS)/mib, last.ProfileDirs, last.FilesDirs, last.StagingDirs, len(res.left), listed(res.left))
	if errs := t.errorLines(); len(errs) > 0 {
		fmt.Fprintf(out, "\nErrors, by first line:\n\n")
		lines := make([]string, 0, len(errs))
		for msg := range errs {
			lines = append(lines, msg)
		}
		slices.SortFunc(lines, func(a, b string) int { return errs[b] - errs[a] })
		for i, msg := range lines {
			if i == 10 {
				fmt.Fprintf(out, "- … and %d more kinds\n", len(lines)-10)
				break
			}
			fmt.Fprintf(out, "- %d× %s\n", errs[msg], msg)
		}
	}
}

// listed is names for the report: ": a, b" or nothing.
func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) > 5 {
		names = append(names[:5:5], "…")
	}
	return ": " + strings.Join(names, ", ")
}

// loadAverage is the machine's load as /proc/loadavg says it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load average " + strings.Join(f[:3], " ")
}

// writeCSV writes the samples with their header.
func writeCSV(path string, samples []sample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(columns)
	for _, s := range samples {
		_ = w.Write(s.row())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startDaemon starts serve with TMPDIR tmp (so that what it makes there
// can be counted), its stderr into logPath, and waits until it says where
// it listens.
func startDaemon(binary string, args []string, tmp, logPath string) (*daemon, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// The daemon (and so its browser) ends with the soak, however the
	// soak ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(logFile, pw)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	d := &daemon{cmd: cmd, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait(); pw.Close(); logFile.Close() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "browsergate: listening on "); ok {
				found <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case d.url = <-found:
		return d, nil
	case err := <-d.done:
		return nil, fmt.Errorf("browsergate serve ended before it listened (%v); its log: %s", err, logPath)
	case <-time.After(2 * time.Minute):
		d.kill()
		return nil, fmt.Errorf("browsergate serve did not say where it listens within 2 minutes; its log: %s", logPath)
	}
}

// stop ends the daemon as an operator would (SIGTERM), and kills it if it
// has not ended in a minute.
func (d *daemon) stop() error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("serve ended with %v", err)
		}
		return err
	case <-time.After(time.Minute):
		d.kill()
		return errors.New("serve did not end within a minute of SIGTERM: killed")
	}
}

// kill ends the daemon at once, if it still runs.
func (d *daemon) kill() {
	select {
	case err := <-d.done:
		d.done <- err
	default:
		_ = d.cmd.Process.Kill()
	}
}

// randomToken is 32 random hex digits: a token the daemon's strength check
// takes.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
