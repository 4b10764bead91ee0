package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine is what a figure was measured on.
type machine struct {
	cores    int
	memGiB   float64
	software []string // "Chromium 156.0.8078.108", …
	commit   string
	// load is the load average (1 minute) when the run began.
	load string
}

// describeMachine reads the cores, the memory and the versions of the
// programs the benchmarks start.
func describeMachine() machine {
	m := machine{cores: runtime.NumCPU(), memGiB: memTotalGiB(), load: loadAverage()}
	for _, v := range []struct {
		name string
		args []string
		pick func(string) string
	}{
		{"Chromium", []string{"/usr/bin/chromium", "--version"}, func(s string) string { return word(s, 1) }},
		{"HAProxy", []string{"/usr/sbin/haproxy", "-v"}, func(s string) string { v, _, _ := strings.Cut(word(s, 2), "-"); return v }},
		{"PostgreSQL", []string{postgres(), "--version"}, func(s string) string { return word(s, 2) }},
	} {
		out, err := exec.Command(v.args[0], v.args[1:]...).Output()
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if ver := v.pick(first); ver != "" {
			m.software = append(m.software, v.name+" "+ver)
		}
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.commit = strings.TrimSpace(string(out))
		if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
			m.commit += " with changes"
		}
	}
	return m
}

// heading is the line above the table: when and on what it was measured,
// and how busy the machine was at the start and at the end (the load
// average, which counts other work on a shared machine).
func (m machine) heading(start, end time.Time) string {
	s := fmt.Sprintf("Measured %s–%s on %d cores, %.1f GiB", start.UTC().Format("2006-01-02 15:04"), end.UTC().Format("15:04 MST"), m.cores, m.memGiB)
	if len(m.software) > 0 {
		s += ", " + strings.Join(m.software, ", ")
	}
	if m.commit != "" {
		s += "; commit " + m.commit
	}
	if m.load != "" {
		s += fmt.Sprintf("; load average %s at the start, %s at the end", m.load, loadAverage())
	}
	return s + "."
}

// loadAverage is the 1-minute load average of /proc/loadavg ("" if
// unreadable).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return word(string(b), 0)
}

// memTotalGiB is MemTotal of /proc/meminfo in GiB (0 if unreadable).
func memTotalGiB() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseFloat(word(rest, 0), 64)
			return kb / (1 << 20)
		}
	}
	return 0
}

// postgres is the newest installed PostgreSQL server program, as pglab
// picks it.
func postgres() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	best, bestV := "postgres", -1
	for _, d := range dirs {
		if v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d)))); v > bestV {
			best, bestV = d, v
		}
	}
	return best
}

// word is the i-th space-separated word of s ("" if it has fewer).
func word(s string, i int) string {
	f := strings.Fields(s)
	if i < len(f) {
		return f[i]
	}
	return ""
}
