package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

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
	blocked  []Blocked // requests the egress gate refused while the call ran
	submits  bool      // a click that submits a form: counted as a submit_form too
	secret   bool      // type_text into a password field: the text is masked in evidence
	// ask is set when the call asks the client's user for an approval
	// first: it ends without a record and comes back (multi round-trip).
	ask *toolclad.Question
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
	if s.ended {
		return &toolclad.Reply{Text: "error: this session has ended", IsError: true}
	}

	mark := s.blocked.mark()
	e.gateAndAct(ctx, s, t)
	// An approval asked about in an earlier round is taken up only by the
	// client's return to that very call, which uses it (and clears
	// s.held). Any other call of the session, or a return that stopped
	// before using it, withdraws it: nothing runs later under it.
	if s.held != "" && t.ask == nil {
		e.withdraw(s)
	}
	e.armTimers(s)
	if t.ask != nil {
		// Not concluded: it counts, and is recorded, when the client
		// comes back with the answer. What the page's own requests were
		// refused meanwhile stays in the log for that round.
		s.interactions--
		return &toolclad.Reply{Ask: t.ask}
	}
	t.blocked = s.blocked.since(mark)
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
	held := &approvalHold{}
	if t.deny = e.gate(actx, s, t, cmd, before, held); t.deny != nil {
		return
	}
	if len(held.why) > 0 {
		// Waiting for a human does not use up the action's time.
		wctx, wcancel := context.WithCancel(s.tab)
		stopWait := context.AfterFunc(ctx, wcancel)
		t.deny = e.approve(wctx, s, t, cmd, held)
		stopWait()
		wcancel()
		if t.deny != nil || t.ask != nil {
			return
		}
		cancel()
		actx, cancel = context.WithTimeout(s.tab, timeout)
		defer cancel()
		stop()
		stop = context.AfterFunc(ctx, cancel)
		defer stop()
	}

	// Act. Every call that reaches here counts, whether or not the action
	// succeeded: a submit that timed out may still have been sent.
	navs, acted := s.watch.navigationCount(), time.Now()
	s.counts[cmd.Name]++
	if t.submits {
		s.counts["submit_form"]++
	}
	t.out, t.err = s.act(actx, cmd.Name, t.args)
	if window, changes := quietWindow[cmd.Name]; changes {
		s.watch.waitStable(actx, acted, window)
	}
	if s.watch.navigationCount() != navs {
		s.refs = nil // refs name elements of a document that is gone
	}

	// Whatever the action did, the tab and every popup must end inside the
	// scope. This runs on its own context: a client that gave up, or an
	// action that used up its time, must not skip it.
	pctx, pcancel := context.WithTimeout(s.tab, 10*time.Second)
	defer pcancel()
	after := s.readState(pctx)
	t.after = &after
	if deny := e.checkAfter(pctx, s, cmd.Name, after); deny != nil {
		t.deny = deny
		reset := s.readState(pctx)
		t.after = &reset
	}
	if ds := s.watch.takeDialogs(); len(ds) > 0 && t.err == nil {
		t.out.Text += fmt.Sprintf("\n[dismissed %d JavaScript dialog(s): %q]", len(ds), ds)
	}
}

// checkAfter checks where an action left the session's tabs. An
// out-of-scope (or unreadable) main tab is reset to about:blank with its
// history cleared; out-of-scope popups are closed. Either refuses the call
// at stage "final_url": the action ran, and its outcome is refused.
func (e *Executor) checkAfter(ctx context.Context, s *session, command string, after PageState) *DenyError {
	sc := s.backend.scope.Load()
	if after.URL == "" {
		return &DenyError{Stage: "final_url", Rule: "page state",
			Reason: fmt.Sprintf("the page could not be read after the %s, so it cannot be shown to be in scope; %s", command, resetNote(s.resetTab(ctx)))}
	}
	if v := sc.Check(after.URL); !v.Allowed && !isBlank(after.URL) {
		return &DenyError{Stage: "final_url", Rule: v.Rule,
			Reason: fmt.Sprintf("the %s led the tab to %s, which is out of scope (%s); %s", command, after.URL, v.Reason, resetNote(s.resetTab(ctx)))}
	}
	closed, err := s.closeStrayTabs(ctx, sc, popupSettle)
	if err != nil {
		return &DenyError{Stage: "final_url", Rule: "tabs",
			Reason: fmt.Sprintf("cannot list the session's tabs after the %s: %v; %s", command, err, resetNote(s.resetTab(ctx)))}
	}
	if len(closed) > 0 {
		return &DenyError{Stage: "final_url", Rule: "popup",
			Reason: fmt.Sprintf("the %s opened tab(s) outside the scope, which were closed: %s", command, strings.Join(closed, "; "))}
	}
	return nil
}

