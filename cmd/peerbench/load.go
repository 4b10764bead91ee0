package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The load scenario (-scenario load, `make bench-load`): N agents at once
// on one server, for each N of -agents, each server in turn:
//
//   - browsergate: one `serve --http` daemon (one Chromium, a browser
//     context per MCP session), an agent of its own per client, each over
//     MCP's streamable HTTP transport with its bearer token;
//   - Playwright MCP: one `cli.js --port` server over HTTP, one browser, a
//     browser context per HTTP client (its default);
//   - Chrome DevTools MCP: one process per client (it serves one, over
//     stdio), each launching its own Chromium (-devtools isolated) or all
//     attached to one the harness starts (-devtools shared);
//   - the floor, chromium-alone (loadfloor.go): one Chromium driven by
//     chromedp in this process, a browser context with one tab an agent,
//     each step the least any server needs (floor.go's agent).
//
// Each agent warms up with one round, then loops for -duration: the sign-in
// flow, the filter flow (speed.go's), and a long page read (navigate and
// snapshot one of the documentation pages, rotating), each with the
// server's own tools and refs from its own snapshots. Every call is
// timed. The server is started afresh for each N: its idle memory is taken
// before the first agent connects.

// levelResult is what one server measured at one N.
type levelResult struct {
	agents    int
	failed    string // the server did not start (or died at once): why
	calls     []time.Duration
	kinds     []string // beside calls: what each call was (navigate, read: snapshot, …)
	elapsed   time.Duration
	errs      int
	messages  []string // the first distinct error messages
	starts    []time.Duration
	idle      int64 // PSS of the server before any agent connected
	end, peak treeSample
	cpu       int64 // clock ticks the tree spent in the timed window
	// mainThread is the busiest browser main thread's share of the timed
	// window (busiestMainThread).
	mainThread float64
}

// loadTarget is one server under load: start starts it for a level.
type loadTarget struct {
	d     driver
	start func(n int) (*loadServer, error)
}

// loadServer is a server running for one level.
type loadServer struct {
	roots   func() []int // the processes whose trees are the server
	connect func(i int) (*loadSession, error)
	alive   func() error // nil while the server runs
	stop    func()
	cmdline string
}

// loadSession is one agent's session with its server: an MCP session (cs),
// or the floor's browser context, and the agent the round runs through
// (for an MCP session, its driver's tools: loadAgent.connect makes it).
type loadSession struct {
	cs    *mcp.ClientSession
	agent agent
	close func()
}

// parseLevels reads -agents: a comma-separated list of positive counts of
// agents, measured in that order.
func parseLevels(s string) ([]int, error) {
	var out []int
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-agents %q: item %d, %q, is not a whole number of agents of 1 or more", s, i+1, f)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("-agents %q: %d agents is listed twice", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// devtoolsModes are how Chrome DevTools MCP's processes get their browser.
var devtoolsModes = []string{"isolated", "shared"}

func runLoad(repo, peers string, levels []int, duration time.Duration, pages []page, only []string, devtools string, serveArgs []string) {
	dir, err := os.MkdirTemp("", "peerbench-load-")
	if err != nil {
		log.Fatal(err)
	}
	// Ctrl-C (or SIGTERM) ends every server and browser the run started.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		log.Printf("%v: ending every server the run started", s)
		stopAll()
		os.RemoveAll(dir)
		os.Exit(130)
	}()
	defer os.RemoveAll(dir)
	defer stopAll()
	if len(pages) == 0 {
		log.Fatal("-scenario load needs at least one documentation page (-pages)")
	}

	bin := buildBrowsergate(repo)
	manifest := writeManifest(dir, "click", "type_text", "select_option", "submit_form")
	site, docs := appSite(), serve(pages)
	targets := loadTargets(bin, manifest, repo, peers, dir, devtools, serveArgs)
	chosen, err := chooseTargets(targets, only)
	if err != nil {
		log.Fatal(err)
	}
	results := map[string][]levelResult{}
	cmdlines := map[string]string{}
	for _, t := range chosen {
		for _, n := range levels {
			log.Printf("%s: %d agents", t.d.name, n)
			r, cmdline := runLevel(t, n, duration, site, docs, pages)
			results[t.d.name] = append(results[t.d.name], r)
			if cmdline != "" {
				cmdlines[t.d.name] = cmdline
			}
		}
	}
	printLoad(os.Stdout, targets, levels, duration, results, cmdlines, devtools)
}

