package executor

import (
	"fmt"
	"sync"
	"time"

	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
)

// RuleEndedByOperator is the rule of the session_end record an operator's
// ending of a session writes.
const RuleEndedByOperator = "ended by the operator"

// operatorEnds are the sessions operators ended, by the key their calls
// come with: every later call with that key (the same MCP session, agent
// and tool) is refused, until the MCP session itself ends. The tool is
// named, not its manifest: a reload gives a changed manifest a new one,
// and must not open again what an operator ended. Its own lock: Run reads
// it while holding a session's.
type operatorEnds struct {
	mu   sync.Mutex
	keys map[endKey]operatorEnd
}

// endKey is a sessionKey with the tool's name for its manifest.
type endKey struct {
	mcp, agent, tool string
}

func endKeyOf(k sessionKey) endKey {
	return endKey{mcp: k.mcp, agent: k.agent, tool: k.manifest.Tool.Name}
}

// operatorEnd is who ended a session, through what, and when.
type operatorEnd struct {
	session, operator, channel string
	at                         time.Time
}

func (o *operatorEnds) add(k sessionKey, end operatorEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil {
		o.keys = map[endKey]operatorEnd{}
	}
	o.keys[endKeyOf(k)] = end
}

// of is the operator's end of the calls with key k, if there was one.
func (o *operatorEnds) of(k sessionKey) (operatorEnd, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	end, ok := o.keys[endKeyOf(k)]
	return end, ok
}

// forget drops the ends of an MCP session that has ended: its id is not
// used again.
func (o *operatorEnds) forget(mcpID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.keys {
		if k.mcp == mcpID {
			delete(o.keys, k)
		}
	}
}

// refusal is what a call after the end is told.
func (end operatorEnd) refusal() string {
	return fmt.Sprintf("session %s was ended by the operator %s (%s) at %s: this call was refused and nothing was done; "+
		"every later call of this MCP session to this tool is refused too", end.session, end.operator, end.channel, end.at.UTC().Format(time.RFC3339))
}

// EndByOperator ends the open session id for an operator, named as the
// channel (the console) names them: a call waiting for a human is denied,
// the session's browser context closes, its end is recorded in the
// evidence (a session_end record, rule RuleEndedByOperator, with the
// requests its pages made after its last call that the egress gate
// refused) and published, and every later call with the session's key is
// refused, saying so. A session that is not open is ErrSessionNotOpen. The
// session has ended even when its record could not be written: the error
// is then ErrEndNotRecorded.
func (e *Executor) EndByOperator(id, operator, channel string) error {
	e.mu.Lock()
	var key sessionKey
	var s *session
	for k, cand := range e.sessions {
		if cand.id == id {
			key, s = k, cand
		}
	}
	if s == nil {
		e.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrSessionNotOpen, id)
	}
	delete(e.sessions, key)
	end := operatorEnd{session: id, operator: operator, channel: channel, at: e.cfg.Now()}
	e.operatorEnded.add(key, end)
	// Before the session's lock is waited for, and before e.mu is let go:
	// a call that holds the lock is refused wherever it is (stopCalls).
	s.stopCalls(RuleEndedByOperator, fmt.Sprintf("the operator %s ended session %s (%s) while this call was in flight: it was refused and nothing was done",
		operator, id, channel))
	e.ending.Add(1)
	e.mu.Unlock()
	defer e.ending.Done()

	why := fmt.Sprintf("the operator %s ended it (%s)", operator, channel)
	s.mu.Lock()
	// The end is recorded as of now, after the call that held the lock
	// was recorded, so that no record of the session comes after its end.
	end.at = e.cfg.Now()
	e.operatorEnded.add(key, end)
	if s.hold.id != "" && e.cfg.Approvals != nil {
		e.withdraw(s)
	}
	s.end(time.Now().Add(saveEndWait))
	err := e.recordOperatorEnd(s, end)
	s.mu.Unlock()
	e.dropOwnBrowser(s) // a Grid's browser of the session's own goes with it
	s.backend.logger.Warn("session ended by an operator", "session", s.id, "operator", operator, "channel", channel)
	e.cfg.Events.Publish(events.Event{Type: events.SessionEnded, Session: s.id, Agent: s.principal, Tool: s.manifest.Tool.Name,
		Reason: why, By: operator, Channel: channel})
	return err
}

// recordOperatorEnd appends the session_end record of an operator's end
// of the session; s.mu must be held.
func (e *Executor) recordOperatorEnd(s *session, end operatorEnd) error {
	blocked, dropped, granted := s.egress.blocked.takeAll()
	t := &turn{blocked: blocked, dropped: dropped, granted: granted}
	maskTurn(t, s.turnMasks(t, true))
	reason := fmt.Sprintf("the operator %s ended the session (%s)", end.operator, end.channel)
	if n := len(blocked) + dropped.total(); n > 0 {
		reason += fmt.Sprintf("; the egress gate had refused %d request(s) the session's pages made by themselves after its last call", n)
	}
	if g := len(granted.list) + granted.dropped; g > 0 {
		reason += fmt.Sprintf("; [browser.permissions] had granted %d permission request(s) the session's pages made after its last call", g)
	}
	env := &evidence.Envelope{
		Kind:                      evidence.KindSessionEnd,
		Session:                   s.id,
		Time:                      end.at.UTC(),
		Principal:                 s.principal,
		Tool:                      s.manifest.Tool.Name,
		Decision:                  evidence.Decision{Stage: evidence.StageLimits, Rule: RuleEndedByOperator, Reasons: []string{reason}},
		Blocked:                   recordedBlocked(t.blocked),
		BlockedDropped:            dropped.total(),
		PermissionsGranted:        recordedGrants(t.granted.list),
		PermissionsGrantedDropped: granted.dropped,
	}
	if err := e.cfg.Evidence.Append(env, nil); err != nil {
		s.backend.logger.Error("a session's end by an operator could not be recorded", "session", s.id, "operator", end.operator, "evidence_error", err.Error())
		return fmt.Errorf("%w (session %s): %w", ErrEndNotRecorded, s.id, err)
	}
	return nil
}

// endedText is what a call on an ended session is told: who ended it, if
// an operator did.
func (e *Executor) endedText(s *session) string {
	if end, ok := e.operatorEnded.of(sessionKey{s.mcpID, s.agentID, s.manifest}); ok && end.session == s.id {
		return end.refusal()
	}
	return "this session has ended"
}