// resetNote says how a reset went, for a refusal's reason.
func resetNote(err error) string {
	if err != nil {
		return fmt.Sprintf("resetting the tab failed (%v), so the session's browser context was closed", err)
	}
	return "the tab was reset to about:blank and its history cleared"
}

// armTimers closes the session's browser context as soon as the idle or
// session timeout passes, not only at the next call, so an abandoned tab
// does not keep running. The decision itself is made on the clock (see
// gateAndAct); the timers only free resources.
func (e *Executor) armTimers(s *session) {
	m := s.manifest
	expire := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := e.cfg.Now()
		switch {
		case s.expired != "" || s.ended:
			return
		case now.Sub(s.created) >= m.Browser.SessionTimeout:
			s.expired = fmt.Sprintf("session_timeout_seconds: the session is older than %s", m.Browser.SessionTimeout)
		case now.Sub(s.lastCall) >= m.Browser.IdleTimeout:
			s.expired = fmt.Sprintf("idle_timeout_seconds: no call for more than %s", m.Browser.IdleTimeout)
		default:
			return
		}
		s.close()
	}
	if s.idleTimer == nil {
		s.idleTimer = time.AfterFunc(m.Browser.IdleTimeout, expire)
		s.lifeTimer = time.AfterFunc(m.Browser.SessionTimeout, expire)
		return
	}
	s.idleTimer.Reset(m.Browser.IdleTimeout)
}

// finish records the turn in the evidence log, logs the decision and builds
// the reply. A call whose evidence cannot be written is reported as failed:
// nothing happens off the record without the agent being told.
func (e *Executor) finish(s *session, t *turn) *toolclad.Reply {
	m, cmd := s.manifest, t.call.Command
	e.masker.Load().maskTurn(t) // before anything is recorded, logged or returned
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
	var shotErr error
	if m.Tool.Evidence.Screenshots && s.tab != nil && !errors.Is(t.err, ErrBrowserStart) {
		sctx, cancel := context.WithTimeout(s.tab, 5*time.Second)
		shot, shotErr = s.screenshot(sctx, false)
		cancel()
	} else if len(t.out.PNG) > 0 {
		shot = t.out.PNG
	}
	args := e.shownArgs(t)
	env := &evidence.Envelope{
		Session:          s.id,
		Time:             t.start.UTC(),
		Principal:        e.cfg.Principal,
		Tool:             m.Tool.Name,
		Command:          cmd.Name,
		Args:             args,
		Decision:         t.decision,
		Output:           t.out.Text,
		InteractionCount: t.count,
		DurationMicros:   e.cfg.Now().Sub(t.start).Microseconds(),
	}
	for _, b := range t.blocked {
		env.Blocked = append(env.Blocked, evidence.BlockedRequest{URL: b.URL, Rule: b.Rule, Reason: b.Reason, Layer: b.Layer})
	}
	if t.before != nil {
		env.Before = t.before.Map()
	}
	if t.after != nil {
		env.After = t.after.Map()
	}
	var errs []string
	if t.err != nil {
		errs = append(errs, t.err.Error())
	}
	if sum, err := e.configFor(m, e.policies.Load()); err != nil {
		errs = append(errs, err.Error())
	} else {
		env.ConfigSHA256 = sum
	}
	if shotErr != nil {
		errs = append(errs, "evidence screenshot: "+shotErr.Error())
	}
	env.Error = strings.Join(errs, "; ")
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
	if len(t.blocked) > 0 {
		attrs = append(attrs, "blocked_requests", len(t.blocked))
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

// recordedArgs are the call's arguments with what is typed into a password
// field masked. The evidence log and a human approver see them through
// Executor.shownArgs, which masks secret values too.
func (t *turn) recordedArgs() map[string]any {
	if !t.secret {
		return t.args
	}
	args := maps.Clone(t.args)
	if text, ok := args["text"].(string); ok {
		args["text"] = fmt.Sprintf("[masked: %d characters typed into a password field]", len([]rune(text)))
	}
	return args
}

// shownArgs are the arguments as they are recorded and shown to a human:
// password-field text masked, and any secret value masked (an agent that
// knows a secret and types it itself does not get it recorded).
func (e *Executor) shownArgs(t *turn) map[string]any {
	args, _ := e.masker.Load().maskValue(t.recordedArgs()).(map[string]any)
	return args
}
