package executor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
)

// TestEndByOperator: an operator ends an open session; its end is
// recorded (session_end, rule "ended by the operator", the operator
// named); every later call of its MCP session is refused saying so and
// records nothing, while another MCP session's calls run; a session
// that is not open cannot be ended; once the MCP session itself ends,
// what was kept of the operator's end is let go.
func TestEndByOperator(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	if r := h.call(t, "s1", "snapshot", nil); r.IsError {
		t.Fatal(r.Text)
	}
	recs := h.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	id := recs[0].Session
	if err := h.ex.EndByOperator(id, "olga", "console"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := h.call(t, "s1", "snapshot", nil)
		if !r.IsError || !strings.Contains(r.Text, "session "+id+" was ended by the operator olga (console)") || !strings.Contains(r.Text, "nothing was done") {
			t.Errorf("call %d after the operator ended the session: %+v", i+1, r)
		}
	}
	if r := h.call(t, "s2", "snapshot", nil); r.IsError {
		t.Errorf("another MCP session's call: %s", r.Text)
	}
	if err := h.ex.EndByOperator(id, "olga", "console"); !errors.Is(err, executor.ErrSessionNotOpen) {
		t.Errorf("ending it again: %v, want ErrSessionNotOpen", err)
	}
	var ends []*evidence.Envelope
	for _, e := range h.records(t) {
		if e.Session == id && e.Kind == evidence.KindSessionEnd {
			ends = append(ends, e)
		}
	}
	if len(ends) != 1 || ends[0].Decision.Allowed || ends[0].Decision.Stage != evidence.StageLimits || ends[0].Decision.Rule != executor.RuleEndedByOperator ||
		!strings.Contains(strings.Join(ends[0].Decision.Reasons, " "), "the operator olga ended the session (console)") {
		t.Errorf("the record of the end: %+v", ends)
	}
	if n := len(h.records(t)); n != 3 {
		t.Errorf("%d records, want 3 (the call, the end, the other session's call): the refused calls are not recorded", n)
	}
	h.ex.EndSession("s1")
	if r := h.call(t, "s1", "snapshot", nil); r.IsError {
		t.Errorf("a call with the id of the MCP session after it ended: %s", r.Text)
	}
}
