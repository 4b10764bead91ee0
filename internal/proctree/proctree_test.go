package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestReadings: a stat line whose command name holds spaces and
// parentheses gives its process, its parent, its processor time (user and
// kernel) and its start; smaps_rollup's Pss line is read in bytes.
func TestReadings(t *testing.T) {
	t.Parallel()
	pid, st, ok := StatOf("1234 (chromium (renderer) x) S 1200 1234 1200 0 -1 4194560 100 0 0 0 150 30 0 0 20 0 12 0 5000 1000 200")
	if want := (Stat{Parent: 1200, CPU: 180, Start: 5000}); !ok || pid != 1234 || st != want {
		t.Errorf("StatOf: %d %+v %v, want 1234 %+v", pid, st, ok, want)
	}
	if _, _, ok := StatOf("garbage"); ok {
		t.Error("StatOf took a line without a command name")
	}
	if _, _, ok := StatOf("1234 (x) S 1200 1234"); ok {
		t.Error("StatOf took a line cut short")
	}
	v, err := PSSOf("55d0-7ffd ---p 00000000 00:00 0  [rollup]\nRss:              204800 kB\nPss:              102400 kB\nPss_Anon:          90000 kB\n")
	if err != nil || v != 100<<20 {
		t.Errorf("PSSOf: %d %v, want %d", v, err, 100<<20)
	}
	if _, err := PSSOf("Rss: 1 kB\n"); err == nil {
		t.Error("PSSOf took a rollup without Pss")
	}
}

// TestDescendantsFindsAGrandchild: a shell this test starts, and the
// sleep the shell starts, are below this process; this process is not.
func TestDescendantsFindsAGrandchild(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var sleepPID int
	if _, err := fmt.Fscan(out, &sleepPID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(sleepPID); err == nil {
			p.Kill()
		}
	})
	below := Descendants(os.Getpid())
	if !slices.Contains(below, cmd.Process.Pid) || !slices.Contains(below, sleepPID) || slices.Contains(below, os.Getpid()) {
		t.Errorf("Descendants(%d) = %v; want the shell %d and its sleep %d, not itself", os.Getpid(), below, cmd.Process.Pid, sleepPID)
	}
	if n, err := PSS(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("PSS of this process: %d, %v", n, err)
	}
}

// TestMappingPSSOf: only the mappings of the named file count, each
// mapping's Pss once, whatever the other mappings and fields around them.
func TestMappingPSSOf(t *testing.T) {
	t.Parallel()
	smaps := `55d0a000-55d0b000 r-xp 00000000 08:01 100  /usr/bin/browsergate
Size:                  4 kB
Pss:                 400 kB
7f00000-7f10000 r--s 00000000 08:01 200  /tmp/soak dir/evidence.db
Size:                 64 kB
Rss:                  64 kB
Pss:                  64 kB
Pss_File:             64 kB
7f20000-7f30000 rw-p 00000000 00:00 0 
Pss:                1000 kB
7f40000-7f50000 r--s 00010000 08:01 200  /tmp/soak dir/evidence.db
Pss:                  16 kB
7f60000-7f70000 r--s 00000000 08:01 300  /tmp/soak dir/evidence.db.old
Pss:                 128 kB
`
	got, err := MappingPSSOf(smaps, "/tmp/soak dir/evidence.db")
	if err != nil {
		t.Fatal(err)
	}
	if got != 80<<10 {
		t.Errorf("MappingPSSOf = %d KiB, want 80 (64 + 16: the two mappings of the file, and no other's)", got>>10)
	}
	if got, _ := MappingPSSOf(smaps, "/nowhere"); got != 0 {
		t.Errorf("a file not mapped: %d bytes, want 0", got)
	}
}

// TestRunnableAndChromiumType: a shell that never yields is runnable
// about all the time it has lived, and a process started with
// --type=renderer among its arguments is read as a renderer.
func TestRunnableAndChromiumType(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", "while :; do :; done", "--type=renderer")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	// Start returns once the child is forked, maybe before it has exec'd
	// sh (its command line is the test's until then).
	got := ChromiumType(pid)
	for deadline := time.Now().Add(5 * time.Second); got != "renderer" && time.Now().Before(deadline); got = ChromiumType(pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if got != "renderer" {
		t.Errorf("ChromiumType: %q, want renderer", got)
	}
	if got := ChromiumType(os.Getpid()); got != "" {
		t.Errorf("ChromiumType of the test: %q, want none", got)
	}
	r0, ok := Runnable(pid)
	t0 := time.Now()
	time.Sleep(500 * time.Millisecond)
	r1, ok1 := Runnable(pid)
	wall := time.Since(t0)
	if !ok || !ok1 || r1-r0 < wall*8/10 {
		t.Errorf("runnable %v of %v (ok %v %v), want about all of it", r1-r0, wall, ok, ok1)
	}
}
