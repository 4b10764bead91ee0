package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

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
