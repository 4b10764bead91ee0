package netlab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A process is a long-running program (socat, Chromium) a helper started
// inside a host, in a process group of its own.
type process struct {
	cmd  *exec.Cmd
	log  string        // the file its stdout and stderr go to
	done chan struct{} // closed once it has ended and been waited for
	err  error         // cmd.Wait's, once done is closed
}

// start starts name inside h, its output going to a file under
// t.TempDir(), and stops it when t ends: its group is killed, and t waits
// until no process of the group runs, so nothing writes into t's
// temporary directories after their removal (registered earlier, run
// later).
func (h *Host) start(t testing.TB, name string, args ...string) *process {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(name)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := h.Command(context.Background(), name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("netlab: start %s in %s: %v", name, h.name, err)
	}
	p := &process{cmd: cmd, log: log.Name(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			left := groupRunning(pgid)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("netlab: %s's processes %v in %s still run 10 s after SIGKILL", name, left, h.name)
				return
			}
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	return p
}

// ended says how the process ended and what it last wrote, for a failure
// message.
func (p *process) ended() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return fmt.Sprintf("%v; its output ends:\n%s", p.err, data)
}
