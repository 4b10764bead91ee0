// Package sparetime lets a process run on spare processor time only, and
// gives it back what it had: Linux's SCHED_IDLE policy on each of its
// threads, which the scheduler runs only when nothing else of the machine
// wants the core. The daemon lowers a renderer whose page keeps a core
// busy while its session waits for the agent (executor/spinning.go).
package sparetime

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/browsergate/browsergate/internal/proctree"
)

// Allowed reports whether this process may give another its priority
// back once lowered: Linux lets a thread leave SCHED_IDLE only if the
// process that asks has CAP_SYS_NICE in its effective set (root outside a
// container usually has; Docker's default set does not), or if the
// thread's RLIMIT_NICE allows nice 0 (20), which the browser's processes
// inherit from this one.
func Allowed() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) == nil && data[unix.CAP_SYS_NICE/32].Effective&(1<<(unix.CAP_SYS_NICE%32)) != 0 {
		return true
	}
	var r unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_NICE, &r) == nil && r.Cur >= 20
}

// Lowered is a process lowered by Lower.
type Lowered struct {
	PID   int // the process
	start uint64
	// seen are its threads when it was lowered, each with whether Lower
	// set it to SCHED_IDLE.
	seen map[int]bool
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
	l := &Lowered{PID: pid, start: start, seen: map[int]bool{}}
	lowered := 0
	var failed error
	for _, tid := range tids {
		l.seen[tid] = false
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil || a.Policy != unix.SCHED_NORMAL {
			continue // ended meanwhile, or not one to change
		}
		a.Policy = unix.SCHED_IDLE
		if err := unix.SchedSetAttr(tid, a, 0); err != nil {
			failed = err
			continue
		}
		l.seen[tid] = true
		lowered++
	}
	if lowered == 0 {
		return nil, fmt.Errorf("no thread of process %d could be lowered: %v", pid, failed)
	}
	return l, nil
}

// Raise puts back under the normal policy each thread Lower set to
// SCHED_IDLE, and each thread started since (which began under SCHED_IDLE
// like the thread that started it), at the nice value each has now (the
// browser may have changed it meanwhile); a thread that was SCHED_IDLE
// before is left so. A process that has ended is ErrEnded.
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
		if lowered, seen := l.seen[tid]; seen && !lowered {
			continue
		}
		a.Policy = unix.SCHED_NORMAL
		if err := unix.SchedSetAttr(tid, a, 0); err != nil && failed == nil {
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
