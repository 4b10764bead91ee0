package executor

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// DefaultApprovalTimeout is how long a call waits for a human's answer
// before it is denied. It is under the 60 s request timeout of the MCP
// SDKs' clients (TypeScript's DEFAULT_REQUEST_TIMEOUT_MSEC, which the
// progress sent every progressEvery resets only with
// resetTimeoutOnProgress): an agent whose approval does not come gets the
// recorded denial, not a transport error that cancels the call. serve
// --approval-timeout sets more for clients that wait longer.
const DefaultApprovalTimeout = 55 * time.Second

// progressEvery is how often a held call tells the client it is still
// waiting.
const progressEvery = 5 * time.Second

// approvalKey names the approval question in a multi round-trip call.
const approvalKey = "approval"

// approve holds the call until a human answers. A denial, no answer in
// time, or no approval channel denies the call. After an approval the
// call is observed and decided again, with human_approved = true: the
// page must be the one approved on, the call must lead where it led, and
// scope and Cedar must allow it (an approval lifts only what it was asked
// for: a rate limit crossed meanwhile still denies).
//
// A client that can elicit is asked in two rounds: the first opens the
// approval and returns the question (t.ask) with a sealed state; the
// client's user answers, the client calls again with the answer and the
// state, and this second round, observed and decided afresh, takes up the
// same approval. The operator can answer in between or instead. Commands
// of risk tier critical are never put to the client: only the operator
// decides them.
//
// retake, when not nil, is called once the call is approved and before it
// is observed again: the call gave its place among the calls running back
// while a human decided (turnstile), and takes one again there.
func (e *Executor) approve(ctx context.Context, s *session, t *turn, retake func() *DenyError) *DenyError {
	why := t.verdict.Approval
	if e.cfg.Approvals == nil {
		return deny(evidence.StageApproval, "human_approval",
			"%s, and no approval channel is configured on this daemon", strings.Join(why, "; "))
	}
	if e.beforeApproval != nil {
		e.beforeApproval(s.id)
	}
	// An operator may have ended the session while this call observed
	// and decided: nothing is held for a session that is ending. (One
	// that begins to end from here on cuts the wait below short, and an
	// answer given meanwhile is refused by the check after it.)
	if d := s.stopped(); d != nil {
		return d
	}
	want := e.approvalRequest(s, t)
	var p *approval.Pending
	if r := t.call.Resume; r != nil {
		if t.verdict.Outside != nil {
			return deny(evidence.StageApproval, "outside the scope",
				"a navigate outside allowed_domains is decided by the operator only, not through the MCP client; nothing was done")
		}
		var d *DenyError
		if p, d = e.resume(r, s, want); d != nil {
			return d
		}
	} else {
		p = e.openApproval(s, want, "call held for human approval")
		s.hold.id = p.ID
		// Leaving the scope widens what the session's pages reach until
		// it ends: like a critical call, it is never put to the client,
		// which is the agent's side of the connection.
		if e.cfg.Elicitation && t.call.CanElicit && want.Tier != "critical" && t.verdict.Outside == nil {
			t.ask = &toolclad.Question{Key: approvalKey, Message: elicitMessage(p), State: e.seal(p.ID, s.id)}
			return nil
		}
	}

	// The wait ends when the session begins to end (stopCalls), even if
	// that came before the approval was opened.
	waitCtx, stopWaiting := s.untilStopped(s.lifetime())
	stopOnClient := context.AfterFunc(ctx, stopWaiting)
	if !p.Answered() {
		go tellProgress(waitCtx, t.call, p)
	}
	o := p.Wait(waitCtx)
	stopOnClient()
	stopWaiting()
	s.hold.id = ""
	t.approval = e.answered(s, p, o)
	// An approval given on another channel as the session was being ended
	// does not outlive the end.
	if d := s.stopped(); d != nil {
		return d
	}
	if !o.Approved {
		return e.notApproved(p, o, why)
	}
	if retake != nil {
		if d := retake(); d != nil {
			return d
		}
	}
	return e.recheck(ctx, s, t, p)
}

