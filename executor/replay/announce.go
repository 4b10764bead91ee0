package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// The replay's own executor: how long a held call or a question waits
// (nobody but the recorded approvals answers), and how long one step may
// take in all.
const (
	replayApprovalTimeout = 30 * time.Second
	replayStepTimeout     = 2 * time.Minute
)

// approvedLine is the line a replay starts with when the session has
// steps a human approved: replay runs them again against the real site,
// approved as recorded, so a form a person let through once is submitted
// again. "" when there is none. Questions (await_human) are not approvals
// of an action, and replay does not answer them: they are left out.
func approvedLine(recs []*evidence.Envelope) string {
	var steps []string
	for _, r := range recs {
		a := r.Decision.Approval
		if !ran(r) || a == nil || !a.Approved || r.Command == "await_human" {
			continue
		}
		who := a.Channel
		if a.By != "" {
			who = a.By + " via " + a.Channel
		}
		steps = append(steps, fmt.Sprintf("#%d %s (%s)", r.Seq, r.Command, evidence.VisibleLine(who)))
	}
	if len(steps) == 0 {
		return ""
	}
	return fmt.Sprintf("%d step(s) a human approved will run again, approved as recorded, with their side effects: %s",
		len(steps), strings.Join(steps, ", "))
}

// waitLine is the line printed before a step that waits for a person
// (await_human), which replay does not answer: without it the replay
// sits silent for the question's whole timeout. "" for any other step.
func waitLine(r *evidence.Envelope, cmd *toolclad.Command) string {
	if r.Command != "await_human" || cmd == nil {
		return ""
	}
	args, _ := cmd.Validate(r.Args)
	wait := questionWait(cmd, args)
	return fmt.Sprintf("#%d await_human: waits up to %s for an answer, as recorded (replay does not answer questions)", r.Seq, wait)
}

// questionWait is how long the replayed question waits: as the executor
// reckons it (executor.QuestionTimeout, with the replay's approval
// timeout), and never past the step's own timeout.
func questionWait(cmd *toolclad.Command, args map[string]any) time.Duration {
	wait := executor.QuestionTimeout(&toolclad.Call{Command: cmd, Args: args}, replayApprovalTimeout)
	return min(wait, replayStepTimeout)
}
