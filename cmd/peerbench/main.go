// Command peerbench drives browsergate and the MCP browser servers an agent
// would otherwise use — Playwright's (@playwright/mcp) and Chrome
// DevTools' (chrome-devtools-mcp) — through the official MCP Go client, on
// the same pages in the same run, and prints what each snapshot costs an
// agent: its tokens (o200k_base and cl100k_base), and how many of the
// page's words it carries; and how long a navigation and a snapshot take.
//
// It is a module of its own, outside the test suite (the peers come from
// npm): see docs/peers.md, or run `make peers`.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// page is one page the servers are measured on.
type page struct {
	name string
	path string // served at /<name>
	wrap string // a fragment is wrapped in a page with this title
}

// server is one MCP browser server under test: how to start it and which
// tools open a page and snapshot it.
type server struct {
	name     string
	cmd      func(cdp string) *exec.Cmd
	navigate func(url string) (string, map[string]any)
	snapshot func() (string, map[string]any)
}

func main() {
	repo := flag.String("repo", ".", "the browsergate repository")
	peers := flag.String("peers", ".peers", "directory the npm packages are installed in")
	runs := flag.Int("runs", 5, "timed runs per page and server (after one warm-up)")
	only := flag.String("pages", "", "comma-separated page names to measure (default: all)")
	dump := flag.String("dump", "", "write each snapshot to DIR/<server>-<page>.txt")
	scenario := flag.String("scenario", "snapshots", "snapshots: tokens and words of each snapshot; speed: cold starts, app flows, documentation pages and memory, each server with its own Chromium; load: many agents at once, each server in its multi-client mode; tools: what each server's tools list costs, in tokens")
	onlyServers := flag.String("servers", "", "-scenario speed and load: comma-separated servers to measure (default: browsergate, playwright-mcp, chrome-devtools-mcp and the floor "+floorName+", and for speed "+floorWaitsName+" too)")
	agents := flag.String("agents", "1,4,16,64", "-scenario load: comma-separated numbers of agents at once, a level each")
	duration := flag.Duration("duration", 30*time.Second, "-scenario load: how long the agents loop at each level, after their warm-up round")
	serveArgs := flag.String("serve-args", "", "-scenario load: more flags for browsergate serve, space-separated (\"--calls-at-once 8\")")
	devtools := flag.String("devtools", "isolated", "-scenario load: how Chrome DevTools MCP's processes (one per agent) get a browser: isolated (each launches its own) or shared (all attach to one the harness starts)")
	flag.Parse()
	log.SetFlags(0)
	// Every Chromium a run starts (the peers', the floors') makes its
	// singleton socket's directory in the temporary directory and leaves
	// it when it is stopped: a directory of the run's own, removed at its
	// end, takes them all. (Its path is short: a socket's path is at most
	// 107 bytes.)
	tmp, err := os.MkdirTemp("", "pb-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Setenv("TMPDIR", tmp)
	for _, dir := range []*string{peers, repo} {
		if abs, err := filepath.Abs(*dir); err == nil {
			*dir = abs // the servers run in .peers (Playwright MCP writes its logs to its working directory)
		}
	}

	pages := findPages(*repo)
	if *only != "" {
		pages = slices.DeleteFunc(pages, func(p page) bool { return !slices.Contains(strings.Split(*only, ","), p.name) })
	}
	if *scenario == "load" {
		levels, err := parseLevels(*agents)
		if err != nil {
			log.Fatal(err)
		}
		if *duration <= 0 {
			log.Fatalf("-duration %v: the agents need some time to loop", *duration)
		}
		if !slices.Contains(devtoolsModes, *devtools) {
			log.Fatalf("-devtools %q: want one of %s", *devtools, strings.Join(devtoolsModes, ", "))
		}
		var only []string
		if *onlyServers != "" {
			only = strings.Split(*onlyServers, ",")
		}
		runLoad(*repo, *peers, levels, *duration, pages, only, *devtools, strings.Fields(*serveArgs))
		return
	}
	if *scenario == "tools" {
		runTools(*repo, *peers)
		return
	}
	if *scenario == "speed" {
		var only []string
		if *onlyServers != "" {
			only = strings.Split(*onlyServers, ",")
		}
		runSpeed(*repo, *peers, *runs, pages, only)
		return
	}
	o200k, cl100k := encoding("o200k_base"), encoding("cl100k_base")
	site := serve(pages)
	chrome, port := launchChromium()
	defer chrome.Process.Kill()
	cdp := fmt.Sprintf("http://127.0.0.1:%d", port)
	bin := buildBrowsergate(*repo)
	manifest := writeManifest(os.TempDir())
	servers := []server{
		{
			name: "browsergate",
			cmd: func(string) *exec.Cmd {
				return exec.Command(bin, "serve", "--manifest", manifest, "--policies", filepath.Join(*repo, "policies"),
					"--evidence", filepath.Join(os.TempDir(), fmt.Sprintf("peerbench-%d.db", os.Getpid())), "--log-level", "error")
			},
			navigate: func(u string) (string, map[string]any) { return "bench.navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "bench.snapshot", map[string]any{"max_chars": 1000000} },
		},
		{
			name: "playwright-mcp",
			cmd: func(cdp string) *exec.Cmd {
				return exec.Command("node", filepath.Join(*peers, "node_modules/@playwright/mcp/cli.js"), "--cdp-endpoint", cdp)
			},
			navigate: func(u string) (string, map[string]any) { return "browser_navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "browser_snapshot", map[string]any{} },
		},
		{
			name: "chrome-devtools-mcp",
			cmd: func(cdp string) *exec.Cmd {
				return exec.Command("node", filepath.Join(*peers, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"), "--browserUrl", cdp,
					"--no-page-id-routing", "--no-usage-statistics", "--no-performance-crux")
			},
			navigate: func(u string) (string, map[string]any) { return "navigate_page", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "take_snapshot", map[string]any{} },
		},
	}
	texts := pageTexts(cdp, site, pages)
	words := map[string][]string{}
	for name, text := range texts {
		words[name] = distinctWords(text)
	}

	type result struct {
		tokens, cl100k, chars int
		present               float64
		nav, snap             time.Duration
		err                   error
	}
	results := map[string]map[string]result{}
	for _, s := range servers {
		results[s.name] = map[string]result{}
		cs, err := connect(s, cdp, *peers)
		if err != nil {
			log.Printf("%s: %v", s.name, err)
			continue
		}
		for _, p := range pages {
			u := site + "/" + p.name
			var navs, snaps []time.Duration
			var text string
			var rerr error
			for i := 0; i <= *runs && rerr == nil; i++ {
				t0 := time.Now()
				tool, args := s.navigate(u)
				if _, rerr = call(cs, tool, args); rerr != nil {
					break
				}
				t1 := time.Now()
				tool, args = s.snapshot()
				text, rerr = call(cs, tool, args)
				if i > 0 { // the first run warms up
					navs, snaps = append(navs, t1.Sub(t0)), append(snaps, time.Since(t1))
				}
			}
			if *dump != "" {
				_ = os.WriteFile(filepath.Join(*dump, s.name+"-"+p.name+".txt"), []byte(text), 0o644)
			}
			results[s.name][p.name] = result{tokens: len(o200k.Encode(text, nil, nil)), cl100k: len(cl100k.Encode(text, nil, nil)),
				chars: len(text), present: coverage(words[p.name], text), nav: median(navs), snap: median(snaps), err: rerr}
		}
		cs.Close()
	}

	// The page's visible text alone (innerText, no structure, no refs) is
	// the floor of any snapshot that keeps every word.
	fmt.Printf("| page | bytes | browsergate tokens | playwright-mcp tokens | chrome-devtools-mcp tokens | browsergate / better peer | page text alone / better peer | words present (bg / pw / cd) |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range pages {
		bg, pw, cd := results["browsergate"][p.name], results["playwright-mcp"][p.name], results["chrome-devtools-mcp"][p.name]
		info, _ := os.Stat(p.path)
		better := float64(min(nonzero(pw.tokens), nonzero(cd.tokens)))
		floor := len(o200k.Encode(texts[p.name], nil, nil))
		fmt.Printf("| %s | %d | %d | %d | %d | %.2f | %.2f (%d) | %.1f%% / %.1f%% / %.1f%% |\n", p.name, info.Size(), bg.tokens, pw.tokens, cd.tokens,
			float64(bg.tokens)/better, float64(floor)/better, floor, 100*bg.present, 100*pw.present, 100*cd.present)
	}
	fmt.Printf("\ncl100k_base tokens (browsergate / playwright-mcp / chrome-devtools-mcp):\n")
	for _, p := range pages {
		fmt.Printf("  %-22s %7d %7d %7d\n", p.name, results["browsergate"][p.name].cl100k, results["playwright-mcp"][p.name].cl100k, results["chrome-devtools-mcp"][p.name].cl100k)
	}
	fmt.Printf("\nmedian of %d runs, navigate + snapshot (ms):\n", *runs)
	for _, p := range pages {
		fmt.Printf("  %-22s", p.name)
		for _, s := range servers {
			r := results[s.name][p.name]
			if r.err != nil {
				fmt.Printf("  %s: error %v", s.name, r.err)
				continue
			}
			fmt.Printf("  %s %.0f + %.0f", s.name, ms(r.nav), ms(r.snap))
		}
		fmt.Println()
	}
}

func nonzero(n int) int {
	if n == 0 {
		return 1 << 30
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func encoding(name string) *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		log.Fatalf("tokenizer %s: %v", name, err)
	}
	return enc
}

// findPages are the measured pages: the Go specification and memory model
// (long reference pages, from GOROOT), real articles and reference pages
// saved in go-readability's test corpus (a module this repository already
// depends on), and a small page of our own with a form and a table.
func findPages(repo string) []page {
	goroot := strings.TrimSpace(output("go", "env", "GOROOT"))
	corpus := strings.TrimSpace(output("go", "list", "-C", repo, "-m", "-f", "{{.Dir}}", "codeberg.org/readeck/go-readability/v2"))
	var out []page
	add := func(name, path, wrap string) {
		if _, err := os.Stat(path); err != nil {
			log.Printf("skipping %s: %v", name, err)
			return
		}
		out = append(out, page{name: name, path: path, wrap: wrap})
	}
	add("go-spec", filepath.Join(repo, "cmd/peerbench/testdata/docs/go-spec.html"), "The Go Programming Language Specification")
	add("go-memory-model", filepath.Join(goroot, "doc/go_mem.html"), "The Go Memory Model")
	add("wikipedia-time-loops", filepath.Join(repo, "cmd/browsergate/testdata/docs/wikipedia-time-loops.html"), "")
	for _, name := range []string{"wikipedia", "mozilla-1", "lwn-1", "bbc-1", "ietf-1", "google-sre-book-1"} {
		add(name, filepath.Join(corpus, "test-pages", name, "source.html"), "")
	}
	add("form-and-table", filepath.Join(repo, "cmd/peerbench/testdata/form.html"), "")
	return out
}

// serve serves the pages on a loopback port.
func serve(pages []page) string {
	mux := http.NewServeMux()
	for _, p := range pages {
		mux.HandleFunc("/"+p.name, func(w http.ResponseWriter, r *http.Request) {
			b, err := os.ReadFile(p.path)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if p.wrap != "" {
				fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>\n", p.wrap)
			}
			w.Write(b)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, mux)
	return "http://" + ln.Addr().String()
}

// launchChromium starts the Chromium the peers attach to, with the flags
// this machine needs.
func launchChromium() (*exec.Cmd, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir, _ := os.MkdirTemp("", "peerbench-chromium-")
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+dir,
		fmt.Sprintf("--remote-debugging-port=%d", port), "--remote-debugging-address=127.0.0.1", "about:blank")
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/version", port)); err == nil {
			r.Body.Close()
			return cmd, port
		}
		time.Sleep(100 * time.Millisecond)
	}
	log.Fatal("chromium did not open its DevTools port")
	return nil, 0
}

func buildBrowsergate(repo string) string {
	bin := filepath.Join(os.TempDir(), "peerbench-browsergate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/browsergate")
	cmd.Dir, cmd.Stderr = repo, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("build browsergate: %v", err)
	}
	return bin
}

// writeManifest writes browsergate's manifest for the harness into dir:
// 127.0.0.1 allowed, navigate and snapshot declared, and the commands
// named in more.
func writeManifest(dir string, more ...string) string {
	path := filepath.Join(dir, "bench.toml")
	body := `[tool]
name = "bench"
[browser]
max_interactions = 100000
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`
	for _, c := range more {
		body += "[browser.commands." + c + "]\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		log.Fatal(err)
	}
	return path
}

func connect(s server, cdp, dir string) (*mcp.ClientSession, error) {
	cmd := s.cmd(cdp)
	cmd.Stderr = os.Stderr
	if cmd.Dir == "" {
		cmd.Dir = dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "peerbench", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
}

func call(cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
	}
	if res.IsError {
		return b.String(), fmt.Errorf("%s refused: %.300s", tool, b.String())
	}
	return b.String(), nil
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// pageTexts are each page's visible text (document.body.innerText in a
// plain tab of the same Chromium).
func pageTexts(cdp, site string, pages []page) map[string]string {
	alloc, cancel := remote.NewAllocator(context.Background(), cdp)
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	out := map[string]string{}
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(site+"/"+p.name)); err != nil {
			log.Fatalf("open %s: %v", p.name, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
		if err != nil {
			log.Fatalf("read %s: %v", p.name, err)
		}
		out[p.name] = text
	}
	return out
}

// distinctWords are the distinct words of text, sorted.
func distinctWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range wordRE.FindAllString(text, -1) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// coverage is the share of words that occur in text as words.
func coverage(words []string, text string) float64 {
	if len(words) == 0 {
		return 1
	}
	have := map[string]bool{}
	for _, w := range wordRE.FindAllString(text, -1) {
		have[w] = true
	}
	n := 0
	for _, w := range words {
		if have[w] {
			n++
		}
	}
	return float64(n) / float64(len(words))
}

func output(name string, args ...string) string {
	b, err := exec.Command(name, args...).Output()
	if err != nil {
		log.Fatalf("%s %v: %v", name, args, err)
	}
	return string(b)
}
