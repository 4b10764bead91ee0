package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The load scenario measures each server as a whole: every process it
// started (its Chromiums and their renderers, Chrome DevTools MCP's node
// processes) counts, found by walking /proc from the processes the harness
// started.

// procStat is what the load scenario reads of one process's
// /proc/PID/stat.
type procStat struct {
	pid, ppid int
	comm      string
	state     byte // R, S, D, Z …
	// cpu is the clock ticks the process spent (utime + stime) and those of
	// its children it has waited for (cutime + cstime): a renderer that
	// ended during a level still counts, in its parent's.
	cpu   int64
	own   int64 // utime + stime alone: the process's own threads
	start int64 // clock ticks after boot: tells a process from a later one with its pid
}

// parseProcStat reads one /proc/PID/stat line. The command name is in
// parentheses and may hold spaces and parentheses itself, so the fields
// are counted from the last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("no (command) in %.80q", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("pid %q: %v", strings.TrimSpace(line[:open]), err)
	}
	// After the command: state (field 3), ppid (4), … utime (14), stime
	// (15), cutime (16), cstime (17), … starttime (22).
	f := strings.Fields(line[end+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("process %d: %d fields after the command, want at least 20", pid, len(f))
	}
	num := func(field int) (int64, error) {
		v, err := strconv.ParseInt(f[field-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process %d: field %d: %v", pid, field, err)
		}
		return v, nil
	}
	s := procStat{pid: pid, comm: line[open+1 : end], state: f[0][0]}
	ppid, err := num(4)
	if err != nil {
		return procStat{}, err
	}
	s.ppid = int(ppid)
	for _, field := range []int{14, 15, 16, 17} {
		v, err := num(field)
		if err != nil {
			return procStat{}, err
		}
		s.cpu += v
		if field <= 15 {
			s.own += v
		}
	}
	if s.start, err = num(22); err != nil {
		return procStat{}, err
	}
	return s, nil
}

// allProcs reads every process's stat; one that ended meanwhile is left
// out.
func allProcs() map[int]procStat {
	out := map[int]procStat{}
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		if s, err := parseProcStat(string(data)); err == nil {
			out[s.pid] = s
		}
	}
	return out
}

// treeOf is roots and every process descended from one of them.
func treeOf(procs map[int]procStat, roots []int) []procStat {
	isRoot := map[int]bool{}
	for _, r := range roots {
		isRoot[r] = true
	}
	var out []procStat
	for pid, s := range procs {
		for q, hops := pid, 0; q > 1 && hops < 64; q, hops = procs[q].ppid, hops+1 {
			if isRoot[q] {
				out = append(out, s)
				break
			}
			if _, ok := procs[q]; !ok {
				break
			}
		}
	}
	return out
}

// treeSample is one look at a server's process tree.
type treeSample struct {
	pss       int64 // bytes, the sum of the processes' proportional set sizes
	cpu       int64 // clock ticks, as procStat.cpu, summed
	chromiums int   // processes of Chromium's binary (browsers, renderers, GPU, utilities, zygotes)
	browsers  int   // of which browser processes (no --type= switch)
	// mainThreads are the clock ticks of each browser process's main
	// thread (by pid and start time): the one thread on which Chromium
	// handles every DevTools command and event, every navigation and the
	// browser's compositing, for all the browser's contexts.
	mainThreads map[[2]int64]int64
}

func sampleTree(roots []int) treeSample {
	var t treeSample
	for _, s := range treeOf(allProcs(), roots) {
		t.pss += pss(s.pid)
		t.cpu += s.cpu
		if s.comm == "chromium" || s.comm == "chrome" {
			t.chromiums++
			// A renderer that is ending (a zombie, or one whose memory is
			// already gone) or just forked from the zygote has an empty
			// command line: it is not a browser.
			if args, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.pid)); err == nil && len(args) > 0 && !strings.Contains(string(args), "--type=") {
				t.browsers++
				if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", s.pid, s.pid)); err == nil {
					if m, err := parseProcStat(string(data)); err == nil {
						if t.mainThreads == nil {
							t.mainThreads = map[[2]int64]int64{}
						}
						t.mainThreads[[2]int64{int64(s.pid), s.start}] = m.own
					}
				}
			}
		}
	}
	return t
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux the harness runs on (it is fixed in the kernel's ABI
// for x86 and arm64).
const clockTicks = 100

// startedProcs are the processes the load scenario started and has not
// yet ended, so that Ctrl-C (or a harness error) ends them all.
var startedProcs = struct {
	sync.Mutex
	stops map[int]func()
}{stops: map[int]func(){}}

func registerStop(pid int, stop func()) {
	startedProcs.Lock()
	defer startedProcs.Unlock()
	startedProcs.stops[pid] = stop
}

func unregisterStop(pid int) {
	startedProcs.Lock()
	defer startedProcs.Unlock()
	delete(startedProcs.stops, pid)
}

// stopAll ends every process still registered.
func stopAll() {
	startedProcs.Lock()
	stops := make([]func(), 0, len(startedProcs.stops))
	for _, s := range startedProcs.stops {
		stops = append(stops, s)
	}
	startedProcs.Unlock()
	var wg sync.WaitGroup
	for _, s := range stops {
		wg.Go(s)
	}
	wg.Wait()
}

// endTree ends root and all its descendants: it notes the tree, has end
// end root (and wait for it), then kills whatever of the noted tree is
// still there — Chromiums a server leaves behind — told from later
// processes with their pids by their start times, and waits (up to 10 s)
// until they are gone, so that the next level starts on a quiet machine.
func endTree(root int, end func()) {
	tree := treeOf(allProcs(), []int{root})
	end()
	for range 100 {
		left := stillRunning(tree)
		if len(left) == 0 {
			return
		}
		for _, s := range left {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stillRunning are those of procs that still run: the same processes
// (their start times too), not yet ended (a zombie has ended; its parent
// has not yet waited for it).
func stillRunning(procs []procStat) []procStat {
	now := allProcs()
	var out []procStat
	for _, s := range procs {
		if n, ok := now[s.pid]; ok && n.start == s.start && n.state != 'Z' {
			out = append(out, s)
		}
	}
	return out
}

// proc is a server process the load scenario started itself.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	registerStop(cmd.Process.Pid, p.stop)
	return p, nil
}

// stop asks the process to end (SIGTERM), kills it after 15 s, and then
// every process it left.
func (p *proc) stop() {
	pid := p.cmd.Process.Pid
	endTree(pid, func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	unregisterStop(pid)
}

// exited says whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// busiestMainThread is the share of the window (ticks of wall time) that
// the busiest browser main thread present in both samples spent running
// between them: 1 is a thread that never rested, the most one thread can
// do whatever the machine's other cores are free to do.
func busiestMainThread(before, after treeSample, window int64) float64 {
	if window <= 0 {
		return 0
	}
	var most int64
	for k, end := range after.mainThreads {
		if start, ok := before.mainThreads[k]; ok {
			most = max(most, end-start)
		}
	}
	return float64(most) / float64(window)
}
