package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// record concludes a turn: it counts the interaction, builds the evidence
// envelope from what the stages returned, appends it durably, logs the
// decision and builds the reply. A call whose evidence cannot be written
// is reported as failed: nothing happens off the record without the agent
// being told.
func (e *Executor) record(s *session, t *turn) *toolclad.Reply {
	free := t.counted && t.freeContinuation(s.notice) && s.limits.TakeContinuation(&s.manifest.Browser)
	if t.counted && !free {
		s.limits.Interactions++
	}
	// The reply is masked for the agent (the secrets considered on the
	// pages the call was on; its own texts of the session, this call's and
	// every earlier one's, come back as written), the record and the log
	// with every secret of the manifest. Only what came from the pages, the
	// browser and the agent is masked, never browsergate's words around it
	// (package pagetext).
	s.noteReach(t)
	e.keepTypedPassword(s, t) // before the record's masker is read
	full := s.masker.Load()
	c := *t
	c.blocked = slices.Clone(t.blocked)
	maskTurn(&c, s.turnMasks(t, false))
	agent := &c
	maskTurn(t, s.turnMasks(t, true)) // before anything is recorded or logged
	var shot []byte
	var shotErr error
	if s.manifest.Tool.Evidence.Screenshots && s.tab.open() && !errors.Is(t.err, ErrBrowserStart) {
		sctx, cancel := context.WithTimeout(s.tab.ctx, 5*time.Second)
		shot, shotErr = s.screenshot(sctx, false)
		cancel()
	} else if len(t.out.Image) > 0 {
		shot = t.out.Image
	}
	env := &evidence.Envelope{
		Session:        s.id,
		Time:           t.start.UTC(),
		Principal:      s.principal,
		Tool:           s.manifest.Tool.Name,
		Command:        t.recordedCommand(full),
		Args:           e.shownArgs(s, t),
		Decision:       t.decision(),
		Output:         withNotes(t.out),
		DurationMicros: e.cfg.Now().Sub(t.start).Microseconds(),
	}
	if t.counted {
		env.InteractionCount = s.limits.Interactions
	}
	if free {
		env.FreeContinuation = &evidence.Continuation{Page: t.out.continued.page, Of: t.out.continued.of}
	}
	env.Blocked, env.BlockedDropped = recordedBlocked(t.blocked), t.dropped.total()
	env.PermissionsGranted, env.PermissionsGrantedDropped = recordedGrants(t.granted.list), t.granted.dropped
	if t.facts != nil {
		env.Before = t.facts.State.Map()
	}
	if t.tab != nil {
		tr := *t.tab
		tr.URL = full.Mask(tr.URL)
		env.Tab = &tr
	}
	if t.after != nil {
		env.After = t.after.Map()
	}
	env.Files = maskFiles(t.out.Files, full)
	var errs []string
	if t.err != nil {
		errs = append(errs, t.err.Error())
	}
	if sum, err := e.configFor(s.manifest, e.policies.Load(), s.principal); err != nil {
		errs = append(errs, err.Error())
	} else {
		env.ConfigSHA256 = sum
	}
	if shotErr != nil {
		errs = append(errs, "evidence screenshot: "+shotErr.Error())
	}
	if t.recordingErr != nil {
		errs = append(errs, "evidence recording: "+t.recordingErr.Error())
	}
	kept, recErr := maskRecording(t.out.Recording, full)
	if recErr != nil {
		errs = append(errs, "evidence recording: "+recErr.Error())
	}
	env.Recording = append(slices.Clone(t.frames), kept...)
	env.RecordingDropped = t.framesDropped
	env.Error = strings.Join(errs, "; ")
	appendErr := e.cfg.Evidence.Append(env, shot)
	t.recordErr = appendErr
	if appendErr == nil {
		t.seq = env.Seq
	}
	e.logDecision(s, t, env.Decision, appendErr)
	e.publishDecision(s, env)
	if appendErr != nil {
		return &toolclad.Reply{IsError: true,
			Text: "error: the call could not be recorded in the evidence log, so its result is withheld: " + appendErr.Error()}
	}
	return e.reply(s, agent)
}

// recordedBlocked are refused requests as the evidence records them.
func recordedBlocked(blocked []Blocked) []evidence.BlockedRequest {
	var out []evidence.BlockedRequest
	for _, b := range blocked {
		out = append(out, evidence.BlockedRequest{URL: b.URL, Rule: b.Rule, Reason: b.Reason, Layer: b.Layer, Between: b.Between})
	}
	return out
}

// recordedGrants are granted permission requests as the evidence records
// them.
func recordedGrants(grants []permissionGrant) []evidence.PermissionGrant {
	var out []evidence.PermissionGrant
	for _, g := range grants {
		out = append(out, evidence.PermissionGrant{URL: g.URL, Permission: g.Permission, Origin: g.Origin, Between: g.Between})
	}
	return out
}

