// Package proctree reads a process tree from Linux's /proc: the processes
// that descend from one (a daemon and the Chromium it launched), and what
// each holds in memory. The benchmarks, the soak and the tests that count
// or weigh the browser's processes read it here.
package proctree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Descendants are the processes below pid (its children, theirs, …),
// read from /proc/*/stat; a process that ends while they are read is left
// out.
func Descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // ended meanwhile
		}
		if p, parent, ok := ParentOf(string(data)); ok {
			children[parent] = append(children[parent], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// ParentOf reads a process's id and its parent's from its /proc/PID/stat
// line: "pid (comm) state ppid …", where comm may hold spaces and
// parentheses, hence the last ")".
func ParentOf(stat string) (pid, parent int, ok bool) {
	end := strings.LastIndexByte(stat, ')')
	open := strings.IndexByte(stat, '(')
	if end < 0 || open < 0 {
		return 0, 0, false
	}
	rest := strings.Fields(stat[end+1:])
	if len(rest) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	pid, err1 = strconv.Atoi(strings.TrimSpace(stat[:open]))
	parent, err2 = strconv.Atoi(rest[1])
	return pid, parent, err1 == nil && err2 == nil
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
