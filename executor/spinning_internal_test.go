package executor

import (
	"testing"
	"time"
)

// TestSpinWatchCountsBusyTicks: a renderer is due to be looked for once
// its main thread was runnable at least spinBusy of the time for
// spinBusyTicks ticks in a row (over however long each tick took), not
// before its next look, and not after a tick below spinBusy; a process
// that is not a renderer never is, and a process id taken by a new
// process starts over.
func TestSpinWatchCountsBusyTicks(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	w := spinWatch{procs: map[int]*watchedProc{}}
	renderer := func() string { return "renderer" }
	gpu := func() string { return "gpu-process" }
	steps := []struct {
		pid      int
		kind     func() string
		runnable time.Duration
		sec      int
		want     bool
	}{
		{10, renderer, 0, 0, false},        // first seen
		{10, renderer, ms(950), 1, false},  // one busy tick
		{10, renderer, ms(1900), 2, true},  // two
		{11, gpu, 0, 0, false},             // not a renderer
		{11, gpu, ms(1000), 1, false},      //
		{11, gpu, ms(2000), 2, false},      //
		{12, renderer, 0, 0, false},        //
		{12, renderer, ms(1000), 2, false}, // half of a 2 s tick
		{12, renderer, ms(2900), 4, false}, // 95% of a 2 s tick: one busy tick
		{12, renderer, ms(3850), 5, true},  // two
	}
	for _, s := range steps {
		if got := w.note(s.pid, 5, s.runnable, at(s.sec), s.kind); got != s.want {
			t.Errorf("pid %d at %ds, runnable %v: due %v, want %v", s.pid, s.sec, s.runnable, got, s.want)
		}
	}
	w.procs[10].nextLook = at(5)
	if w.note(10, 5, ms(2850), at(3), renderer) {
		t.Error("due before its next look")
	}
	if w.note(10, 5, ms(3000), at(4), renderer) { // 15% of the tick
		t.Error("due after an idle tick")
	}
	if w.note(10, 5, ms(3950), at(5), renderer) {
		t.Error("due after one busy tick since the idle one")
	}
	if !w.note(10, 5, ms(4900), at(6), renderer) {
		t.Error("not due after two busy ticks at its next look")
	}
	if w.note(10, 9, ms(100), at(7), renderer) || w.procs[10].start != 9 || w.procs[10].busy != 0 {
		t.Errorf("a new process with the same id: %+v", w.procs[10])
	}
}
