// Package sparetime lets a process run on spare processor time only, and
// gives it back what it had: Linux's SCHED_IDLE policy on each of its
// threads, which the scheduler runs only when nothing else of the machine
// wants the core. The daemon lowers a renderer whose page keeps a core
// busy while its session waits for the agent (executor/spinning.go).
package sparetime

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/browsergate/browsergate/internal/proctree"
)

// Allowed reports whether this process may give another its priority
// back once lowered: Linux lets a thread leave SCHED_IDLE only with
// CAP_SYS_NICE (root has it) or an RLIMIT_NICE that allows nice 0 (20).
func Allowed() bool {
	if os.Geteuid() == 0 {
		return true
	}
	var r unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_NICE, &r) == nil && r.Cur >= 20
}

// Lowered is a process lowered by Lower: what each of its threads had.
type Lowered struct {
	PID     int
	start   uint64
	threads map[int]unix.SchedAttr
}

// ErrEnded is the error of a process that ended (or whose id another
// process took).
var ErrEnded = errors.New("the process ended")

// Lower lets each thread of process pid that runs under the normal policy
// (SCHED_OTHER) run on spare time only; start is when the process started
// (proctree.Stat.Start), so that a process id taken again is not lowered.
// A thread of another policy (real-time, batch) is left as it is.
func Lower(pid int, start uint64) (*Lowered, error) {
	tids, err := threadsOf(pid, start)
	if err != nil {
		return nil, err
	}
	l := &Lowered{PID: pid, start: start, threads: map[int]unix.SchedAttr{}}
	var failed error
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil || a.Policy != unix.SCHED_NORMAL {
			continue // ended meanwhile, or not one to change
		}
		idle := *a
		idle.Policy = unix.SCHED_IDLE
		if err := unix.SchedSetAttr(tid, &idle, 0); err != nil {
			failed = err
			continue
		}
		l.threads[tid] = *a
	}
	if len(l.threads) == 0 {
		return nil, fmt.Errorf("no thread of process %d could be lowered: %v", pid, failed)
	}
	return l, nil
}

// Raise gives each thread of the process what it had; a thread started
// since it was lowered (which began under SCHED_IDLE, like the thread that
// started it) runs under the normal policy again, at the nice value it
// has. A process that has ended is ErrEnded.
func (l *Lowered) Raise() error {
	tids, err := threadsOf(l.PID, l.start)
	if err != nil {
		return err
	}
	var failed error
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil || a.Policy != unix.SCHED_IDLE {
			continue
		}
		back, ok := l.threads[tid]
		if !ok {
			back = *a
			back.Policy = unix.SCHED_NORMAL
		}
		if err := unix.SchedSetAttr(tid, &back, 0); err != nil && failed == nil {
			failed = fmt.Errorf("thread %d of process %d: %w", tid, l.PID, err)
		}
	}
	return failed
}

// Idle reports whether process pid's main thread runs on spare time only.
func Idle(pid int) bool {
	a, err := unix.SchedGetAttr(pid, 0)
	return err == nil && a.Policy == unix.SCHED_IDLE
}

// threadsOf lists process pid's threads, if pid is still the process that
// started at start.
func threadsOf(pid int, start uint64) ([]int, error) {
	if st, ok := proctree.ReadStat(pid); !ok || st.Start != start {
		return nil, fmt.Errorf("process %d: %w", pid, ErrEnded)
	}
	tids, ok := proctree.Threads(pid)
	if !ok {
		return nil, fmt.Errorf("process %d: %w", pid, ErrEnded)
	}
	return tids, nil
}