// openApproval holds want for a human (the operator's list, the event
// stream and the approval hook hear of it) until e.cfg.ApprovalTimeout;
// what says what is held, for the log.
func (e *Executor) openApproval(s *session, want approval.Request, what string) *approval.Pending {
	p := e.cfg.Approvals.Open(want, e.cfg.ApprovalTimeout)
	s.backend.logger.Warn(what, "id", p.ID, "session", s.id, "call", p.Summary(), "deadline", p.Deadline)
	e.cfg.Events.Publish(events.Event{Type: events.ApprovalAsked, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name, Command: p.Command,
		Args: p.Args, URL: p.URL, Approval: p.ID, Reason: strings.Join(p.Why, "; "), Detail: p.Request})
	return p
}

// answered logs and publishes a human's answer (or its lack), and returns
// it as the evidence records it.
func (e *Executor) answered(s *session, p *approval.Pending, o approval.Outcome) *evidence.Approval {
	s.backend.logger.Warn("approval answered", "id", p.ID, "approved", o.Approved, "channel", o.Channel, "by", o.By)
	e.cfg.Events.Publish(events.Event{Type: events.ApprovalAnswered, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name, Command: p.Command,
		Approval: p.ID, Allowed: events.Bool(o.Approved), Channel: o.Channel, By: o.By, Reason: o.Note})
	return &evidence.Approval{ID: p.ID, Approved: o.Approved, Channel: o.Channel, By: o.By, At: o.At.UTC(), Note: o.Note}
}

// notApproved is the refusal of a held call that was denied, or that
// nobody answered (why: what required the approval).
func (e *Executor) notApproved(p *approval.Pending, o approval.Outcome, why []string) *DenyError {
	reason := fmt.Sprintf("approval %s was denied via %s", p.ID, o.Channel)
	switch o.Channel {
	case approval.ChannelTimeout:
		reason = fmt.Sprintf("nobody approved %s within %s", p.ID, e.cfg.ApprovalTimeout)
	case approval.ChannelCancelled:
		reason = fmt.Sprintf("the call or its session ended while approval %s was pending", p.ID)
	}
	if o.By != "" {
		reason += " by " + o.By
	}
	if o.Note != "" {
		reason += ": " + o.Note
	}
	return &DenyError{Stage: evidence.StageApproval, Rule: "approval " + o.Channel, Reason: reason + " (" + strings.Join(why, "; ") + ")"}
}

// recheck observes and decides the call again after an approval: minutes
// may have passed, and the page's own scripts may have moved a link or a
// form meanwhile.
func (e *Executor) recheck(ctx context.Context, s *session, t *turn, p *approval.Pending) *DenyError {
	m, now := s.manifest, e.cfg.Now()
	if now.Sub(s.limits.Created) > m.Browser.SessionTimeout {
		return deny(evidence.StageLimits, "session_timeout_seconds",
			"approval %s came after the session's lifetime (%s) ran out; nothing was done", p.ID, m.Browser.SessionTimeout)
	}
	var actx context.Context
	var cancel context.CancelFunc
	var f *facts
	if s.isWeb() {
		actx, cancel = e.webContext(ctx, s)
		f = s.web.factsFor(t.call.Args, s.manifest)
	} else {
		actx, cancel = e.actContext(ctx, s)
		f = s.observe(actx, t.call.Command, t.call.Args)
	}
	defer cancel()
	if f.State.URL != p.Page {
		dropUpload(f) // read again, never attached
		return deny(evidence.StageApproval, "page changed",
			"approval %s was given for a call on %s, but the tab is now at %s; nothing was done", p.ID, p.Page, f.State.URL)
	}
	dropUpload(t.facts) // the file as first read; f has it as read now
	t.facts = f
	t.verdict = gate.Decide(e.question(s, t, f, true))
	if was, ok := p.Request.Args["file_sha256"].(string); ok {
		now := "(unreadable)"
		if file := approvedFileOf(f); file != nil {
			now = file.SHA256
		}
		if now != was {
			return deny(evidence.StageApproval, "file changed",
				"approval %s was given for the file as it was read (sha256 %s), but it has changed since (now %s); nothing was done", p.ID, was, now)
		}
	}
	// The approval was for one action: the same destination and
	// arguments, whatever else the verdict says.
	if len(t.verdict.Requests) > 0 {
		if got := e.approvalRequest(s, t); !sameCall(p.Request, got) {
			return deny(evidence.StageApproval, "call changed",
				"approval %s was given for %s, but the call now leads to %s; nothing was done", p.ID, p.Summary(), got.URL)
		}
	}
	if d := e.enforceOn(actx, s, t, t.verdict); d != nil {
		if d.Stage != evidence.StageCedar {
			d.Reason = fmt.Sprintf("after approval %s the gate was asked again and refused: %s", p.ID, d.Reason)
		} else {
			d.Reason = fmt.Sprintf("approved (%s), but %s", p.ID, d.Reason)
		}
		return d
	}
	return nil
}

