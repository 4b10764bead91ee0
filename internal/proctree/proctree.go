// Package proctree reads a process tree from Linux's /proc: the processes
// that descend from one (a daemon and the Chromium it launched), the
// processor time each used, and what each holds in memory. The
// benchmarks, the soak and the tests that count or weigh the browser's
// processes read it here, and so does the daemon's watch on renderers
// that keep a core busy (executor/spinning.go).
package proctree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Descendants are the processes below pid (its children, theirs, …),
// read from /proc/*/stat; a process that ends while they are read is left
// out.
func Descendants(pid int) []int { return DescendantsIn(Stats(), pid) }

// DescendantsIn are the processes below pid in stats.
func DescendantsIn(stats map[int]Stat, pid int) []int {
	children := map[int][]int{}
	for p, st := range stats {
		children[st.Parent] = append(children[st.Parent], p)
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// ClockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's CPU times:
// 100 on every architecture Linux runs Chromium on.
const ClockTicks = 100

// Stat is what is read of a process's /proc/PID/stat.
type Stat struct {
	Parent int
	// CPU is the processor time its threads used, in user and kernel
	// mode, in clock ticks (ClockTicks a second).
	CPU int64
	// Start is when it started, in clock ticks after boot: a process id
	// taken again is another process.
	Start uint64
}

// Stats reads every process's stat; a process that ends meanwhile is left
// out.
func Stats() map[int]Stat {
	out := map[int]Stat{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, ok := ReadStat(pid); ok {
			out[pid] = st
		}
	}
	return out
}

// ReadStat reads process pid's stat (false: it has ended).
func ReadStat(pid int) (Stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	_, st, ok := StatOf(string(data))
	return st, ok
}

// StatOf reads a /proc/PID/stat line: "pid (comm) state ppid …", where
// comm may hold spaces and parentheses, hence the last ")"; after comm,
// ppid is the 2nd field, utime and stime the 12th and 13th, starttime the
// 20th.
func StatOf(stat string) (pid int, st Stat, ok bool) {
	end := strings.LastIndexByte(stat, ')')
	open := strings.IndexByte(stat, '(')
	if end < 0 || open < 0 || open > end {
		return 0, Stat{}, false
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 20 {
		return 0, Stat{}, false
	}
	var err error
	if pid, err = strconv.Atoi(strings.TrimSpace(stat[:open])); err != nil {
		return 0, Stat{}, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	parent, err4 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return 0, Stat{}, false
	}
	return pid, Stat{Parent: parent, CPU: utime + stime, Start: start}, true
}

// Runnable is how long process pid's main thread has been running or
// waiting to run, from /proc/PID/schedstat (false: it has ended): a
// thread that never yields is runnable all the time, however little of a
// core it gets.
func Runnable(pid int) (time.Duration, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(run + wait), true
}

// ChromiumType is the --type= a Chromium process was started with
// (renderer, gpu-process, utility, zygote; "" for the browser process, or
// a process that is not Chromium's). Chromium rewrites a child's command
// line with spaces between the arguments; a child just forked reads as
// its zygote until it has.
func ChromiumType(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	for _, arg := range strings.FieldsFunc(string(data), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(arg, "--type="); ok {
			return v
		}
	}
	return ""
}

// Threads are process pid's threads (false: it has ended).
func Threads(pid int) ([]int, bool) {
	dirs, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, false
	}
	var out []int
	for _, d := range dirs {
		if tid, err := strconv.Atoi(d.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, true
}

// PSS is a process's proportional set size in bytes (its share of every
// page it maps), from /proc/PID/smaps_rollup. The error is an
// *fs.PathError when the process has ended.
func PSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	return PSSOf(string(data))
}

// PSSOf reads the Pss line of a smaps_rollup, in bytes.
func PSSOf(rollup string) (int64, error) {
	for _, line := range strings.Split(rollup, "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("smaps_rollup: %q: %v", line, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("smaps_rollup: no Pss line")
}

// MappingPSS is the part of a process's proportional set size that is its
// mappings of the file at path (bbolt maps its whole database file, so a
// daemon's PSS grows with its evidence file by design), from
// /proc/PID/smaps. The error is an *fs.PathError when the process has
// ended.
func MappingPSS(pid int, path string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	return MappingPSSOf(string(data), path)
}

// MappingPSSOf sums the Pss lines of the mappings of path in an smaps
// listing: each mapping is a header line (address range, permissions,
// offset, device, inode, then the path) followed by its fields.
func MappingPSSOf(smaps, path string) (int64, error) {
	var total int64
	in := false
	for _, line := range strings.Split(smaps, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			// A mapping's header: its path is what follows the inode, and
			// may hold spaces.
			in = len(f) >= 6 && strings.Join(f[5:], " ") == path
			continue
		}
		if v, ok := strings.CutPrefix(line, "Pss:"); ok && in {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("smaps: %q: %v", line, err)
			}
			total += kib << 10
		}
	}
	return total, nil
}