// maskFiles masks what the page chose of the files a record lists.
func maskFiles(files []evidence.FileRef, m *mask.Masker) []evidence.FileRef {
	var out []evidence.FileRef
	for _, f := range files {
		f.Name, f.URL, f.Refused = m.Mask(f.Name), m.Mask(f.URL), m.Mask(f.Refused)
		out = append(out, f)
	}
	return out
}

// maskRecording masks, with the record's masker, the recordings of a
// command that are text: a performance trace holds what the page put in
// its requests' URLs and its user timing names, a typed secret among
// them, spelled as the trace's JSON and the URLs' percent-encoding spell
// it (the masker reads both). A trace that is no longer JSON once masked
// is not kept: the record says so. The screencast's frames are pixels.
func maskRecording(refs []evidence.RecordingRef, m *mask.Masker) ([]evidence.RecordingRef, error) {
	var out []evidence.RecordingRef
	var err error
	for _, r := range refs {
		if r.Kind == evidence.RecordingTrace {
			r.Data = []byte(m.Mask(string(r.Data)))
			if !json.Valid(r.Data) {
				err = errors.New("the performance trace, masked, is no longer JSON: not kept")
				continue
			}
		}
		out = append(out, r)
	}
	return out, err
}

// ruleAfterLastCall is the rule of a session_end record; ruleGrantedAfter
// that of one which holds only permission requests granted, no refusal.
const (
	ruleAfterLastCall = "refused after the last call"
	ruleGrantedAfter  = "recorded after the last call"
)

// recordPending writes the requests the session's pages made since its
// last record that the request guard refused, and the permission requests
// [browser.permissions] granted them — which no call will take now — in a
// record of their own (kind session_end), masked by the session's masker,
// when there are any. (The pages' downloads have records of their own, written as
// they end: downloads.stop.) ended says why the session (or its browser context) ended. s.mu
// must be held, and the session's pages closed: no call and no page adds
// to them later.
func (e *Executor) recordPending(s *session, ended string) {
	blocked, dropped, granted := s.egress.blocked.takeAll()
	n, g := len(blocked)+dropped.total(), len(granted.list)+granted.dropped
	if n == 0 && g == 0 {
		return
	}
	t := &turn{blocked: blocked, dropped: dropped, granted: granted}
	maskTurn(t, s.turnMasks(t, true))
	rule, reason := ruleAfterLastCall, ended
	if n == 0 {
		rule = ruleGrantedAfter
	} else {
		reason += fmt.Sprintf("; the egress gate had refused %d request(s) the session's pages made by themselves after its last call", n)
	}
	if g > 0 {
		reason += fmt.Sprintf("; [browser.permissions] had granted %d permission request(s) the session's pages made after its last call", g)
	}
	env := &evidence.Envelope{
		Kind:                      evidence.KindSessionEnd,
		Session:                   s.id,
		Time:                      e.cfg.Now().UTC(),
		Principal:                 s.principal,
		Tool:                      s.manifest.Tool.Name,
		Decision:                  evidence.Decision{Stage: evidence.StageEgress, Rule: rule, Reasons: []string{reason}},
		Blocked:                   recordedBlocked(t.blocked),
		BlockedDropped:            dropped.total(),
		PermissionsGranted:        recordedGrants(t.granted.list),
		PermissionsGrantedDropped: granted.dropped,
	}
	attrs := []any{"session", s.id, "tool", s.manifest.Tool.Name, "ended", ended, "blocked_requests", len(blocked)}
	if dropped.total() > 0 {
		attrs = append(attrs, "blocked_dropped", dropped.total())
	}
	if g > 0 {
		attrs = append(attrs, "permissions_granted", g)
	}
	// With a refusal, the lines say "refused", as they did before grants
	// were recorded: operators' alerts match those words.
	what := "requests made after the session's last call"
	if n > 0 {
		what = "requests refused after the session's last call"
	}
	if err := e.cfg.Evidence.Append(env, nil); err != nil {
		s.backend.logger.Error(what+" could not be recorded", append(attrs, "evidence_error", err.Error())...)
		return
	}
	s.backend.logger.Info(what+" recorded", attrs...)
}

// commandName is the command called, or the undeclared tool's name (the
// agent's own string: clipped, and masked when recorded).
func (t *turn) commandName() string {
	if t.call.Command == nil {
		return clip(t.call.Tool, gate.MaxToolNameLen)
	}
	return t.call.Command.Name
}

// recordedCommand is the command as the record and the log name it: a
// declared command's name is browsergate's, an undeclared tool's name the
// agent's own string, masked.
func (t *turn) recordedCommand(m *mask.Masker) string {
	if t.call.Command == nil {
		return m.Mask(t.commandName())
	}
	return t.commandName()
}

