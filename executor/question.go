package executor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// The executor's side of await_human (commands_human.go): the question
// held in the approval broker, the wait for the answer, and a secret
// answer kept as a secret of the session.

// questionRecord carries, to askHuman, where the turn keeps the human's
// decision for the evidence (questionContext).
type questionRecord struct{}

// answerName is the placeholder name of the session's n-th secret answer.
func answerName(n int) string { return "ANSWER_" + strconv.Itoa(n) }

// questionContext is await_human's context: the session's lifetime, ended
// when the client gives up or the session begins to end (an operator
// ended it), and not bounded by the command's timeout
// (waiting for a human does not use up the action's time, as for an
// approval; the question has its own deadline).
//
// record is where the turn keeps the human's decision for its evidence
// record (turn.approval): the question's answer, refusal or timeout goes
// there, with who answered and on which channel, as a held call's does.
func questionContext(ctx context.Context, s *session, call *toolclad.Call, record **evidence.Approval) (context.Context, context.CancelFunc) {
	qctx, cancel := s.untilStopped(context.WithValue(context.WithValue(s.lifetime(), questionCall{}, call), questionRecord{}, record))
	stop := context.AfterFunc(ctx, cancel)
	return qctx, func() { stop(); cancel() }
}

// QuestionTimeout is how long a question (await_human) waits, for the
// executor and for a replay of it: its timeout_seconds, or
// else the daemon's approval timeout, held to the bound the manifest
// declares for timeout_seconds (a manifest that allows at most a minute
// means it of the default too).
func QuestionTimeout(call *toolclad.Call, approvals time.Duration) time.Duration {
	if n, ok := call.Args["timeout_seconds"].(int64); ok {
		return time.Duration(n) * time.Second
	}
	if call.Command != nil {
		if a := call.Command.Arg("timeout_seconds"); a != nil && a.Max != nil {
			return min(approvals, time.Duration(*a.Max)*time.Second)
		}
	}
	return approvals
}

// askHuman puts the call's question to the operator and waits for the
// answer, or the question's deadline.
func (e *Executor) askHuman(ctx context.Context, s *session, call *toolclad.Call, f *facts) (output, error) {
	question, _ := call.Args["question"].(string)
	wantSecret, _ := call.Args["secret"].(bool)
	if call.Command != nil && call.Command.SecretAnswers {
		wantSecret = true
	}
	timeout := QuestionTimeout(call, e.cfg.ApprovalTimeout)
	if e.cfg.Approvals == nil {
		return output{}, fmt.Errorf("await_human: no operator channel is configured on this daemon, so nobody can answer")
	}
	page := ""
	if f != nil {
		page = f.State.URL
	}
	host := hostOf(page)
	domains, noSecret := secretAnswerDomains(call.Command, page, host)
	if wantSecret && noSecret != "" {
		return output{}, pagetext.Ownf("await_human: %s", noSecret)
	}
	m := s.masker.Load()
	why := []string{"the agent asks the operator a question"}
	if noSecret == "" {
		// Said to the operator on every channel (the list, the console,
		// the hook's data): where the answer goes if it is a secret.
		why = append(why, "a secret answer can be typed on: "+strings.Join(domains, ", "))
	}
	req := approval.Request{
		Session: s.id, Agent: s.agentID, Tool: call.Tool, Command: "await_human",
		Args:          m.MaskValue(call.Args).(map[string]any),
		Page:          m.Mask(page),
		Why:           why,
		Question:      m.Mask(question),
		SecretAnswer:  wantSecret,
		SecretDomains: domains,
		NoSecret:      m.Mask(noSecret),
	}
	p := e.cfg.Approvals.Open(req, timeout)
	s.backend.logger.Warn("question for the operator", "id", p.ID, "session", s.id, "secret_answer", wantSecret, "deadline", p.Deadline)
	e.cfg.Events.Publish(events.Event{Type: events.ApprovalAsked, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name, Command: p.Command,
		Args: p.Args, URL: p.Page, Approval: p.ID, Reason: "question: " + p.Question, Detail: p.Request})

	// ctx is questionContext's: it ends when the session begins to end.
	waitCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	go tellWaiting(waitCtx, call, p)
	o := p.Wait(waitCtx)
	stopWaiting()
	a := e.answered(s, p, o) // logs and publishes the outcome, never the answer
	if record, _ := ctx.Value(questionRecord{}).(**evidence.Approval); record != nil && *record == nil {
		// The turn's record says who answered, and on which channel. (A
		// call that was itself held for approval first keeps that
		// approval there; its reply names the answer's channel and who.)
		*record = a
	}

	by := ""
	if o.By != "" {
		by = " by " + o.By
	}
	switch {
	case o.Channel == approval.ChannelTimeout:
		return output{}, pagetext.Ownf("await_human: nobody answered question %s within %s, so there is no answer; ask again, or go on without it", p.ID, timeout)
	case o.Channel == approval.ChannelCancelled:
		return output{}, pagetext.Ownf("await_human: the call or its session ended while question %s waited for an answer", p.ID)
	case !o.Approved:
		note := ""
		if o.Note != "" {
			note = ": " + pagetext.Value(o.Note)
		}
		return output{}, pagetext.Ownf("await_human: the operator declined to answer question %s (via %s%s)%s", p.ID, o.Channel, by, note)
	}
	if !p.KeptSecret(o) {
		text := fmt.Sprintf("the operator answered question %s (via %s%s): %s", p.ID, o.Channel, by, pagetext.Value(o.Answer))
		return output{Text: text, Structured: map[string]any{"question": p.ID, "answer": pagetext.Value(o.Answer)}}, nil
	}
	if noSecret != "" { // the broker refuses such an answer: never typed anywhere
		return output{}, pagetext.Ownf("await_human: the operator marked the answer to question %s a secret, but %s", p.ID, noSecret)
	}
	sec, err := e.keepAnswer(s, o.Answer, domains)
	if err != nil {
		return output{}, fmt.Errorf("await_human: the secret answer to question %s could not be kept: %w", p.ID, err)
	}
	on := strings.Join(domains, ", ")
	text := fmt.Sprintf("the operator gave a secret answer to question %s (via %s%s): you do not see it. Type it as %s with type_text into a text field of a page on %s (named by ref or selector), as a manifest secret is typed",
		p.ID, o.Channel, by, sec.Placeholder(), pagetext.Value(on))
	return output{Text: text, Structured: map[string]any{"question": p.ID, "placeholder": sec.Placeholder(), "domain": pagetext.Value(on)}}, nil
}

