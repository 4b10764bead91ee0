package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/browsergate/browsergate/events"
)

// hookWait bounds one run of the approval hook.
const hookWait = 30 * time.Second

// runApprovalHook runs cmd (with /bin/sh -c) for each call held for a
// human, with the question as JSON on its stdin, until ctx ends: a pager,
// a chat message, a ticket. It runs beside the approval, never in its
// way: a hook that fails or hangs is logged and killed, and the call
// waits for its answer as before. The hook gets a bare environment (PATH,
// HOME, LANG): the daemon's may hold the manifests' secrets.
func runApprovalHook(ctx context.Context, hub *events.Hub, cmd string, logger *slog.Logger) {
	for ctx.Err() == nil {
		w := hub.Watch()
		stop := context.AfterFunc(ctx, w.Close)
		for e := range w.C {
			if e.Type != events.ApprovalAsked {
				continue
			}
			question, err := json.Marshal(e.Detail)
			if err != nil {
				continue
			}
			go hookOnce(ctx, cmd, e.Approval, question, logger)
		}
		stop()
		if !w.Dropped() {
			return
		}
		logger.Error("the approval hook fell behind the event stream: held calls may have gone without it", "hook", cmd)
	}
}

func hookOnce(ctx context.Context, cmd, id string, question []byte, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, hookWait)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	// The hook's whole process group goes at the time limit (a child
	// that kept its output open would keep Run waiting otherwise).
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	c.Stdin = bytes.NewReader(append(question, '\n'))
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=" + os.Getenv("LANG"), "BROWSERGATE_APPROVAL_ID=" + id}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		logger.Warn("the approval hook failed (the call still waits for its answer)", "id", id, "error", err.Error(), "output", clipText(out.String(), 2000))
		return
	}
	logger.Info("the approval hook ran", "id", id)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
