package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
)

// approvalsAnswerCommand answers a question an agent put to the operator
// (await_human). The answer is read from stdin unless given after the id,
// so that it need not be in the shell's history; a secret answer is only
// ever read from stdin.
var approvalsAnswerCommand = &command{
	name:     "approvals answer",
	synopsis: "ID [TEXT] --evidence FILE | --socket PATH [--secret] [--by NAME] [--note TEXT]",
	summary: "Answer a question an agent asked (await_human; see approvals list): the agent gets TEXT, or the answer\n" +
		"read from stdin (its first line) when TEXT is not given or is -. With --secret, or when the question\n" +
		"asks for a secret, the agent gets a placeholder to type instead of the answer, and the answer is\n" +
		"read from stdin only. To decline to answer, deny the question (approvals deny ID).",
	positional: 2,
	setup: func(fs *flag.FlagSet) action {
		socket := socketFlags(fs)
		secret := fs.Bool("secret", false, "keep the answer from the agent: it gets a placeholder to type (a one-time code, a password)")
		by := fs.String("by", currentUser(), "your `NAME`, recorded in the evidence with the answer")
		note := fs.String("note", "", "a note `TEXT` recorded with the answer")
		return func(args []string, stdout, stderr io.Writer) error {
			if len(args) == 0 {
				return fmt.Errorf("%w: approvals answer needs the id of a pending question (see approvals list)", errUsage)
			}
			id := args[0]
			c, err := approvalsClient(socket)
			if err != nil {
				return err
			}
			ctx := context.Background()
			req, err := pendingRequest(ctx, c, id)
			if err != nil {
				return err
			}
			keep := *secret || req.SecretAnswer
			var text string
			if len(args) == 2 && args[1] != "-" {
				if keep {
					return fmt.Errorf("%w: a secret answer is read from stdin, never from the command line (where the shell's history and ps would show it): pipe it in, or type it after `approvals answer %s`", errUsage, id)
				}
				text = args[1]
			} else {
				if text, err = readAnswer(os.Stdin, stderr, id, keep); err != nil {
					return err
				}
			}
			ans, err := c.AnswerQuestion(ctx, id, operator.Reply{Text: text, Secret: *secret, By: *by, Note: *note})
			if err != nil {
				return err
			}
			if keep {
				fmt.Fprintf(stdout, "%s: answered by %s; the answer is a secret: the agent gets a placeholder, never the answer\n", id, ans.By)
			} else {
				fmt.Fprintf(stdout, "%s: answered by %s\n", id, ans.By)
			}
			return nil
		}
	},
}

// pendingRequest is the pending question id: approvals answer says at once
// when the id is a held call (approve or deny it) or not pending at all.
func pendingRequest(ctx context.Context, c *operator.Client, id string) (approval.Request, error) {
	pending, err := c.List(ctx)
	if err != nil {
		return approval.Request{}, err
	}
	for _, p := range pending {
		if p.ID != id {
			continue
		}
		if !p.IsQuestion() {
			return p, fmt.Errorf("%w: %s is a call held for approval, not a question: approve or deny it", errUsage, id)
		}
		return p, nil
	}
	return approval.Request{}, fmt.Errorf("%w: %q (already answered, expired, or never asked; see approvals list)", operator.ErrNotPending, id)
}

// readAnswer reads the answer's first line from in (its line break
// dropped). On a terminal it asks for it on prompt first, and a secret
// answer is not shown as it is typed.
func readAnswer(in *os.File, prompt io.Writer, id string, secret bool) (string, error) {
	if fi, err := in.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		what := "answer"
		if secret {
			what = "secret answer (not shown as you type it)"
			restore := echoOff(in, prompt)
			defer restore()
		}
		fmt.Fprintf(prompt, "%s to %s: ", what, id)
	}
	line, err := bufio.NewReader(io.LimitReader(in, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the answer from stdin: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", fmt.Errorf("%w: no answer on stdin (give it on the first line; to decline the question, deny it)", errUsage)
	}
	return line, nil
}

// echoOff turns the terminal's echo off, so that a secret answer typed at
// the prompt is not shown, and returns what turns it back on (a line break
// on prompt, since the typed one was not shown). An interrupt while it is
// off turns it back on before the command exits. A terminal whose mode
// cannot be read is left as it is.
func echoOff(tty *os.File, prompt io.Writer) (restore func()) {
	fd := tty.Fd()
	var old syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&old))); errno != 0 {
		return func() {}
	}
	quiet := old
	quiet.Lflag &^= syscall.ECHO
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&quiet))); errno != 0 {
		return func() {}
	}
	var once sync.Once
	back := func() {
		once.Do(func() {
			syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&old)))
			fmt.Fprintln(prompt)
		})
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-interrupted:
			back()
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(interrupted)
		close(done)
		back()
	}
}