// loadTargets are the three servers, browsergate first, and the floor
// last (chromium-alone, loadfloor.go): bin is browsergate's binary,
// manifest the harness's manifest (writeManifest), dir the run's
// directory, serveArgs more flags for browsergate serve.
func loadTargets(bin, manifest, repo, peers, dir, devtools string, serveArgs []string) []loadTarget {
	ds := drivers(bin, manifest, filepath.Join(repo, "policies"), peers, dir)
	return []loadTarget{
		{d: ds[0], start: func(n int) (*loadServer, error) { return startBrowsergateHTTP(bin, manifest, repo, dir, n, serveArgs) }},
		{d: ds[1], start: func(int) (*loadServer, error) { return startPlaywrightHTTP(peers, dir) }},
		{d: ds[2], start: func(int) (*loadServer, error) { return startDevtools(ds[2], peers, dir, devtools) }},
		// The floor has no tools and no submit rate limit: its agent is
		// the session's own (floorTab).
		{d: driver{name: floorName}, start: func(int) (*loadServer, error) { return startFloorLoad() }},
	}
}

// chooseTargets are the targets -servers names (only; nil: all), in
// targets' order, or an error naming the first it does not know.
func chooseTargets(targets []loadTarget, only []string) ([]loadTarget, error) {
	var names []string
	for _, t := range targets {
		names = append(names, t.d.name)
	}
	for _, name := range only {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("-servers: %q is none of the load scenario's servers (%s)", name, strings.Join(names, ", "))
		}
	}
	if only == nil {
		return targets, nil
	}
	return slices.DeleteFunc(slices.Clone(targets), func(t loadTarget) bool { return !slices.Contains(only, t.d.name) }), nil
}

// runLevel starts the server, connects n agents, warms each up with one
// round, runs them all for duration and measures; then ends the server.
func runLevel(t loadTarget, n int, duration time.Duration, site, docs string, pages []page) (levelResult, string) {
	r := levelResult{agents: n}
	srv, err := t.start(n)
	if err != nil {
		r.failed = "start: " + err.Error()
		return r, ""
	}
	defer srv.stop()
	// What the server holds before any agent, once its start has settled.
	time.Sleep(2 * time.Second)
	r.idle = sampleTree(srv.roots()).pss

	stopSampling := make(chan struct{})
	peak := make(chan treeSample, 1)
	go func() {
		var p treeSample
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s := sampleTree(srv.roots())
			p.pss, p.chromiums, p.browsers = max(p.pss, s.pss), max(p.chromiums, s.chromiums), max(p.browsers, s.browsers)
			select {
			case <-stopSampling:
				peak <- p
				return
			case <-tick.C:
			}
		}
	}()

	agents := make([]*loadAgent, n)
	var ready, done sync.WaitGroup
	begin := make(chan time.Time)
	for i := range agents {
		a := &loadAgent{i: i, d: t.d, srv: srv, site: site, docs: docs, pages: pages}
		agents[i] = a
		ready.Add(1)
		done.Go(func() { a.run(&ready, begin, duration) })
	}
	ready.Wait()
	before := sampleTree(srv.roots())
	t0 := time.Now()
	for range agents {
		begin <- t0
	}
	done.Wait()
	r.elapsed = time.Since(t0)
	r.end = sampleTree(srv.roots())
	r.cpu = r.end.cpu - before.cpu
	r.mainThread = busiestMainThread(before, r.end, int64(r.elapsed.Seconds()*clockTicks))
	close(stopSampling)
	r.peak = <-peak
	r.peak.pss = max(r.peak.pss, r.end.pss)
	for _, a := range agents {
		r.calls = append(r.calls, a.calls...)
		r.kinds = append(r.kinds, a.kinds...)
		r.starts = append(r.starts, a.starts...)
		r.errs += len(a.errs)
		for _, m := range a.errs {
			r.messages = addDistinct(r.messages, m, 5)
		}
	}
	if err := srv.alive(); err != nil {
		r.errs++
		r.messages = addDistinct(r.messages, "the server: "+err.Error(), 5)
	}
	for _, a := range agents {
		if a.s != nil {
			a.s.close()
		}
	}
	return r, srv.cmdline
}

// addDistinct adds m to ms unless one there is the same failure (the
// same words, whatever refs, counts and times they hold), keeping at most
// limit.
func addDistinct(ms []string, m string, limit int) []string {
	key := func(s string) string {
		words := strings.Fields(s)
		for i, w := range words {
			if strings.ContainsAny(w, "0123456789") {
				words[i] = "#"
			}
		}
		return strings.Join(words, " ")
	}
	if len(ms) >= limit || slices.ContainsFunc(ms, func(o string) bool { return key(o) == key(m) }) {
		return ms
	}
	return append(ms, m)
}

// errLevelOver ends an agent's flow when the level's time is up.
var errLevelOver = errors.New("the level's time is up")

