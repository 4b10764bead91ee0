package executor

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/proctree"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkSessionMemory measures what the launched browser's process
// layout costs in memory, and that the memory was not bought with speed.
// Each sub-benchmark launches a browser as serve does and reports the
// proportional set size of the browser and every process it started
// (PSS, so that pages shared between Chromium's processes count once):
//
//   - idle-MiB: the browser started, no session;
//   - 1-session-MiB: one session, its browser context and a tab with the
//     Go memory model (or BROWSERGATE_BENCH_PAGE) loaded;
//   - MiB/session: what each of four more such sessions adds;
//   - processes: the browser's processes with five sessions;
//
// and, as its time per op, a navigate + snapshot of that page through the
// whole loop in one of the sessions.
//
// The sub-benchmarks are the layouts: "chromium" is what a manifest
// without executable_path launches (/usr/bin/chromium, headless),
// "headless-shell" Debian's chromium-headless-shell with the same switches
// (skipped when it is not installed; see docs/performance.md for why it is
// not the default). BROWSERGATE_BENCH_FLAGS adds switches to both, to
// measure one before choosing it, and BROWSERGATE_BENCH_PAGE names another
// page of GOROOT/doc to load (go_spec.html, the long page of make
// bench-peers' peak), e.g.
//
//	BROWSERGATE_BENCH_FLAGS='no-zygote renderer-process-limit=2' go test ./executor -run '^$' -bench SessionMemory -benchtime 10x
//	BROWSERGATE_BENCH_PAGE=go_spec.html go test ./executor -run '^$' -bench SessionMemory -benchtime 5x
func BenchmarkSessionMemory(b *testing.B) {
	name := cmp.Or(os.Getenv("BROWSERGATE_BENCH_PAGE"), "go_mem.html")
	page, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", filepath.Base(name)))
	if err != nil {
		b.Skip("no such page in GOROOT/doc:", err)
	}
	page = append([]byte("<!doctype html><title>"+name+"</title>"), page...)
	extra := benchFlags(os.Getenv("BROWSERGATE_BENCH_FLAGS"))
	if len(extra) > 0 {
		saved := launchFlags
		launchFlags = append(launchFlags[:len(launchFlags):len(launchFlags)], extra...)
		b.Cleanup(func() { launchFlags = saved })
	}
	layouts := []struct{ name, executable string }{
		{"chromium", ""},
		{"headless-shell", headlessShell},
	}
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			if l.executable != "" {
				if _, err := os.Stat(l.executable); err != nil {
					b.Skip(err)
				}
			}
			rig := newLayoutRig(b, page, l.executable)
			e := rig.newExecutor()
			defer e.Close()
			e.mu.Lock()
			bk := e.backendLocked(rig.m)
			e.mu.Unlock()
			if err := bk.warm(); err != nil {
				b.Fatal(err)
			}
			pid := launchedPID(b, bk)
			open := func(session string) {
				rig.call(b, e, session, "navigate", map[string]any{"url": rig.url})
				rig.call(b, e, session, "snapshot", map[string]any{"max_chars": int64(1000000)})
			}
			idle := settledTree(pid)
			open("s0")
			one := settledTree(pid)
			const more = 4
			for i := 1; i <= more; i++ {
				open(fmt.Sprintf("s%d", i))
			}
			five := settledTree(pid)
			b.Logf("idle: %v", idle)
			b.Logf("1 session: %v", one)
			b.Logf("%d sessions: %v", 1+more, five)
			b.ResetTimer()
			for b.Loop() {
				open("s0")
			}
			b.StopTimer()
			const mib = 1 << 20
			b.ReportMetric(float64(idle.pss())/mib, "idle-MiB")
			b.ReportMetric(float64(one.pss())/mib, "1-session-MiB")
			b.ReportMetric(float64(five.pss()-one.pss())/more/mib, "MiB/session")
			b.ReportMetric(float64(len(five)), "processes")
		})
	}
}

