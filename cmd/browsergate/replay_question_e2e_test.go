package main

import (
	"strings"
	"testing"
)

// TestReplaySaysHowLongAQuestionWaits: replaying a session that asked the
// operator a question (await_human) prints, before that step waits, how
// long it will wait and that replay answers no question, instead of
// sitting silent for the whole timeout.
func TestReplaySaysHowLongAQuestionWaits(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(questionManifest, "%s", "", 1))
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})
	h := f.callAsync(t, "e2e.await_human", map[string]any{"question": "anyone there?", "timeout_seconds": 5})
	f.pendingID(t, h)
	if text, refused := h.wait(t); !refused || !strings.Contains(text, "nobody answered") {
		t.Fatalf("the recorded question was answered:\n%s", text)
	}
	f.cs.Close()
	sessions, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	id := strings.Fields(strings.TrimPrefix(sessions, "session "))[0]

	out, _ := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	const want = "#2 await_human: waits up to 5s for an answer, as recorded (replay does not answer questions)\n"
	before, after, ok := strings.Cut(out, want)
	if !ok {
		t.Fatalf("the replay does not say how long the question waits (%q):\n%s", want, out)
	}
	if strings.Contains(before, "#2   await_human") || !strings.Contains(after, "#2   await_human") {
		t.Errorf("the line is not printed before the step it is about:\n%s", out)
	}
	if strings.Contains(out, "a human approved") {
		t.Errorf("a session nobody approved anything in is said to have approved steps:\n%s", out)
	}
}