// approvalRequest describes the call for a human: the tool, the arguments
// as recorded, the page, where it leads, and a fingerprint of the real
// arguments.
func (e *Executor) approvalRequest(s *session, t *turn) approval.Request {
	r := approval.Request{Session: s.id, Agent: s.agentID, Tool: t.call.Tool, Args: e.shownArgs(s, t), Why: t.verdict.Approval, Fingerprint: e.fingerprint(t.call.Args)}
	if f := approvedFileOf(t.facts); f != nil {
		// An upload, or a state to load, is approved for the file as it
		// was read: the human sees its size and digest, and a file
		// changed before the approval is acted on is another call.
		// A copy: what the human is shown is never the call's own
		// arguments, which the fingerprint is of.
		r.Args = maps.Clone(r.Args)
		if r.Args == nil {
			r.Args = map[string]any{}
		}
		r.Args["file_bytes"], r.Args["file_sha256"] = f.Size, f.SHA256
		r.Fingerprint = e.fingerprint(map[string]any{"args": t.call.Args, "file_sha256": f.SHA256})
		if ss := t.facts.StorageState; ss != nil {
			if st, ok := ss.Parsed.(*storageState); ok {
				st.describe(r.Args)
			}
		}
	}
	if t.facts != nil {
		r.Page = s.masker.Load().Mask(t.facts.State.URL)
	}
	if reqs := t.verdict.Requests; len(reqs) > 0 {
		r.Command, r.URL = reqs[0].Command, s.masker.Load().Mask(reqs[0].URL)
		for i, q := range reqs {
			if i > 0 {
				// A click that submits a form: the human is asked about
				// the submission, and the approval covers only a click
				// that submits.
				r.Command += " (submits a form: " + q.Command + ")"
			}
			if tierRank(q.RiskTier) > tierRank(r.Tier) {
				r.Tier = q.RiskTier
			}
		}
	}
	return r
}