// loadAgent is one agent of a level.
type loadAgent struct {
	i           int
	d           driver
	srv         *loadServer
	site, docs  string
	pages       []page
	s           *loadSession
	submits     int
	deadline    time.Time // zero in the warm-up
	calls       []time.Duration
	kinds       []string // the kind of each call (kindOf), beside calls
	starts      []time.Duration
	errs        []string
	round, read int
	reading     bool // in the long-page read: its calls are a kind of their own
}

// run connects, warms up with one round, reports ready, and from begin
// loops for duration.
func (a *loadAgent) run(ready *sync.WaitGroup, begin <-chan time.Time, duration time.Duration) {
	warm := a.connect(false)
	if warm {
		for _, step := range a.steps() {
			if err := step(); err != nil {
				if !errors.Is(err, errSessionFailed) {
					a.fail("warm-up: " + err.Error())
				}
				break
			}
		}
	}
	a.calls, a.kinds, a.starts = nil, nil, nil
	ready.Done()
	t0 := <-begin
	a.deadline = t0.Add(duration)
	for time.Now().Before(a.deadline) {
		if a.s == nil && !a.connect(true) {
			// The server refused a session: wait a moment rather than
			// spin on it.
			time.Sleep(time.Second)
			continue
		}
		for _, step := range a.steps() {
			if err := step(); err != nil {
				if !errors.Is(err, errLevelOver) && !errors.Is(err, errSessionFailed) {
					a.fail(err.Error())
				}
				break
			}
		}
	}
}

// steps are one round: sign in, filter, and a long page read.
func (a *loadAgent) steps() []func() error {
	flow := func(f flow) func() error {
		return func() error {
			if a.d.submitsPerSession > 0 && a.submits+f.submits > a.d.submitsPerSession {
				// browsergate's shipped submit-rate-limit policy: a new MCP
				// session (timed as a session start, and part of the load).
				a.s.close()
				a.s = nil
				if !a.connect(true) {
					return errSessionFailed
				}
			}
			a.submits += f.submits
			_, err := f.run(timedAgent{a.s.agent, a}, a.site)
			if err != nil && !errors.Is(err, errLevelOver) {
				err = fmt.Errorf("%s: %w", f.name, err)
			}
			return err
		}
	}
	read := func() error {
		p := a.pages[(a.i+a.read)%len(a.pages)]
		a.read++
		ta := timedAgent{a.s.agent, a}
		a.reading = true
		defer func() { a.reading = false }()
		err := ta.navigate(a.docs + "/" + p.name)
		if err == nil {
			_, err = ta.snapshot()
		}
		if err != nil && !errors.Is(err, errLevelOver) {
			err = fmt.Errorf("read %s: %w", p.name, err)
		}
		return err
	}
	return []func() error{flow(flows[0]), flow(flows[1]), read}
}

// errSessionFailed ends a round whose new session could not be opened
// (connect has recorded why).
var errSessionFailed = errors.New("no session")

// connect opens the agent's MCP session; timed says whether its time
// counts as a session start.
func (a *loadAgent) connect(timed bool) bool {
	t0 := time.Now()
	s, err := a.srv.connect(a.i)
	if err != nil {
		a.fail("session start: " + err.Error())
		return false
	}
	if timed {
		a.starts = append(a.starts, time.Since(t0))
	}
	if s.agent == nil {
		s.agent = mcpAgent{a.d, &session{cs: s.cs}}
	}
	a.s, a.submits = s, 0
	return true
}

// fail records an error and starts the agent afresh: a new session at its
// next round (whatever state the failed one was left in).
func (a *loadAgent) fail(msg string) {
	a.errs = append(a.errs, msg)
	if a.s != nil {
		a.s.close()
		a.s = nil
	}
}

// timedAgent times every call of an agent's flow, and ends the flow when
// the level's time is up.
type timedAgent struct {
	agent
	a *loadAgent
}

func (t timedAgent) timed(kind string, call func() error) error {
	if !t.a.deadline.IsZero() && !time.Now().Before(t.a.deadline) {
		return errLevelOver
	}
	t0 := time.Now()
	err := call()
	if !t.a.deadline.IsZero() {
		if t.a.reading {
			kind = "read: " + kind
		}
		t.a.calls = append(t.a.calls, time.Since(t0))
		t.a.kinds = append(t.a.kinds, kind)
	}
	return err
}

func (t timedAgent) navigate(u string) error {
	return t.timed("navigate", func() error { return t.agent.navigate(u) })
}

func (t timedAgent) snapshot() (string, error) {
	var snap string
	err := t.timed("snapshot", func() (err error) { snap, err = t.agent.snapshot(); return err })
	return snap, err
}