// headlessShell is Debian's chromium-headless-shell: the same Chromium
// build as the old headless implementation, with no browser UI. The binary
// itself, not /usr/bin's wrapper, a shell script that runs the browser as
// its child without exec (the process the daemon started and stops would
// be the shell).
const headlessShell = "/usr/lib/chromium/chromium-headless-shell"

// benchFlags reads BROWSERGATE_BENCH_FLAGS: switches without their
// leading dashes, separated by spaces, each a name or name=value.
func benchFlags(s string) []chromedp.ExecAllocatorOption {
	var opts []chromedp.ExecAllocatorOption
	for _, f := range strings.Fields(s) {
		f = strings.TrimLeft(f, "-")
		if name, value, ok := strings.Cut(f, "="); ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(f, true))
		}
	}
	return opts
}

// newLayoutRig is a bench rig whose manifest launches executable (none:
// the default).
func newLayoutRig(b *testing.B, page []byte, executable string) *benchRig {
	site := serveLoopback(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	dir := b.TempDir()
	exe := ""
	if executable != "" {
		exe = "executable_path = " + strconv.Quote(executable) + "\n"
	}
	m, err := toolclad.Load(testkit.WriteFile(b, dir, "m.toml", `[tool]
name = "bench"
[browser]
max_interactions = 100000
`+exe+`[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`))
	if err != nil {
		b.Fatal(err)
	}
	store, err := evidence.Open(filepath.Join(dir, "e.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return &benchRig{url: site + "/", m: m, store: store, b: b}
}

// launchedPID is the process id of bk's launched browser.
func launchedPID(b *testing.B, bk *backend) int {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	c := chromedp.FromContext(bk.root)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		b.Fatal("no launched browser process")
	}
	return c.Browser.Process().Pid
}

// settledTree is browserTree once the browser has had a few seconds to
// finish what a page's load left it doing (a renderer's first collection,
// processes that start after the load).
func settledTree(pid int) processTree {
	time.Sleep(3 * time.Second)
	return browserTree(pid)
}

// processTree is a process and every process under it, by kind: Chromium's
// --type switch ("renderer", "gpu-process", "utility" with its
// --utility-sub-type, "zygote"), "browser" for the process without one.
type processTree []treeProcess

type treeProcess struct {
	pid  int
	kind string
	pss  int64 // proportional set size, bytes
}

// pss is the tree's proportional set size, in bytes.
func (t processTree) pss() int64 {
	var n int64
	for _, p := range t {
		n += p.pss
	}
	return n
}

// String is the tree's PSS by kind of process, in MiB, for the log.
func (t processTree) String() string {
	byKind := map[string]int64{}
	count := map[string]int{}
	for _, p := range t {
		byKind[p.kind] += p.pss
		count[p.kind]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		parts = append(parts, fmt.Sprintf("%s ×%d %.1f", k, count[k], float64(byKind[k])/(1<<20)))
	}
	return fmt.Sprintf("%.1f MiB in %d processes: %s", float64(t.pss())/(1<<20), len(t), strings.Join(parts, ", "))
}

// browserTree reads process pid and every process under it from /proc.
func browserTree(pid int) processTree {
	var tree processTree
	for _, p := range append(proctree.Descendants(pid), pid) {
		n, _ := proctree.PSS(p) // 0 when it has ended
		tree = append(tree, treeProcess{pid: p, kind: processKind(p), pss: n})
	}
	return tree
}

// processKind is the kind of Chromium process pid is, from its command
// line. Chromium's child processes rewrite theirs as one string of
// arguments separated by spaces, not NULs.
func processKind(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	kind, sub := "browser", ""
	for _, arg := range strings.FieldsFunc(string(data), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(arg, "--type="); ok {
			kind = v
		}
		if v, ok := strings.CutPrefix(arg, "--utility-sub-type="); ok {
			sub = v
		}
	}
	if sub != "" {
		kind += " " + sub
	}
	return kind
}
