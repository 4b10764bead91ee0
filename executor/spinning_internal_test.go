package executor

import (
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/proctree"
)

// TestSpinWatchCountsBusyTicks: a renderer is due to be looked for once it
// used at least spinBusy of a core for spinTicks ticks in a row, not while
// it waits for its next look, and not after a tick below spinBusy; a
// process that is not a renderer never is, and a process id taken by a
// new process starts over.
func TestSpinWatchCountsBusyTicks(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	w := spinWatch{procs: map[int]*watchedProc{
		10: {start: 5, renderer: true, cpu: 0, at: t0},
		11: {start: 5, renderer: false, cpu: 0, at: t0},
	}}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	stat := func(cpu int64) proctree.Stat { return proctree.Stat{Start: 5, CPU: cpu} }
	steps := []struct {
		pid  int
		cpu  int64 // ticks used since t0
		sec  int
		want bool
	}{
		{10, 95, 1, false},  // one busy tick
		{10, 190, 2, true},  // two
		{11, 100, 1, false}, // not a renderer
		{11, 200, 2, false},
	}
	for _, s := range steps {
		if got := w.busy(s.pid, stat(s.cpu), at(s.sec)); got != s.want {
			t.Errorf("pid %d at %ds with %d ticks: due %v, want %v", s.pid, s.sec, s.cpu, got, s.want)
		}
	}
	w.procs[10].nextLook = at(5)
	if w.busy(10, stat(285), at(3)) {
		t.Error("due before its next look")
	}
	if w.busy(10, stat(300), at(4)) { // 15% of a core
		t.Error("due after an idle tick")
	}
	if w.busy(10, stat(395), at(5)) {
		t.Error("due after one busy tick since the idle one")
	}
	if !w.busy(10, stat(490), at(6)) {
		t.Error("not due after two busy ticks at its next look")
	}
	if w.busy(10, proctree.Stat{Start: 9, CPU: 600}, at(7)) || w.procs[10].start != 9 || w.procs[10].busy != 0 {
		t.Errorf("a new process with the same id: %+v", w.procs[10])
	}
}
