package executor

import (
	"context"
	"fmt"

	"github.com/browsergate/browsergate/toolclad"
)

// await_human: the agent asks the operator a question (a one-time code,
// which account to use) and waits for the answer. The question is held in
// the approval broker, so it reaches the operator through the channels an
// approval does — the operator socket (`browsergate approvals answer`),
// the console, the event stream and the approval hook — and never through
// the MCP client: the agent's own side must not answer its own question,
// nor see a secret answer pass by.
//
// A secret answer (the manifest's secret_answers, the agent's secret
// argument, or the operator's mark) is never shown to the agent: it becomes
// a secret of the session, <ANSWER_n>, which the agent types with
// type_text under a manifest secret's rules (gate.Secrets: into a named
// text field of a page on the host the question was asked on, the site then
// held to that host), and which the masker hides wherever it comes back.
// The reply and the evidence say that a secret answer was given, and its
// placeholder, never its value.

// questionCall carries the running call to await_human's act, which the
// command table gives only the arguments.
type questionCall struct{}

// actAwaitHuman asks the operator the call's question (session.askHuman,
// the executor's askHuman in question.go) and returns the answer.
func actAwaitHuman(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	call, _ := ctx.Value(questionCall{}).(*toolclad.Call)
	if call == nil || s.askHuman == nil {
		return output{}, fmt.Errorf("await_human: no operator channel reaches this session")
	}
	return s.askHuman(ctx, call, f)
}
