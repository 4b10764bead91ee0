package sparetime

import (
	"errors"
	"os/exec"
	"testing"

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
