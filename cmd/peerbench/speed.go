package main

import (
	"context"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The speed scenario (-scenario speed, `make bench-peers`): each server
// launches its own Chromium (the same binary and flags), and is measured on
//
//   - cold start: spawn the server, initialise MCP, and navigate to a
//     page, until the navigate returns (fresh processes, each run);
//   - app flows on a small site of ours: sign in (navigate, snapshot, fill
//     two fields, click, see the next page); filter (select an option,
//     tick a checkbox, apply, see the results); a link to a page that
//     redirects by script a moment later (click, then snapshots until the
//     destination shows);
//   - navigate + snapshot of long documentation pages;
//   - the peak memory of the server and every process it started (the sum
//     of their proportional set sizes, sampled every 100 ms).
//
// Every server is driven the same way, through the official MCP client
// over stdio, each with its own tools: refs come from its own snapshots.

// chromiumFlags are the flags every server's Chromium gets (those this
// machine needs; browsergate adds its egress proxy's).
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// driver is how one server is driven: its command line, and its tools for
// each step of a flow.
type driver struct {
	name string
	cmd  func() *exec.Cmd
	// Tool calls.
	navigate func(u string) (string, map[string]any)
	snapshot func() (string, map[string]any)
	fill     func(ref, text string) (string, map[string]any)
	click    func(ref string) (string, map[string]any)
	choose   func(ref, value, label string) (string, map[string]any)
	// ref finds the ref of the element of role and accessible name in a
	// snapshot of this server's.
	ref func(snapshot, role, name string) string
	// submits: clicks that submit a form count against browsergate's
	// shipped submit-rate-limit policy (5 a session): the harness starts a
	// new session (outside the timing) before it would be reached.
	submitsPerSession int
}

func drivers(bin, manifest, policies, peers, evidenceDir string) []driver {
	pwConfig := filepath.Join(evidenceDir, "playwright-mcp.json")
	args := `"` + strings.Join(chromiumFlags[1:], `","`) + `"`
	_ = os.WriteFile(pwConfig, []byte(`{"browser":{"browserName":"chromium","launchOptions":{"executablePath":"/usr/bin/chromium","headless":true,"args":[`+args+`]},"isolated":true}}`), 0o644)
	n := 0
	return []driver{
		{
			name: "browsergate",
			cmd: func() *exec.Cmd {
				n++
				return exec.Command(bin, "serve", "--manifest", manifest, "--policies", policies,
					"--evidence", filepath.Join(evidenceDir, fmt.Sprintf("speed-%d.db", n)), "--log-level", "error")
			},
			navigate: func(u string) (string, map[string]any) { return "bench.navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "bench.snapshot", map[string]any{"max_chars": 1000000} },
			fill: func(ref, text string) (string, map[string]any) {
				return "bench.type_text", map[string]any{"ref": ref, "text": text}
			},
			click: func(ref string) (string, map[string]any) { return "bench.click", map[string]any{"ref": ref} },
			choose: func(ref, value, _ string) (string, map[string]any) {
				return "bench.select_option", map[string]any{"ref": ref, "value": value}
			},
			ref: func(snap, role, name string) string {
				// [textbox "Username" e6 …], [button "Sign in" e5], [Continue](e4 /hop)
				// A control whose label is the text beside it leaves the
				// name out: Username [textbox e1], [checkbox e2] Only late.
				q := regexp.QuoteMeta(name)
				if role == "link" {
					return find(snap, `\[`+q+`\]\((e\d+)`)
				}
				for _, p := range []string{`\[` + role + ` "` + q + `" (e\d+)`, q + ` \[` + role + ` (e\d+)`, `\[` + role + ` (e\d+)[^\]]*\] ` + q} {
					if ref := find(snap, p); ref != "" {
						return ref
					}
				}
				return ""
			},
			submitsPerSession: 4,
		},
		{
			name: "playwright-mcp",
			cmd: func() *exec.Cmd {
				return exec.Command("node", filepath.Join(peers, "node_modules/@playwright/mcp/cli.js"), "--config", pwConfig)
			},
			navigate: func(u string) (string, map[string]any) { return "browser_navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "browser_snapshot", map[string]any{} },
			fill: func(ref, text string) (string, map[string]any) {
				return "browser_type", map[string]any{"target": ref, "text": text}
			},
			click: func(ref string) (string, map[string]any) { return "browser_click", map[string]any{"target": ref} },
			choose: func(ref, _, label string) (string, map[string]any) {
				return "browser_select_option", map[string]any{"target": ref, "values": []string{label}}
			},
			ref: func(snap, role, name string) string {
				// - textbox "Username" [ref=e12]
				return find(snap, role+` "`+regexp.QuoteMeta(name)+`"[^\n]*\[ref=([a-z0-9]+)\]`)
			},
		},
		{
			name: "chrome-devtools-mcp",
			cmd: func() *exec.Cmd {
				a := []string{filepath.Join(peers, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
					"--executablePath", "/usr/bin/chromium", "--headless", "--isolated",
					"--no-page-id-routing", "--no-usage-statistics", "--no-performance-crux"}
				for _, f := range chromiumFlags[1:] {
					a = append(a, "--chromeArg="+f)
				}
				return exec.Command("node", a...)
			},
			navigate: func(u string) (string, map[string]any) { return "navigate_page", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "take_snapshot", map[string]any{} },
			fill: func(ref, text string) (string, map[string]any) {
				return "fill", map[string]any{"uid": ref, "value": text}
			},
			click: func(ref string) (string, map[string]any) { return "click", map[string]any{"uid": ref} },
			choose: func(ref, _, label string) (string, map[string]any) {
				return "fill", map[string]any{"uid": ref, "value": label}
			},
			ref: func(snap, role, name string) string {
				// uid=1_3 textbox "Username"
				return find(snap, `uid=(\S+) `+role+` "`+regexp.QuoteMeta(name)+`"`)
			},
		},
	}
}

func find(text, pattern string) string {
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// appSite serves the flows' pages: a sign-in form, a filter form, and a
// link to a page that redirects by script 300 ms after it loads.
func appSite() string {
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><main><h1>%s</h1>%s</main></body></html>", title, title, body)
	}
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.ParseForm()
			if r.Form.Get("username") == "ada" && r.Form.Get("password") == "correct horse" {
				http.SetCookie(w, &http.Cookie{Name: "session", Value: "1", Path: "/"})
				http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
				return
			}
			page(w, "Sign in", "<p>Wrong password.</p>")
			return
		}
		// Each run starts signed out.
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "", Path: "/", MaxAge: -1})
		page(w, "Sign in", `<form method="post" action="/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("/dashboard", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Dashboard", "<p>Welcome back, Ada. You have 3 open orders.</p>")
	})
	mux.HandleFunc("/orders", func(w http.ResponseWriter, r *http.Request) {
		// Signed out (the shipped policies hold a submission on a signed-in
		// page for a human's approval).
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "", Path: "/", MaxAge: -1})
		page(w, "Orders", `<form action="/orders/results" method="get">
<label>Status <select name="status"><option value="">Any</option><option value="open">Open</option><option value="shipped">Shipped</option></select></label>
<label><input type="checkbox" name="late"> Only late orders</label>
<button type="submit">Apply</button></form>`)
	})
	mux.HandleFunc("/orders/results", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Results", fmt.Sprintf("<p>Showing status %s, late %s: order A-1001.</p>", r.URL.Query().Get("status"), r.URL.Query().Get("late")))
	})
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Start", `<p><a href="/hop">Continue</a></p>`)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Please wait", `<p>Taking you there…</p><script>setTimeout(() => { location.href = "/final"; }, 300);</script>`)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Destination", "<p>You have arrived.</p>")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, mux)
	return "http://" + ln.Addr().String()
}

// session is one server process with its MCP session.
type session struct {
	cs      *mcp.ClientSession
	cmd     *exec.Cmd
	submits int
}

func (d driver) start(dir string) (*session, error) {
	cmd := d.cmd()
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "peerbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return &session{cs: cs, cmd: cmd}, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *session) do(tool string, args map[string]any) (string, error) { return call(s.cs, tool, args) }

// agent is what a flow does, step by step: through an MCP server's tools
// (mcpAgent), or through Chromium alone (floorTab, floor.go).
type agent interface {
	navigate(u string) error
	snapshot() (string, error)
	fill(ref, text string) error
	click(ref string) error
	choose(ref, value, label string) error
	// ref finds the ref of the element of role and accessible name in a
	// snapshot of this agent's ("": none).
	ref(snapshot, role, name string) string
}

// mcpAgent drives a server through its own tools.
type mcpAgent struct {
	d driver
	s *session
}

func (a mcpAgent) navigate(u string) error   { _, err := a.s.do(a.d.navigate(u)); return err }
func (a mcpAgent) snapshot() (string, error) { return a.s.do(a.d.snapshot()) }
func (a mcpAgent) fill(ref, text string) error {
	_, err := a.s.do(a.d.fill(ref, text))
	return err
}
func (a mcpAgent) click(ref string) error { _, err := a.s.do(a.d.click(ref)); return err }
func (a mcpAgent) choose(ref, value, label string) error {
	_, err := a.s.do(a.d.choose(ref, value, label))
	return err
}
func (a mcpAgent) ref(snap, role, name string) string { return a.d.ref(snap, role, name) }

// flow is one app flow: it runs on a warm session and returns how many
// calls it made.
type flow struct {
	name    string
	submits int // form submissions it makes
	run     func(a agent, site string) (int, error)
}

var flows = []flow{
	{name: "sign in", submits: 1, run: func(a agent, site string) (int, error) {
		if err := a.navigate(site + "/login"); err != nil {
			return 0, err
		}
		snap, err := a.snapshot()
		if err != nil {
			return 1, err
		}
		user, pass, button := a.ref(snap, "textbox", "Username"), a.ref(snap, "textbox", "Password"), a.ref(snap, "button", "Sign in")
		if user == "" || pass == "" || button == "" {
			return 2, fmt.Errorf("refs not found in the snapshot:\n%.2000s", snap)
		}
		for _, f := range [][2]string{{user, "ada"}, {pass, "correct horse"}} {
			if err := a.fill(f[0], f[1]); err != nil {
				return 3, err
			}
		}
		if err := a.click(button); err != nil {
			return 5, err
		}
		return untilShown(a, "Welcome back", 6)
	}},
	{name: "filter", submits: 1, run: func(a agent, site string) (int, error) {
		if err := a.navigate(site + "/orders"); err != nil {
			return 0, err
		}
		snap, err := a.snapshot()
		if err != nil {
			return 1, err
		}
		status, late, apply := a.ref(snap, "combobox", "Status"), a.ref(snap, "checkbox", "Only late orders"), a.ref(snap, "button", "Apply")
		if status == "" || late == "" || apply == "" {
			return 2, fmt.Errorf("refs not found in the snapshot:\n%.2000s", snap)
		}
		if err := a.choose(status, "open", "Open"); err != nil {
			return 2, err
		}
		if err := a.click(late); err != nil {
			return 3, err
		}
		if err := a.click(apply); err != nil {
			return 4, err
		}
		return untilShown(a, "late on", 5)
	}},
	{name: "script redirect", run: func(a agent, site string) (int, error) {
		if err := a.navigate(site + "/start"); err != nil {
			return 0, err
		}
		snap, err := a.snapshot()
		if err != nil {
			return 1, err
		}
		link := a.ref(snap, "link", "Continue")
		if link == "" {
			return 2, fmt.Errorf("the link's ref is not in the snapshot:\n%.2000s", snap)
		}
		if err := a.click(link); err != nil {
			return 2, err
		}
		return untilShown(a, "You have arrived", 3)
	}},
}

// untilShown takes snapshots until text shows (for at most 10 s), as an
// agent would to see where it is; calls counts the calls made so far.
func untilShown(a agent, text string, calls int) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		snap, err := a.snapshot()
		calls++
		if err != nil {
			return calls, err
		}
		if strings.Contains(snap, text) {
			return calls, nil
		}
	}
	return calls, fmt.Errorf("%q did not show within 10 s (%d calls)", text, calls)
}

// stat is the median and p95 of a set of durations.
type stat struct{ median, p95 time.Duration }

func stats(ds []time.Duration) stat {
	if len(ds) == 0 {
		return stat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return stat{median: s[len(s)/2], p95: s[min(len(s)-1, (len(s)*95+99)/100-1)]}
}

// peakPSS samples the proportional set size of pid and its descendants
// every 100 ms until stop is closed, and returns the peak.
func peakPSS(pid int, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if v := treePSS(pid); v > peak {
				peak = v
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

func treePSS(pid int) int64 {
	parents := map[int]int{}
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(fields) < 2 {
			continue
		}
		p, _ := strconv.Atoi(strings.Fields(s)[0])
		parents[p], _ = strconv.Atoi(fields[1])
	}
	var total int64
	for p := range parents {
		for q := p; q > 1; q = parents[q] {
			if q == pid {
				total += pss(p)
				break
			}
		}
	}
	return total
}

func pss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// speedResult is what one server measured.
type speedResult struct {
	cold  stat
	flows map[string]stat
	calls map[string]int
	docs  map[string]stat
	peak  int64
	errs  []string
}

// timed runs once runs+1 times and returns the statistics of all but the
// first (a warm-up); an error ends the runs and is recorded under name.
func (r *speedResult) timed(name string, runs int, once func() error) stat {
	var ts []time.Duration
	for i := 0; i <= runs; i++ {
		t0 := time.Now()
		if err := once(); err != nil {
			r.errs = append(r.errs, name+": "+err.Error())
			break
		}
		if i > 0 {
			ts = append(ts, time.Since(t0))
		}
	}
	return stats(ts)
}

// runSpeed runs the speed scenario and prints its table.
func runSpeed(repo, peers string, runs int, pages []page, only []string) {
	dir, err := os.MkdirTemp("", "peerbench-speed-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildBrowsergate(repo)
	manifest := writeManifest(dir, "click", "type_text", "select_option", "submit_form")
	site, docs := appSite(), serve(pages)
	results := map[string]*speedResult{}
	ds := drivers(bin, manifest, filepath.Join(repo, "policies"), peers, dir)
	for _, d := range ds {
		r := &speedResult{flows: map[string]stat{}, calls: map[string]int{}, docs: map[string]stat{}}
		results[d.name] = r
		if only != nil && !slices.Contains(only, d.name) {
			continue
		}
		log.Printf("%s: cold starts", d.name)
		var colds []time.Duration
		for range runs {
			t0 := time.Now()
			s, err := d.start(peers)
			if err == nil {
				_, err = s.do(d.navigate(site + "/start"))
			}
			if err != nil {
				r.errs = append(r.errs, "cold start: "+err.Error())
				if s != nil {
					s.cs.Close()
				}
				break
			}
			colds = append(colds, time.Since(t0))
			s.cs.Close()
		}
		r.cold = stats(colds)

		log.Printf("%s: flows and documentation pages", d.name)
		s, err := d.start(peers)
		if err != nil {
			r.errs = append(r.errs, "start: "+err.Error())
			continue
		}
		stop := make(chan struct{})
		peak := peakPSS(s.cmd.Process.Pid, stop)
		for _, f := range flows {
			var ts []time.Duration
			for i := 0; i <= runs; i++ {
				if d.submitsPerSession > 0 && s.submits+f.submits > d.submitsPerSession {
					// A new session for the shipped submit-rate-limit policy,
					// outside the timing; the memory sampling follows it.
					close(stop)
					if p := <-peak; p > r.peak {
						r.peak = p
					}
					s.cs.Close()
					if s, err = d.start(peers); err != nil {
						log.Fatalf("%s: restart: %v", d.name, err)
					}
					// Warm, as the peers' sessions are: the cold start is
					// measured on its own.
					if _, err := s.do(d.navigate(site + "/start")); err != nil {
						log.Fatalf("%s: warm-up: %v", d.name, err)
					}
					stop = make(chan struct{})
					peak = peakPSS(s.cmd.Process.Pid, stop)
				}
				t0 := time.Now()
				calls, err := f.run(mcpAgent{d, s}, site)
				el := time.Since(t0)
				s.submits += f.submits
				if err != nil {
					r.errs = append(r.errs, f.name+": "+err.Error())
					break
				}
				if i > 0 { // the first run warms up
					ts = append(ts, el)
					r.calls[f.name] = calls
				}
			}
			r.flows[f.name] = stats(ts)
		}
		for _, p := range pages {
			r.docs[p.name] = r.timed(p.name, runs, func() error {
				_, err := s.do(d.navigate(docs + "/" + p.name))
				if err == nil {
					_, err = s.do(d.snapshot())
				}
				return err
			})
		}
		close(stop)
		if p := <-peak; p > r.peak {
			r.peak = p
		}
		s.cs.Close()
	}
	if err := readDOMScripts(repo); err != nil {
		log.Fatal(err)
	}
	for _, name := range floors {
		if only == nil || slices.Contains(only, name) {
			log.Printf("%s: the same scenario, Chromium alone", name)
			results[name] = runFloor(runs, site, docs, pages, name == floorWaitsName)
		}
	}
	printSpeed(ds, results, runs, pages)
}

func printSpeed(ds []driver, results map[string]*speedResult, runs int, pages []page) {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 0, 64) }
	cell := func(s stat) string {
		if s.median == 0 {
			return "—"
		}
		return ms(s.median) + " (p95 " + ms(s.p95) + ")"
	}
	// toBest is what of names, divided by the better peer's.
	toBest := func(name string, get func(*speedResult) float64) string {
		best := 0.0
		for _, d := range ds[1:] {
			if v := get(results[d.name]); v > 0 && (best == 0 || v < best) {
				best = v
			}
		}
		r := results[name]
		if r == nil || get(r) == 0 || best == 0 {
			return "—"
		}
		return strconv.FormatFloat(get(r)/best, 'f', 2, 64)
	}
	fmt.Printf("\nmedian (p95) in ms of %d runs after a warm-up; cold starts: %d fresh processes\n\n", runs, runs)
	fmt.Printf("| measure |")
	for _, d := range ds {
		fmt.Printf(" %s |", d.name)
	}
	fmt.Printf(" browsergate / better peer |")
	for _, f := range floors {
		fmt.Printf(" %s (a floor) | %s / better peer |", f, f)
	}
	fmt.Printf("\n| --- |%s --- |%s\n", strings.Repeat(" --- |", len(ds)), strings.Repeat(" --- | --- |", len(floors)))
	row := func(name string, get func(*speedResult) stat) {
		fmt.Printf("| %s |", name)
		for _, d := range ds {
			fmt.Printf(" %s |", cell(get(results[d.name])))
		}
		median := func(r *speedResult) float64 { return float64(get(r).median) }
		fmt.Printf(" %s |", toBest("browsergate", median))
		for _, name := range floors {
			floor := "—"
			if f := results[name]; f != nil {
				floor = cell(get(f))
			}
			fmt.Printf(" %s | %s |", floor, toBest(name, median))
		}
		fmt.Println()
	}
	row("cold start: spawn to first navigate done", func(r *speedResult) stat { return r.cold })
	for _, f := range flows {
		row(fmt.Sprintf("flow: %s", f.name), func(r *speedResult) stat { return r.flows[f.name] })
	}
	for _, p := range pages {
		row("navigate + snapshot: "+p.name, func(r *speedResult) stat { return r.docs[p.name] })
	}
	mib := func(r *speedResult) string {
		if r == nil || r.peak == 0 {
			return "—"
		}
		return strconv.FormatFloat(float64(r.peak)/(1<<20), 'f', 0, 64)
	}
	peak := func(r *speedResult) float64 { return float64(r.peak) }
	fmt.Printf("| peak memory (PSS of the server and its processes, MiB) |")
	for _, d := range ds {
		fmt.Printf(" %s |", mib(results[d.name]))
	}
	fmt.Printf(" %s |", toBest("browsergate", peak))
	for _, name := range floors {
		fmt.Printf(" %s | %s |", mib(results[name]), toBest(name, peak))
	}
	fmt.Println()
	fmt.Printf("\ncalls each flow took (the last run):\n")
	names := []string{}
	for _, d := range ds {
		names = append(names, d.name)
	}
	for _, name := range floors {
		if results[name] != nil {
			names = append(names, name)
		}
	}
	for _, f := range flows {
		fmt.Printf("  %-16s", f.name)
		for _, n := range names {
			fmt.Printf("  %s %d", n, results[n].calls[f.name])
		}
		fmt.Println()
	}
	for _, n := range names {
		for _, e := range results[n].errs {
			fmt.Printf("\n%s: error: %.500s", n, e)
		}
	}
	fmt.Println()
	fmt.Printf("\ncommand lines:\n")
	for _, d := range ds {
		c := d.cmd()
		fmt.Printf("  %s: %s\n", d.name, strings.Join(c.Args, " "))
	}
	fmt.Printf("  %s: chromedp's exec allocator in this process: /usr/bin/chromium %s", floorName, strings.Join(chromiumFlags, " "))
	for _, name := range slices.Sorted(maps.Keys(floorFlags)) {
		fmt.Printf(" --%s=%q", name, floorFlags[name])
	}
	fmt.Printf(" --user-data-dir=<fresh> (and chromedp's --remote-debugging-pipe)\n")
	fmt.Printf("  %s: the same, waiting after each action as browsergate does (floor.go's settle)\n", floorWaitsName)
}