func (t timedAgent) fill(ref, text string) error {
	return t.timed("fill", func() error { return t.agent.fill(ref, text) })
}

func (t timedAgent) click(ref string) error {
	return t.timed("click", func() error { return t.agent.click(ref) })
}

func (t timedAgent) choose(ref, value, label string) error {
	return t.timed("choose", func() error { return t.agent.choose(ref, value, label) })
}

// httpClient is the HTTP client of a level's MCP sessions: enough idle
// connections kept for every agent (Go's default keeps two a host, and
// would open and close connections under load).
func httpClient(n int, token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 4*n+4, 4*n+4
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearer{token: token, next: tr}
	}
	return &http.Client{Transport: rt}
}

// bearer adds an agent's token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connectHTTP(endpoint string, client *http.Client) (*loadSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "peerbench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	return &loadSession{cs: cs, close: func() { _ = cs.Close() }}, nil
}

// stderrTail keeps the last 4 KB a server wrote to stderr, for its
// errors.
type stderrTail struct {
	mu sync.Mutex
	b  []byte
}

func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	if len(s.b) > 4096 {
		s.b = s.b[len(s.b)-4096:]
	}
	return len(p), nil
}

func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(string(s.b))
}

// aliveProc is a server's alive: an error once the process has ended.
func aliveProc(p *proc, tail *stderrTail) func() error {
	return func() error {
		if p.exited() {
			return fmt.Errorf("the process ended (%v): %.500s", p.cmd.ProcessState, tail.String())
		}
		return nil
	}
}

