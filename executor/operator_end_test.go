package executor_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
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

// TestEndByOperatorStopsACallStillDeciding: the operator ends a session
// while its call holds the session's lock and has not yet been held for a
// human (it is still deciding). The end is sticky: the call holds nothing
// for a human, an approval given on another channel meanwhile could not
// let it act, nothing is clicked, the call is recorded as refused because
// the operator ended the session, and the session's end is recorded after
// it.
func TestEndByOperatorStopsACallStillDeciding(t *testing.T) {
	t.Parallel()
	h, broker := newApprovalHarness(t, executor.Config{})
	ex := h.ex
	var clicks atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<button id=b onclick="fetch('/clicked')">Pay</button>`)
	})
	mux.HandleFunc("/clicked", func(w http.ResponseWriter, r *http.Request) { clicks.Add(1) })
	site := executor.ServeOn(t, "127.0.0.1:0", mux)
	if r := h.call(t, "s", "navigate", map[string]any{"url": site + "/page"}); r.IsError {
		t.Fatal(r.Text)
	}
	// Someone on another channel approves whatever is held.
	var held atomic.Int64
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range broker.List() {
				held.Add(1)
				broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelOperator, By: "mallory"})
			}
		}
	}()
	ended := make(chan error, 1)
	ex.SetBeforeApproval(func(id string) {
		go func() { ended <- ex.EndByOperator(id, "olga", "console") }()
		for ex.IsOpen(id) { // the end has begun; it now waits for this call
			time.Sleep(5 * time.Millisecond)
		}
	})
	r := h.call(t, "s", "click", map[string]any{"selector": "#b"})
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(r.Text, "the operator olga ended session") || !strings.Contains(r.Text, "nothing was done") {
		t.Errorf("the call in flight as the operator ended its session: %+v", r)
	}
	if n := held.Load(); n != 0 {
		t.Errorf("%d call(s) held for a human after the operator ended the session", n)
	}
	// The page would have fetched /clicked by the time the reply came.
	if n := clicks.Load(); n != 0 {
		t.Errorf("the button was clicked %d time(s) after the operator ended the session", n)
	}
	recs := h.records(t)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3 (navigate, the refused click, the end)", len(recs))
	}
	click, end := recs[1], recs[2]
	if click.Decision.Allowed || click.Decision.Rule != executor.RuleEndedByOperator {
		t.Errorf("the click's record: %+v, want refused by rule %q", click.Decision, executor.RuleEndedByOperator)
	}
	if end.Kind != evidence.KindSessionEnd || end.Time.Before(click.Time) {
		t.Errorf("the end's record (%s at %s) comes before the call's (at %s)", end.Kind, end.Time, click.Time)
	}
}

// TestEndByOperatorHoldsAcrossAReload: a reload that changes the tool's
// manifest does not open again a session the operator ended: the MCP
// session's next call to the tool is still refused.
func TestEndByOperatorHoldsAcrossAReload(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	if r := h.call(t, "s1", "snapshot", nil); r.IsError {
		t.Fatal(r.Text)
	}
	id := h.records(t)[0].Session
	if err := h.ex.EndByOperator(id, "olga", "console"); err != nil {
		t.Fatal(err)
	}
	h.m = testkit.Manifest(t, fmt.Sprintf(loopManifest, false, 40)) // the file changed: a new manifest
	if err := h.ex.Reload([]*toolclad.Manifest{h.m}, testkit.Policies(t)); err != nil {
		t.Fatal(err)
	}
	if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "was ended by the operator olga") {
		t.Errorf("a call after the reload: %+v, want refused as the operator ended the session", r)
	}
	if r := h.call(t, "s2", "snapshot", nil); r.IsError {
		t.Errorf("another MCP session's call after the reload: %s", r.Text)
	}
}

// TestEndByOperatorWhenTheEndCannotBeRecorded: the evidence log refuses
// the record of the end; the session has ended all the same (its calls
// are refused), and the error is ErrEndNotRecorded, not
// ErrSessionNotOpen.
func TestEndByOperatorWhenTheEndCannotBeRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 50, false)
	if r := h.call(t, "s1", "snapshot", nil); r.IsError {
		t.Fatal(r.Text)
	}
	id := h.records(t)[0].Session
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	err := h.ex.EndByOperator(id, "olga", "console")
	if !errors.Is(err, executor.ErrEndNotRecorded) || errors.Is(err, executor.ErrSessionNotOpen) {
		t.Errorf("ending it with the evidence log closed: %v, want ErrEndNotRecorded", err)
	}
	if r := h.call(t, "s1", "snapshot", nil); !r.IsError || !strings.Contains(r.Text, "was ended by the operator olga") {
		t.Errorf("a call after the end: %+v", r)
	}
}