// fingerprint is an HMAC over the canonical JSON of the arguments, so that
// two calls with the same masked text are still told apart, and so that
// the fingerprint (shown on the operator socket) does not let anyone test
// guesses of a masked password.
func (e *Executor) fingerprint(args any) string {
	b, _ := json.Marshal(args) // map keys are sorted
	m := hmac.New(sha256.New, e.stateKey[:])
	m.Write([]byte("args\x00"))
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// tellProgress tells a client that asked for progress, every few seconds,
// that the call is waiting for a human.
func tellProgress(ctx context.Context, call *toolclad.Call, p *approval.Pending) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		call.Progress(fmt.Sprintf("waiting for a human to approve %s (%s left): %s", p.ID,
			time.Until(p.Deadline).Round(time.Second), p.Summary()))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// withdraw drops the session's held approval: its call will not run.
func (e *Executor) withdraw(s *session) {
	e.cfg.Approvals.Withdraw(s.hold.id)
	e.cfg.Logger.Info("approval withdrawn: its call did not come back", "id", s.hold.id, "session", s.id)
	s.hold.id = ""
}

// resume takes up the approval a previous round opened: the state must be
// one this daemon sealed for this session's held approval, and the call
// must be the one it was asked for (an approval is for one action, not for
// whatever the client sends next). The client user's answer, if any, goes
// to the broker; a dismissed form leaves the call waiting for the
// operator.
func (e *Executor) resume(r *toolclad.Resume, s *session, want approval.Request) (*approval.Pending, *DenyError) {
	id, ok := e.unseal(r.State, s.id)
	if !ok || !e.cfg.Elicitation {
		return nil, &DenyError{Stage: evidence.StageApproval, Rule: "request state",
			Reason: "the call came back with a request state this daemon did not issue for this session; nothing was done"}
	}
	p := e.cfg.Approvals.Get(id)
	if p == nil || id != s.hold.id {
		return nil, &DenyError{Stage: evidence.StageApproval, Rule: "approval expired",
			Reason: fmt.Sprintf("approval %s is no longer held (answered and used, withdrawn by another call, or past its deadline); nothing was done", id)}
	}
	if !sameCall(p.Request, want) {
		return nil, &DenyError{Stage: evidence.StageApproval, Rule: "different call",
			Reason: fmt.Sprintf("approval %s was asked for %s, not for this call; nothing was done", id, pagetext.Value(p.Summary()))}
	}
	if want.Tier == "critical" {
		// Critical calls are never put to the client's user; a state for
		// one can only come from a call that was not critical when asked.
		return nil, &DenyError{Stage: evidence.StageApproval, Rule: "critical",
			Reason: fmt.Sprintf("approval %s: a critical-tier call is decided by the operator only, not through the MCP client; nothing was done", id)}
	}
	if ans, ok := r.Answers[approvalKey]; ok && (ans.Action == "accept" || ans.Action == "decline") {
		// The client vouches for its user's name; the daemon cannot.
		by := "MCP client user"
		if ans.By != "" {
			by = ans.By + " (as the MCP client reports)"
		}
		err := e.cfg.Approvals.Decide(id, approval.Outcome{Approved: ans.Action == "accept", Channel: approval.ChannelElicitation, By: by})
		if err != nil {
			e.cfg.Logger.Info("elicitation answer came after another answer", "id", id, "error", err)
		}
	}
	return p, nil
}

// sameCall reports whether two approval requests describe the same action:
// same session, tool, command (a click that submits a form is not the same
// as one that does not), risk tier, page, destination and arguments.
func sameCall(a, b approval.Request) bool {
	return a.Session == b.Session && a.Tool == b.Tool && a.Command == b.Command && a.Tier == b.Tier &&
		a.Page == b.Page && a.URL == b.URL && a.Fingerprint == b.Fingerprint
}

// tierRank orders the risk tiers, lowest first ("" below all).
func tierRank(tier string) int {
	return map[string]int{"low": 1, "medium": 2, "high": 3, "critical": 4}[tier]
}

// seal returns the request state for approval id in session: the id and an
// HMAC over it and the session under a key only this process knows, so a
// client can neither forge nor move an approval to another session.
func (e *Executor) seal(id, session string) string {
	return id + "." + base64.RawURLEncoding.EncodeToString(e.stateMAC(id, session))
}

func (e *Executor) unseal(state, session string) (string, bool) {
	id, mac, ok := strings.Cut(state, ".")
	if !ok {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	return id, err == nil && hmac.Equal(got, e.stateMAC(id, session))
}

func (e *Executor) stateMAC(id, session string) []byte {
	m := hmac.New(sha256.New, e.stateKey[:])
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write([]byte(session))
	return m.Sum(nil)
}

func elicitMessage(p *approval.Pending) string {
	return fmt.Sprintf("browsergate asks a human to approve an agent's action.\n\n%s\n\nAccept to let it run, decline to refuse it. (Approval %s; the operator can also answer with `browsergate approvals`. Without an answer it is refused at %s.)",
		p.Summary(), p.ID, p.Deadline.UTC().Format(time.RFC3339))
}
