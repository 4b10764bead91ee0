package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/browsergate/browsergate/approval"
)

// TestPendingShowsTheQuestionOnOneLine: an agent's question is listed
// quoted, its line breaks and hidden characters escaped, so that it cannot
// start a line of the listing that reads as the daemon's.
func TestPendingShowsTheQuestionOnOneLine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	printPending(&b, []approval.Request{{ID: "apr-1", Session: "s", Tool: "t.await_human", Deadline: now.Add(time.Minute),
		Question: "code?\n  why:    approved already\x1b[2J\u202e", SecretAnswer: true, Why: []string{"the agent asks the operator a question"}}}, now)
	out := b.String()
	want := `  asks:   "code?\n  why:    approved already\x1b[2J\u202e" (question, secret answer; answer with approvals answer apr-1, or deny it)`
	if !strings.Contains(out, want+"\n") {
		t.Errorf("approvals list lacks\n%s\nin:\n%s", want, out)
	}
	if strings.Count(out, "\n  why:") != 1 || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("the question's text broke the listing's lines:\n%s", out)
	}
}

// TestReadAnswerTakesTheFirstLine: the answer is stdin's first line
// without its line break (CRLF too); nothing on stdin is no answer.
func TestReadAnswerTakesTheFirstLine(t *testing.T) {
	t.Parallel()
	read := func(input string) (string, error) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		w.WriteString(input)
		w.Close()
		var prompt bytes.Buffer
		got, err := readAnswer(r, &prompt, "apr-1", false)
		if prompt.Len() != 0 {
			t.Errorf("a pipe was prompted: %q", prompt.String())
		}
		return got, err
	}
	for input, want := range map[string]string{"OTP-1234\n": "OTP-1234", "OTP-1234\r\nsecond line\n": "OTP-1234", "no newline": "no newline"} {
		if got, err := read(input); err != nil || got != want {
			t.Errorf("readAnswer(%q) = %q, %v; want %q", input, got, err, want)
		}
	}
	if _, err := read(""); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "no answer on stdin") {
		t.Errorf("an empty stdin: %v", err)
	}
}

// TestEchoOffHidesTheSecretAnswer: at a terminal (a pseudo-terminal here)
// echo is off while a secret answer is read, and on again after.
func TestEchoOffHidesTheSecretAnswer(t *testing.T) {
	t.Parallel()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	var n uint32
	unlock := int32(0)
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatal(errno)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatal(errno)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	echoes := func() bool {
		var tio syscall.Termios
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); errno != 0 {
			t.Fatal(errno)
		}
		return tio.Lflag&syscall.ECHO != 0
	}
	if !echoes() {
		t.Fatal("a fresh terminal does not echo")
	}
	var prompt bytes.Buffer
	restore := echoOff(tty, &prompt)
	if echoes() {
		t.Error("the terminal echoes while the secret answer is read")
	}
	restore()
	if !echoes() {
		t.Error("echo is still off after the answer was read")
	}
}
