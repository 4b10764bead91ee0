package replay

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// TestApprovedLineNamesTheStepsAHumanApproved: a session with steps a
// human approved starts its replay with one line counting and naming
// them; steps refused, approvals denied, and questions are not in it; a
// session without any gets no line.
func TestApprovedLineNamesTheStepsAHumanApproved(t *testing.T) {
	t.Parallel()
	approved := &evidence.Approval{ID: "apr-1", Approved: true, Channel: "operator", By: "alice (uid 1000)"}
	recs := []*evidence.Envelope{
		{Seq: 1, Command: "navigate", Decision: evidence.Decision{Allowed: true}},
		{Seq: 2, Command: "submit_form", Decision: evidence.Decision{Allowed: true, Approval: approved}},
		{Seq: 3, Command: "submit_form", Decision: evidence.Decision{Allowed: false, Approval: &evidence.Approval{ID: "apr-2", Channel: "operator"}}},
		{Seq: 4, Command: "await_human", Decision: evidence.Decision{Allowed: true, Approval: &evidence.Approval{ID: "apr-3", Approved: true, Channel: "console", By: "olga"}}},
		{Seq: 5, Command: "click", Decision: evidence.Decision{Allowed: true, Approval: &evidence.Approval{ID: "apr-4", Approved: true, Channel: "console", By: "olga"}}},
	}
	want := "2 step(s) a human approved will run again, approved as recorded, with their side effects: #2 submit_form (alice (uid 1000) via operator), #5 click (olga via console)"
	if got := approvedLine(recs); got != want {
		t.Errorf("approvedLine:\n%s\nwant\n%s", got, want)
	}
	if got := approvedLine(recs[:1]); got != "" {
		t.Errorf("approvedLine of a session nobody approved anything in: %q", got)
	}
}

// TestWaitLineSaysHowLongAQuestionWaits: before a replayed await_human the
// replay says how long it waits, from the recorded timeout_seconds, else
// the replay's approval timeout held to the manifest's bound; no other
// step gets the line.
func TestWaitLineSaysHowLongAQuestionWaits(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("m.toml", []byte(`[tool]
name = "m"
[browser.scope]
allowed_domains = ["example.com"]
[browser.commands.await_human]
args.question = {}
args.timeout_seconds = { max = 20 }
[browser.commands.snapshot]
`))
	if err != nil {
		t.Fatal(err)
	}
	ask := m.Command("await_human")
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"question": "code?", "timeout_seconds": float64(12)}, "#7 await_human: waits up to 12s for an answer, as recorded (replay does not answer questions)"},
		{map[string]any{"question": "code?"}, "#7 await_human: waits up to 20s for an answer, as recorded (replay does not answer questions)"},
	} {
		if got := waitLine(&evidence.Envelope{Seq: 7, Command: "await_human", Args: c.args}, ask); got != c.want {
			t.Errorf("waitLine(%v) = %q, want %q", c.args, got, c.want)
		}
	}
	if got := waitLine(&evidence.Envelope{Seq: 8, Command: "snapshot"}, m.Command("snapshot")); got != "" {
		t.Errorf("waitLine of a snapshot: %q", got)
	}
	if !strings.Contains(waitLine(&evidence.Envelope{Seq: 9, Command: "await_human", Args: map[string]any{"question": "q"}}, ask), "replay does not answer questions") {
		t.Error("the line does not say replay answers no question")
	}
}
