package sparetime

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/browsergate/browsergate/internal/proctree"
)

// TestLowerAndRaise: a process this test starts, at nice 3, runs on spare
// time once lowered, and under the normal policy at nice 3 once raised; a
// process id whose start does not match is not touched.
func TestLowerAndRaise(t *testing.T) {
	t.Parallel()
	if !Allowed() {
		t.Skip("this process may not give a thread its priority back (root, CAP_SYS_NICE or RLIMIT_NICE 20)")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	if err := unix.Setpriority(unix.PRIO_PROCESS, pid, 3); err != nil {
		t.Fatal(err)
	}
	st, ok := proctree.ReadStat(pid)
	if !ok {
		t.Fatal("no stat for the child")
	}
	if _, err := Lower(pid, st.Start+1); !errors.Is(err, ErrEnded) {
		t.Errorf("lowering with another start: %v, want ErrEnded", err)
	}
	if Idle(pid) {
		t.Fatal("the child runs on spare time before it was lowered")
	}
	l, err := Lower(pid, st.Start)
	if err != nil {
		t.Fatal(err)
	}
	if !Idle(pid) {
		t.Error("the child does not run on spare time once lowered")
	}
	if err := l.Raise(); err != nil {
		t.Fatal(err)
	}
	a, err := unix.SchedGetAttr(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Policy != unix.SCHED_NORMAL || a.Nice != 3 {
		t.Errorf("once raised: policy %d nice %d, want %d and 3", a.Policy, a.Nice, unix.SCHED_NORMAL)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := l.Raise(); !errors.Is(err, ErrEnded) {
		t.Errorf("raising a process that ended: %v, want ErrEnded", err)
	}
}

// TestRaiseLeavesWhatWasIdleBefore: of a process with several threads,
// one already on spare time before Lower stays there after Raise; the
// others are lowered and raised.
func TestRaiseLeavesWhatWasIdleBefore(t *testing.T) {
	t.Parallel()
	if !Allowed() {
		t.Skip("this process may not give a thread its priority back (CAP_SYS_NICE or RLIMIT_NICE 20)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsChild$")
	cmd.Env = append(os.Environ(), "SPARETIME_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	var tids []int
	for deadline := time.Now().Add(10 * time.Second); len(tids) < 4 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tids, _ = proctree.Threads(pid)
	}
	if len(tids) < 4 {
		t.Fatalf("the child has %d threads, want at least 4", len(tids))
	}
	var before int // a thread other than the main one
	for _, tid := range tids {
		if tid != pid {
			before = tid
			break
		}
	}
	a, err := unix.SchedGetAttr(before, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Policy = unix.SCHED_IDLE
	if err := unix.SchedSetAttr(before, a, 0); err != nil {
		t.Fatal(err)
	}
	st, _ := proctree.ReadStat(pid)
	l, err := Lower(pid, st.Start)
	if err != nil {
		t.Fatal(err)
	}
	policies := func() map[int]uint32 {
		out := map[int]uint32{}
		for _, tid := range tids {
			if a, err := unix.SchedGetAttr(tid, 0); err == nil {
				out[tid] = a.Policy
			}
		}
		return out
	}
	for tid, p := range policies() {
		if p != unix.SCHED_IDLE {
			t.Errorf("lowered: thread %d has policy %d", tid, p)
		}
	}
	if err := l.Raise(); err != nil {
		t.Fatal(err)
	}
	for tid, p := range policies() {
		want := uint32(unix.SCHED_NORMAL)
		if tid == before {
			want = unix.SCHED_IDLE
		}
		if p != want {
			t.Errorf("raised: thread %d has policy %d, want %d", tid, p, want)
		}
	}
}

// TestThreadsChild is the child of TestRaiseLeavesWhatWasIdleBefore: it
// holds three more threads of its own until it is killed.
func TestThreadsChild(t *testing.T) {
	if os.Getenv("SPARETIME_CHILD") != "1" {
		t.Skip("the child of TestRaiseLeavesWhatWasIdleBefore")
	}
	for range 3 {
		go func() {
			runtime.LockOSThread()
			select {}
		}()
	}
	time.Sleep(time.Minute)
}