// decision is the gate's verdict as the evidence records it: StageGate
// when every stage let the call through, else the stage that refused.
func (t *turn) decision() evidence.Decision {
	d := evidence.Decision{
		Allowed:   t.deny == nil,
		Stage:     evidence.StageGate,
		Scope:     t.verdict.ScopeRule,
		Cedar:     t.verdict.Cedar,
		PolicyIDs: t.verdict.PolicyIDs,
		Approval:  t.approval,
	}
	if t.deny != nil {
		d.Stage, d.Rule, d.Reasons = t.deny.Stage, t.deny.Rule, []string{t.deny.Reason}
		d.PolicyIDs = t.deny.PolicyIDs
	}
	return d
}

func (e *Executor) logDecision(s *session, t *turn, d evidence.Decision, appendErr error) {
	attrs := []any{
		"session", s.id, "tool", s.manifest.Tool.Name, "command", t.recordedCommand(s.masker.Load()),
		"allowed", d.Allowed, "stage", string(d.Stage),
		"duration", e.cfg.Now().Sub(t.start),
	}
	// The turn is masked already (record): its texts are logged as they
	// are recorded.
	if t.deny != nil {
		attrs = append(attrs, "rule", t.deny.Rule, "reason", mask.Masked(t.deny.Reason))
	}
	if t.after != nil {
		attrs = append(attrs, "url", mask.Masked(t.after.URL))
	}
	if len(t.blocked) > 0 {
		attrs = append(attrs, "blocked_requests", len(t.blocked))
	}
	if n := t.dropped.total(); n > 0 {
		attrs = append(attrs, "blocked_dropped", n)
	}
	if t.err != nil {
		attrs = append(attrs, "error", mask.Masked(t.err.Error()))
	}
	if appendErr != nil {
		attrs = append(attrs, "evidence_error", appendErr.Error())
	}
	if t.domQuiet.End != "" {
		attrs = append(attrs, "dom_quiet", t.domQuiet.End, "dom_watched", t.domQuiet.Watched)
	}
	t.mark("record")
	attrs = append(attrs, "ms", t.timing())
	s.backend.logger.Info("gate decision", attrs...)
}

// recordedArgs are the call's arguments with what is typed into a password
// field masked. The evidence log and a human approver see them through
// Executor.shownArgs, which masks secret values too.
func (t *turn) recordedArgs() map[string]any {
	args := t.call.Args
	if t.call.ArgErr != nil || args == nil {
		args = t.call.RawArgs
	}
	if !t.verdict.Masked {
		return args
	}
	args = maps.Clone(args)
	if text, ok := args["text"].(string); ok {
		args["text"] = maskedText(text)
	}
	if list, ok := args["fields"].([]any); ok {
		args["fields"] = maskFieldTexts(list, t.verdict.MaskedFields)
	}
	return args
}

// maskedText is what the evidence holds of text typed into a password
// field.
func maskedText(text string) string {
	return fmt.Sprintf("[masked: %d characters typed into a password field]", len([]rune(text)))
}

// shownArgs are the arguments as they are recorded and shown to a human:
// password-field text masked, and any secret value masked (an agent that
// knows a secret and types it itself does not get it recorded).
func (e *Executor) shownArgs(s *session, t *turn) map[string]any {
	args, _ := s.masker.Load().MaskValue(t.recordedArgs()).(map[string]any)
	return args
}

// publishDecision sends a recorded call's decision to the operators'
// event stream, as the evidence holds it.
func (e *Executor) publishDecision(s *session, env *evidence.Envelope) {
	if e.cfg.Events == nil {
		return
	}
	d := env.Decision
	ev := events.Event{Type: events.Decision, Session: s.id, Agent: s.principal, Tool: env.Tool, Command: env.Command,
		Args: env.Args, Allowed: events.Bool(d.Allowed), Stage: string(d.Stage), Rule: d.Rule}
	if len(d.Reasons) > 0 {
		ev.Reason = strings.Join(d.Reasons, "; ")
	}
	for _, st := range []map[string]any{env.After, env.Before} {
		if u, _ := st["url"].(string); u != "" && ev.URL == "" {
			ev.URL = u
		}
	}
	if d.Approval != nil {
		// The approval's id lets a watcher tell what became of the call
		// it approved or denied (the console shows it).
		ev.Approval, ev.By, ev.Channel = d.Approval.ID, d.Approval.By, d.Approval.Channel
	}
	e.cfg.Events.Publish(ev)
}

// maskFieldTexts is fill_form's fields with the text of each masked field
// replaced as recordedArgs replaces type_text's.
func maskFieldTexts(list []any, masked []int) []any {
	out := make([]any, len(list))
	copy(out, list)
	for _, i := range masked {
		if i >= len(out) {
			continue
		}
		rec, ok := out[i].(map[string]any)
		if !ok {
			continue
		}
		c := maps.Clone(rec)
		text, _ := rec["text"].(string)
		c["text"] = maskedText(text)
		out[i] = c
	}
	return out
}