// startBrowsergateHTTP starts one daemon for n agents, each an agent of
// its own in the agents file with a fresh random token; extra are more
// serve flags.
func startBrowsergateHTTP(bin, manifest, repo, dir string, n int, extra []string) (*loadServer, error) {
	tokens := make([]string, n)
	var agents strings.Builder
	for i := range tokens {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		tokens[i] = hex.EncodeToString(b)
		sum := sha256.Sum256([]byte(tokens[i]))
		fmt.Fprintf(&agents, "[agents.agent-%d]\ntoken_sha256 = %q\n", i, hex.EncodeToString(sum[:]))
	}
	agentsFile := filepath.Join(dir, fmt.Sprintf("agents-%d.toml", n))
	if err := os.WriteFile(agentsFile, []byte(agents.String()), 0o600); err != nil {
		return nil, err
	}
	// Each agent has one session open at a time; a new one is opened just
	// after the last is ended, so two each leave room for the daemon to
	// finish ending the last.
	args := []string{"serve", "--manifest", manifest, "--policies", filepath.Join(repo, "policies"),
		"--evidence", filepath.Join(dir, fmt.Sprintf("load-%d.db", n)), "--log-level", "error",
		"--http", "127.0.0.1:0", "--agents", agentsFile,
		"--max-sessions", strconv.Itoa(max(64, 2*n)), "--max-sessions-per-agent", "2"}
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Dir = dir
	tail := &stderrTail{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(tail, pw)
	p, err := startProc(cmd)
	if err != nil {
		return nil, err
	}
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
	var url string
	select {
	case url = <-found:
	case <-p.done:
		return nil, fmt.Errorf("browsergate ended: %.1000s", tail.String())
	case <-time.After(time.Minute):
		p.stop()
		return nil, fmt.Errorf("browsergate did not say where it listens within a minute: %.1000s", tail.String())
	}
	clients := make([]*http.Client, n)
	for i := range clients {
		clients[i] = httpClient(1, tokens[i])
	}
	return &loadServer{
		roots:   func() []int { return []int{cmd.Process.Pid} },
		connect: func(i int) (*loadSession, error) { return connectHTTP(url+"/mcp", clients[i]) },
		alive:   aliveProc(p, tail),
		stop:    func() { p.stop(); pw.Close() },
		cmdline: strings.Join(cmd.Args, " ") + " (agents-N.toml: one [agents.agent-I] with a random token for each agent)",
	}, nil
}

// freePort is a loopback port nothing listens on just now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startPlaywrightHTTP starts Playwright MCP's HTTP server: one browser, a
// browser context per HTTP client (its default without
// --shared-browser-context), launched as the speed scenario's is. It
// answers only requests addressed to the name it listens under
// (localhost:PORT unless told): --allowed-hosts names 127.0.0.1:PORT, the
// address the clients use.
func startPlaywrightHTTP(peers, dir string) (*loadServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(peers, "node_modules/@playwright/mcp/cli.js"), "--config", filepath.Join(dir, "playwright-mcp.json"),
		"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--allowed-hosts", fmt.Sprintf("127.0.0.1:%d", port))
	cmd.Dir = peers
	tail := &stderrTail{}
	cmd.Stdout, cmd.Stderr = tail, tail
	p, err := startProc(cmd)
	if err != nil {
		return nil, err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	deadline := time.Now().Add(time.Minute)
	for {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if p.exited() || time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("Playwright MCP did not listen on port %d: %.1000s", port, tail.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var mu sync.Mutex
	clients := map[int]*http.Client{}
	return &loadServer{
		roots: func() []int { return []int{cmd.Process.Pid} },
		connect: func(i int) (*loadSession, error) {
			mu.Lock()
			c := clients[i]
			if c == nil {
				c = httpClient(1, "")
				clients[i] = c
			}
			mu.Unlock()
			return connectHTTP(endpoint, c)
		},
		alive:   aliveProc(p, tail),
		stop:    p.stop,
		cmdline: strings.Join(cmd.Args, " ") + " (the config file names /usr/bin/chromium, headless, isolated, and the flags above)",
	}, nil
}

// startDevtools runs Chrome DevTools MCP a process per agent (it serves
// one client, over stdio): in mode isolated each launches its own Chromium
// as the speed scenario's does; in mode shared all attach to one Chromium
// the harness starts.
func startDevtools(d driver, peers, dir, mode string) (*loadServer, error) {
	var roots []int
	var mu sync.Mutex
	command := d.cmd
	var chromium *proc
	cmdline := strings.Join(d.cmd().Args, " ") + " (a process per agent, over stdio)"
	if mode == "shared" {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		profile, err := os.MkdirTemp(dir, "chromium-")
		if err != nil {
			return nil, err
		}
		args := append(slices.Clone(chromiumFlags), "--user-data-dir="+profile,
			fmt.Sprintf("--remote-debugging-port=%d", port), "--remote-debugging-address=127.0.0.1", "about:blank")
		if chromium, err = startProc(exec.Command("/usr/bin/chromium", args...)); err != nil {
			return nil, err
		}
		roots = append(roots, chromium.cmd.Process.Pid)
		deadline := time.Now().Add(time.Minute)
		for {
			if r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/version", port)); err == nil {
				r.Body.Close()
				break
			}
			if chromium.exited() || time.Now().After(deadline) {
				chromium.stop()
				return nil, fmt.Errorf("chromium did not open its DevTools port %d", port)
			}
			time.Sleep(100 * time.Millisecond)
		}
		browserURL := fmt.Sprintf("http://127.0.0.1:%d", port)
		command = func() *exec.Cmd {
			return exec.Command("node", filepath.Join(peers, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
				"--browserUrl", browserURL, "--no-page-id-routing", "--no-usage-statistics", "--no-performance-crux")
		}
		cmdline = "/usr/bin/chromium " + strings.Join(args, " ") + "; and a process per agent, over stdio: " + strings.Join(command().Args, " ")
	}
	connect := func(int) (*loadSession, error) {
		cmd := command()
		cmd.Dir = peers
		tail := &stderrTail{}
		cmd.Stderr = tail
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "peerbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			if cmd.Process != nil {
				endTree(cmd.Process.Pid, func() { _ = cmd.Process.Kill() })
			}
			return nil, fmt.Errorf("%w: %.500s", err, tail.String())
		}
		pid := cmd.Process.Pid
		mu.Lock()
		roots = append(roots, pid)
		mu.Unlock()
		var once sync.Once
		end := func() {
			once.Do(func() {
				endTree(pid, func() { _ = cs.Close() })
				mu.Lock()
				roots = slices.DeleteFunc(roots, func(p int) bool { return p == pid })
				mu.Unlock()
				unregisterStop(pid)
			})
		}
		registerStop(pid, end)
		return &loadSession{cs: cs, close: end}, nil
	}
	return &loadServer{
		roots: func() []int {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(roots)
		},
		connect: connect,
		alive: func() error {
			if chromium != nil && chromium.exited() {
				return fmt.Errorf("the shared Chromium ended (%v)", chromium.cmd.ProcessState)
			}
			return nil
		},
		stop: func() {
			mu.Lock()
			pids := slices.Clone(roots)
			mu.Unlock()
			startedProcs.Lock()
			var stops []func()
			for _, pid := range pids {
				if s := startedProcs.stops[pid]; s != nil {
					stops = append(stops, s)
				}
			}
			startedProcs.Unlock()
			var wg sync.WaitGroup
			for _, s := range stops {
				wg.Go(s)
			}
			wg.Wait()
		},
		cmdline: cmdline,
	}, nil
}
