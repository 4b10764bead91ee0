package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// turn is one call on its way through the loop: what the gate decided,
// what the act produced, and what the evidence will say.
type turn struct {
	call     *toolclad.Call
	args     map[string]any
	start    time.Time
	before   *PageState
	after    *PageState
	deny     *DenyError
	decision evidence.Decision
	out      output
	err      error
	count    int
}

// Run is the Observe-Reason-Gate-Act loop for one MCP tool call. It always
// returns a reply, and it has always recorded the call in the evidence log
// when it returns (or says that it could not).
func (e *Executor) Run(ctx context.Context, call *toolclad.Call) *toolclad.Reply {
	t := &turn{call: call, args: call.Args, start: e.cfg.Now()}
	if call.ArgErr != nil {
		t.args = call.RawArgs
	}
	s, err := e.session(call.SessionID, call.Manifest)
	if err != nil {
		return &toolclad.Reply{Text: "error: " + err.Error(), IsError: true}
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e.gateAndAct(ctx, s, t)
	return e.finish(s, t)
}

func (e *Executor) gateAndAct(ctx context.Context, s *session, t *turn) {
	m, cmd := s.manifest, t.call.Command
	now := t.start

	// Reason (what the agent asked for) must be well-formed.
	if t.call.ArgErr != nil {
		t.deny = &DenyError{Stage: "args", Rule: argRule(t.call.ArgErr), Reason: t.call.ArgErr.Error()}
		return
	}
	// Limits: session lifetime, idleness, interaction budget.
	if s.expired == "" {
		switch {
		case now.Sub(s.created) > m.Browser.SessionTimeout:
			s.expired = fmt.Sprintf("session_timeout_seconds: the session is older than %s", m.Browser.SessionTimeout)
		case now.Sub(s.lastCall) > m.Browser.IdleTimeout:
			s.expired = fmt.Sprintf("idle_timeout_seconds: no call for more than %s", m.Browser.IdleTimeout)
		}
		if s.expired != "" {
			s.close()
		}
	}
	if s.expired != "" {
		t.deny = &DenyError{Stage: "limits", Rule: ruleName(s.expired), Reason: "session expired (" + s.expired + "); reconnect to start a new session"}
		return
	}
	s.lastCall = now
	if s.interactions >= m.Browser.MaxInteractions {
		t.deny = &DenyError{Stage: "limits", Rule: "max_interactions",
			Reason: fmt.Sprintf("the session has used all %d interactions of max_interactions", m.Browser.MaxInteractions)}
		return
	}
	s.interactions++
	t.count = s.interactions

	// Observe.
	if err := s.ensureTab(); err != nil {
		t.err = err
		t.deny = &DenyError{Stage: "act", Rule: "browser", Reason: err.Error()}
		return
	}
	timeout := defaultActTimeout
	if m.Tool.TimeoutSeconds > 0 {
		timeout = time.Duration(m.Tool.TimeoutSeconds) * time.Second
	}
	actx, cancel := context.WithTimeout(s.tab, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the client gave up: stop acting
	defer stop()

	before := s.readState(actx)
	t.before = &before

	// Gate.
	if t.deny = e.gate(actx, s, t, cmd, before); t.deny != nil {
		return
	}

	// Act.
	navs, acted := s.watch.navigationCount(), time.Now()
	t.out, t.err = s.act(actx, cmd.Name, t.args)
	if window, changes := quietWindow[cmd.Name]; changes {
		s.watch.waitStable(actx, acted, window)
	}
	if s.watch.navigationCount() != navs {
		s.refs = nil // refs name elements of a document that is gone
	}
	after := s.readState(actx)
	t.after = &after
	if t.err == nil {
		s.counts[cmd.Name]++
	}
	// Whatever the action did, the tab must end inside the scope.
	if v := e.scopes[m].Check(after.URL); !v.Allowed && after.URL != "" {
		_ = chromedp.Do(actx, chromedp.Navigate("about:blank"))
		reset := s.readState(actx)
		t.after = &reset
		t.deny = &DenyError{Stage: "scope", Rule: v.Rule,
			Reason: fmt.Sprintf("the %s led the tab to %s, which is out of scope (%s); the tab was reset to about:blank", cmd.Name, after.URL, v.Reason)}
		s.refs = nil
	}
	if ds := s.watch.takeDialogs(); len(ds) > 0 && t.err == nil {
		t.out.Text += fmt.Sprintf("\n[dismissed %d JavaScript dialog(s): %q]", len(ds), ds)
	}
}

// finish records the turn in the evidence log, logs the decision and builds
// the reply. A call whose evidence cannot be written is reported as failed:
// nothing happens off the record without the agent being told.
func (e *Executor) finish(s *session, t *turn) *toolclad.Reply {
	m, cmd := s.manifest, t.call.Command
	// Stage says where the call was decided: "gate" when every check
	// passed, else the stage that refused.
	t.decision.Allowed, t.decision.Stage = t.deny == nil, "gate"
	if t.deny != nil {
		t.decision.Stage = t.deny.Stage
		t.decision.Rule = t.deny.Rule
		t.decision.Reasons = []string{t.deny.Reason}
		t.decision.PolicyIDs = t.deny.PolicyIDs
	}
	var shot []byte
	if m.Tool.Evidence.Screenshots && s.tab != nil && !errors.Is(t.err, ErrBrowserStart) {
		sctx, cancel := context.WithTimeout(s.tab, 5*time.Second)
		shot, _ = s.screenshot(sctx, false)
		cancel()
	} else if len(t.out.PNG) > 0 {
		shot = t.out.PNG
	}
	env := &evidence.Envelope{
		Session:          s.id,
		Time:             t.start.UTC(),
		Principal:        e.cfg.Principal,
		Tool:             m.Tool.Name,
		Command:          cmd.Name,
		Args:             t.args,
		Decision:         t.decision,
		Output:           t.out.Text,
		InteractionCount: t.count,
		DurationMicros:   e.cfg.Now().Sub(t.start).Microseconds(),
	}
	if t.before != nil {
		env.Before = t.before.Map()
	}
	if t.after != nil {
		env.After = t.after.Map()
	}
	if t.err != nil {
		env.Error = t.err.Error()
	}
	appendErr := e.cfg.Evidence.Append(env, shot)
	e.logDecision(s, t, appendErr)
	if appendErr != nil {
		return &toolclad.Reply{IsError: true,
			Text: "error: the call could not be recorded in the evidence log, so its result is withheld: " + appendErr.Error()}
	}
	return e.reply(s, t)
}

func (e *Executor) logDecision(s *session, t *turn, appendErr error) {
	attrs := []any{
		"session", s.id, "tool", s.manifest.Tool.Name, "command", t.call.Command.Name,
		"allowed", t.deny == nil, "stage", t.decision.Stage,
		"duration", e.cfg.Now().Sub(t.start),
	}
	if t.deny != nil {
		attrs = append(attrs, "rule", t.deny.Rule, "reason", t.deny.Reason)
	}
	if t.after != nil {
		attrs = append(attrs, "url", t.after.URL)
	}
	if t.err != nil {
		attrs = append(attrs, "error", t.err.Error())
	}
	if appendErr != nil {
		attrs = append(attrs, "evidence_error", appendErr.Error())
	}
	e.cfg.Logger.Info("gate decision", attrs...)
}

// argRule extracts the rule name of an argument error.
func argRule(err error) string {
	var ae *toolclad.ArgError
	if errors.As(err, &ae) {
		return "argument " + ae.Arg + ": " + ae.Rule
	}
	return "arguments"
}

func ruleName(expired string) string {
	for i, c := range expired {
		if c == ':' {
			return expired[:i]
		}
	}
	return expired
}
