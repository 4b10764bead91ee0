package executor

import (
	"fmt"
	"strings"

	"github.com/browsergate/browsergate/toolclad"
)

// reply turns a finished turn into what the agent sees: the output and the
// page state after the call, or a refusal that names the stage, the rule
// and the reason.
func (e *Executor) reply(s *session, t *turn) *toolclad.Reply {
	fields := s.manifest.Browser.StateFields
	var state map[string]any
	if t.after != nil {
		state = t.after.Select(fields)
	} else if t.before != nil {
		state = t.before.Select(fields)
	}
	if t.deny != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "DENIED at %s: %s\nrule: %s", t.deny.Stage, t.deny.Reason, t.deny.Rule)
		if len(t.deny.PolicyIDs) > 0 {
			fmt.Fprintf(&b, "\npolicies: %s", strings.Join(t.deny.PolicyIDs, ", "))
		}
		if state != nil {
			b.WriteString("\n" + stateLine(state, fields))
		}
		return &toolclad.Reply{Text: b.String(), IsError: true}
	}
	if t.err != nil {
		text := "error: " + t.err.Error()
		if state != nil {
			text += "\n" + stateLine(state, fields)
		}
		return &toolclad.Reply{Text: text, IsError: true}
	}
	text := t.out.Text
	if state != nil {
		text = strings.TrimRight(text, "\n") + "\n\n" + stateLine(state, fields)
	}
	r := &toolclad.Reply{Text: text, PNG: t.out.PNG}
	if state != nil {
		r.Structured = map[string]any{"state": state}
	}
	return r
}

// stateLine renders the state fields on one line, in manifest order.
func stateLine(state map[string]any, fields []string) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		if v, ok := state[f]; ok {
			if s, isStr := v.(string); isStr {
				parts = append(parts, fmt.Sprintf("%s=%q", f, s))
			} else {
				parts = append(parts, fmt.Sprintf("%s=%v", f, v))
			}
		}
	}
	return "[state] " + strings.Join(parts, " ")
}
