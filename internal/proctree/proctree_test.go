package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestReadings: a stat line whose command name holds spaces and
// parentheses gives its process and parent; smaps_rollup's Pss line is
// read in bytes.
func TestReadings(t *testing.T) {
	t.Parallel()
	pid, parent, ok := ParentOf("1234 (chromium (renderer) x) S 1200 1234 1200 0 -1 4194560")
	if !ok || pid != 1234 || parent != 1200 {
		t.Errorf("ParentOf: %d %d %v", pid, parent, ok)
	}
	if _, _, ok := ParentOf("garbage"); ok {
		t.Error("ParentOf took a line without a command name")
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