// secretAnswerDomains are where a secret answer to a question asked on
// page (whose host is host) may be typed: await_human's
// secret_answer_domains when the manifest declares them and host is on
// them, else the host itself; or why no secret answer can be given there.
// The agent chooses the page it asks on, so without the key it chooses
// the host; the operator is shown it before answering.
func secretAnswerDomains(cmd *toolclad.Command, page, host string) ([]string, string) {
	if host == "" {
		return nil, fmt.Sprintf("a secret answer can only be typed on the site it was asked on, and the tab is on %s, which has no host: navigate to the page that needs it first", pagetext.Value(strconv.Quote(page)))
	}
	if cmd == nil || len(cmd.SecretAnswerDomains) == 0 {
		return []string{host}, ""
	}
	for _, d := range cmd.SecretAnswerDomains {
		if p, err := scope.ParsePattern(d); err == nil && p.Match(host) {
			return slices.Clone(cmd.SecretAnswerDomains), ""
		}
	}
	return nil, fmt.Sprintf("a secret answer may only be asked for on a page of await_human's secret_answer_domains (%s), and the tab is on %s: navigate to the page that needs it first", strings.Join(cmd.SecretAnswerDomains, ", "), pagetext.Value(host))
}

// keepAnswer makes value a secret of the session, typed on domains: the
// session's secrets and masker take it, and so do the log lines of its
// backend and of the daemon. It runs within the session's call, so no
// other call of the session reads the set as it changes; the request
// guard's refusals, masked as they happen, read the masker atomically.
func (e *Executor) keepAnswer(s *session, value string, domains []string) (*toolclad.Secret, error) {
	s.answers.mu.Lock()
	defer s.answers.mu.Unlock()
	taken := func(name string) bool {
		return slices.ContainsFunc(s.secrets.Load().All(), func(sec *toolclad.Secret) bool { return sec.Name == name })
	}
	n := len(s.answers.list) + 1
	for taken(answerName(n)) {
		n++
	}
	sec := toolclad.AnsweredSecret(answerName(n), value, domains)
	secrets, err := s.secrets.Load().With(sec)
	if err != nil {
		return nil, err
	}
	s.answers.list = append(s.answers.list, sec)
	s.secrets.Store(secrets)
	s.masker.Store(mask.New(append(secrets.All(), s.passwords.list...)))
	s.backend.keepAnswer(s.manifest, sec)
	e.mu.Lock()
	e.secretAnswers = append(e.secretAnswers, sec)
	e.allSecrets.Store(mask.New(append(secretsOf(e.cfg.Manifests), e.secretAnswers...)))
	e.mu.Unlock()
	return sec, nil
}

// secretsOf are the secrets of the manifests, in order.
func secretsOf(ms []*toolclad.Manifest) []*toolclad.Secret {
	var out []*toolclad.Secret
	for _, m := range ms {
		out = append(out, m.Secrets...)
	}
	return out
}

// keepAnswer has the backend's log lines masked for a secret answer of
// one of its sessions, besides the manifest's secrets.
func (b *backend) keepAnswer(m *toolclad.Manifest, sec *toolclad.Secret) {
	b.answersMu.Lock()
	defer b.answersMu.Unlock()
	b.answered = append(b.answered, sec)
	b.logMasker.Store(mask.New(append(slices.Clone(m.Secrets), b.answered...)))
}

// tellWaiting tells a client that asked for progress, every few seconds,
// that the call waits for the operator's answer.
func tellWaiting(ctx context.Context, call *toolclad.Call, p *approval.Pending) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		call.Progress(fmt.Sprintf("waiting for the operator to answer question %s (%s left)", p.ID, time.Until(p.Deadline).Round(time.Second)))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
