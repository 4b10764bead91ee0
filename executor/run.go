package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// turn is one call on its way through the loop. Each stage fills in what
// it returns — observe the facts, decide the verdict, act the output — and
// record builds the evidence envelope once, from these values.
type turn struct {
	call      *toolclad.Call
	start     time.Time
	begun     time.Time          // start, on the monotonic clock, for timing
	facts     *facts             // what observe saw before acting (nil: refused before)
	verdict   gate.Verdict       // the gate's answer on those facts
	deny      *DenyError         // the refusal, from whichever stage refused
	after     *PageState         // the tab after the call (or after a reset)
	left      pageURL            // the tab and URL the call left it at, when enforce then reset it or switched away (a refusal quotes it)
	pages     []gate.Page        // the session's other tabs after the call
	out       output             // what act produced
	err       error              // act's failure
	counted   bool               // the call is an interaction (it passed the limits)
	blocked   []Blocked          // requests the guard refused while the call ran
	dropped   blockDrops         // refusals of the call (and before it) that blocked does not list
	granted   permissionGrants   // permission requests [browser.permissions] granted (never refusals)
	ask       *toolclad.Question // ask the client's user first (multi round-trip)
	recordErr error              // the evidence append failed
	seq       uint64             // the call's record (0 until written)
	approval  *evidence.Approval
	tab       *evidence.TabRef // the tab the call acted in (as it began)
	domQuiet  domQuietEnd      // how the quiet-DOM wait after the action ended ("": none ran)
	// frames are the screencast of the call, framesDropped the frames the
	// bounds left out, recordingErr why the screencast failed (recording.go).
	frames        []evidence.RecordingRef
	framesDropped int
	recordingErr  error
	// stages are how long each stage took, for the decision's log line.
	stages []stageTime
}

// stageTime is how long one stage of a call took.
type stageTime struct {
	name string
	at   time.Time
}

// mark notes that a stage ended now.
func (t *turn) mark(stage string) { t.stages = append(t.stages, stageTime{stage, time.Now()}) }

// timing says how long each stage took, in milliseconds: "observe=1.2
// decide=0.1 …", from the call's start.
func (t *turn) timing() string {
	var b strings.Builder
	prev := t.begun
	for _, s := range t.stages {
		fmt.Fprintf(&b, "%s=%.1f ", s.name, float64(s.at.Sub(prev).Microseconds())/1000)
		prev = s.at
	}
	return strings.TrimSpace(b.String())
}

// Run is the loop for one MCP tool call: observe, decide, enforce, act,
// record. It always returns a reply, and it has always recorded the call
// in the evidence log when it returns (or says that it could not).
func (e *Executor) Run(ctx context.Context, call *toolclad.Call) *toolclad.Reply {
	t := &turn{call: call, start: e.cfg.Now(), begun: time.Now()}
	s, err := e.session(call)
	if err != nil {
		return &toolclad.Reply{Text: "error: " + err.Error(), IsError: true}
	}
	s.mu.Lock()
	if s.limits.unused {
		// Made ready before its first call: its life begins now.
		s.limits.unused = false
		s.limits.Created, s.limits.LastCall = t.start, t.start
		if s.limits.unusedTimer != nil {
			s.limits.unusedTimer.Stop()
		}
	}
	// An expired session is replaced by a new one, unless the manifest
	// asks for expired sessions to refuse every call (on_expiry).
	if why := s.limits.Expiry(&s.manifest.Browser, t.start); why != "" && !s.ended &&
		s.manifest.Browser.OnExpiry != toolclad.OnExpiryRefuse {
		s.mu.Unlock()
		if s, err = e.renew(s, why); err != nil {
			return &toolclad.Reply{Text: "error: " + err.Error(), IsError: true}
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	defer func() { s.lastCallEnd = time.Now() }()
	s.raiseLowered()
	if s.ended || s.stopped() != nil {
		return &toolclad.Reply{Text: "error: " + e.endedText(s), IsError: true}
	}
	// What the agent writes is its own for the rest of the session: every
	// reply shows it as written (mask.Masker.ForAgent).
	s.agent.Note(e.allSecrets.Load(), mask.ArgTexts(call.RawArgs))
	mark := s.egress.blocked.mark()
	s.groups, s.command = call.Groups, call.Command
	if s.downloads != nil {
		s.downloads.beginCall(s.view())
	}
	e.runTurn(ctx, s, t)
	// An approval asked about in an earlier round is taken up only by the
	// client's return to that very call, which uses it (and clears the
	// hold). Any other call of the session, or a return that stopped
	// before using it, withdraws it: nothing runs later under it.
	if s.hold.id != "" && t.ask == nil {
		e.withdraw(s)
	}
	e.armTimers(s)
	if t.ask != nil {
		// Not concluded: the call counts when the client comes back with
		// the answer. This round is recorded as held.
		t.counted = false
		t.deny = deny(evidence.StageApproval, "approval asked",
			"held for a human's approval (%s): the MCP client's user was asked, and the call runs only when the client comes back with the answer", s.hold.id)
	}
	// What the pages' own requests were refused between the previous
	// record and this call is recorded with this one, marked so, with
	// what the call's own refused; and how many of each were not kept.
	// The permission requests granted travel the same way, apart.
	t.blocked, t.dropped, t.granted = s.egress.blocked.take(mark)
	// What became of the pages' downloads since the last reply (this
	// call's, and any that ended or began to wait for a human after it):
	// each has a record of its own, linked to the call it began in, and
	// those that ended during this call are written after its record. A
	// refusal's or an error's reply shows no output: the news waits for
	// the next reply that does.
	if t.deny == nil && t.err == nil {
		if news := s.downloads.take(); len(news) > 0 {
			t.out.Text += downloadNote(news, s.downloadValue)
		}
	}
	if s.autoloaded != nil {
		// The manifest's autoload_state, loaded in this call.
		t.out.Files = append([]evidence.FileRef{*s.autoloaded}, t.out.Files...)
		s.autoloaded = nil
	}
	reply := e.record(s, t)
	if s.downloads != nil {
		s.downloads.endCall(t.seq, s.view())
	}
	if t.ask != nil && t.recordErr == nil {
		return &toolclad.Reply{Ask: t.ask}
	}
	return reply
}

// runTurn takes the call through the stages, stopping at the first that
// refuses it.
func (e *Executor) runTurn(ctx context.Context, s *session, t *turn) {
	// Refusals that need no browser: an undeclared tool, bad arguments,
	// an expired session or a used-up budget.
	if v := gate.Preflight(e.question(s, t, nil, false)); v.Deny != nil {
		t.verdict, t.deny = v, v.Deny
		return
	}
	s.limits.LastCall = t.start
	t.counted = true
	if s.isWeb() {
		e.runWebTurn(ctx, s, t)
		return
	}

	// The call waits for its turn among the browser calls running at
	// once (turnstile). A human's answer is waited for without a place:
	// await_human's, and an approval's.
	var leave func()
	defer func() {
		if leave != nil {
			leave()
		}
	}()
	if !commandTable[t.call.Command.Name].asksHuman {
		// A call coming back with a human's answer (an approval asked
		// through the client) waits without the bound: it was decided.
		if leave, t.deny = e.turns.enter(ctx, s, t.call.Resume == nil); t.deny != nil {
			t.counted = false // it did nothing
			return
		}
		t.mark("turn")
	}
	if err := s.ensureTab(); err != nil {
		t.err = err
		t.deny = deny(evidence.StageAct, "browser", "%v", err)
		return
	}
	t.mark("tab")
	s.beginObjects()
	defer s.releaseObjects() // after checkAfter: nothing of the call uses them then
	actx, cancel := e.actContext(ctx, s)
	defer cancel()
	if t.deny = e.autoload(actx, s, t); t.deny != nil {
		return
	}

	// Observe, decide, enforce.
	cmd := t.call.Command
	acted := false
	defer func() {
		if !acted {
			dropUpload(t.facts)
		}
	}()
	t.facts = s.observe(actx, cmd, t.call.Args)
	if !specOf(cmd.Name, t.call.Args).changesPage() {
		s.observed(t.facts.State.URL) // what it reads is of this page
	}
	t.mark("observe")
	cur := s.tab.targetID()
	t.tab = &evidence.TabRef{ID: s.tabIDs.id(cur), Owner: s.tabOwner(cur), URL: t.facts.State.URL, Context: s.contexts.recorded()}
	t.verdict = gate.Decide(e.question(s, t, t.facts, false))
	t.mark("decide")
	if t.deny = e.enforce(actx, s, t, t.verdict); t.deny != nil {
		return
	}
	if len(t.verdict.Approval) > 0 {
		// What the human is asked to let the session reach (the verdict
		// is decided again after the approval).
		held := t.verdict.Outside
		// Waiting for a human does not use up the action's time, nor a
		// place among the calls running: once approved, the call takes a
		// place again (without the bound: a human decided it) before it
		// reads the page again.
		var retake func() *DenyError
		if leave != nil {
			leave()
			leave = nil
			retake = func() (d *DenyError) {
				leave, d = e.turns.enter(ctx, s, false)
				return d
			}
		}
		if t.deny = e.approve(ctx, s, t, retake); t.deny != nil || t.ask != nil {
			return
		}
		cancel()
		actx, cancel = e.actContext(ctx, s)
		defer cancel()
		if t.deny = s.admitOutside(&t.verdict, held, t.approval); t.deny != nil {
			return
		}
		t.mark("approval")
	}

	// Nothing acts once the session has begun to end, whatever the call
	// was waiting for.
	if t.deny = s.stopped(); t.deny != nil {
		return
	}
	if commandTable[cmd.Name].asksHuman {
		// Waiting for the operator's answer does not use up the action's
		// time either: the question has its own deadline.
		cancel()
		actx, cancel = questionContext(ctx, s, t.call, &t.approval)
		defer cancel()
	}
	acted = true
	cast, castErr := s.startRecording()
	unjudged := e.act(actx, s, t)
	t.mark("act")
	e.checkAfter(s, t, unjudged)
	t.mark("after")
	var stopErr error
	t.frames, t.framesDropped, stopErr = s.stopRecording(cast)
	t.recordingErr = errors.Join(castErr, stopErr)
}

// act runs the command, with the acting guard holding the page to what
// the gate judged, and waits until the page is quiet. It returns the first
// navigation or form submission the acting guard stopped meanwhile (nil:
// none). Every
// call that reaches act counts as run, whether or not the action
// succeeded: a submit that timed out may still have been sent.
func (e *Executor) act(actx context.Context, s *session, t *turn) *Blocked {
	cmd := t.call.Command
	spec := specOf(cmd.Name, t.call.Args)
	s.limits.Counts[cmd.Name]++
	if t.verdict.Submits {
		s.limits.Counts["submit_form"]++
	}
	mark := s.egress.blocked.mark()
	if ic := s.egress.ic.Load(); ic != nil {
		ic.frameNavs.Clear() // the last action's, never claimed
		ic.vouched.Clear()
	}
	// The guard of the context the action begins in: new_context and
	// switch_context change the current one, and the action ends in the
	// guard it began in.
	acting := s.egress.acting
	if spec.guarded {
		posts, to, urls := judged(t.facts)
		acting.begin(posts, to, urls)
	}
	if spec.navigates {
		acting.navigating(navigatesTo(t.facts, t.call.Args))
		defer acting.navigating("")
	}
	// A dialog the command opens stops the page, and whatever the command
	// waits for with it: held for the agent ("ask"), it ends the wait.
	w := s.tab.watch
	holding := false
	// A question to the operator is not the page's business: a dialog the
	// page opens while it waits is answered as between calls, and does
	// not end the wait.
	if cmd.Name != "handle_dialog" && !spec.asksHuman {
		var stop context.CancelFunc
		actx, stop = context.WithCancel(actx)
		defer stop()
		if holding = w.holdDialogs(stop); holding {
			defer w.releaseDialogs()
		}
	}
	docs, navs, began := w.documentRequests(), w.navigationCount(), s.downloads.begun()
	t.out, t.err = spec.act(actx, s, t.call.Args, t.facts)
	t.err = s.unanswered(actx, t.err)
	if t.err != nil && !s.tab.open() {
		// The page closed its own tab as the action ran (window.close()
		// in a click handler): the action reached it; checkAfter goes
		// back to the first tab and says so.
		t.out, t.err = output{Text: fmt.Sprintf("the tab closed while the %s ran (%s)", cmd.Name, pagetext.Value(t.err.Error()))}, nil
	}
	held := w.pendingDialog()
	if held != nil {
		t.out, t.err = output{Text: heldDialogText(s.manifest, held)}, nil
	}
	if spec.changesPage() && held == nil {
		// The isolated world of a document the action led to is made while
		// the page settles, off the reply's path: the read after the
		// action (checkAfter) finds it made. It is done before act is.
		// What is not done when the page has settled is given up (the read
		// after makes the world itself): act takes no longer for it.
		var made sync.WaitGroup
		wctx, giveUp := context.WithCancel(actx)
		makeWorld := func() {
			made.Add(1)
			go func() {
				defer made.Done()
				_, _ = s.world(wctx)
			}()
		}
		if w.navigationCount() != navs {
			makeWorld()
		}
		// The quiet window starts when the action is done: a navigation
		// it starts a moment later is still caught.
		t.domQuiet = s.tab.watch.waitStable(actx, time.Now(), spec.settle, makeWorld, s.waitDOMQuiet)
		giveUp()
		made.Wait()
		// A dialog the action's effects open a moment later (a message
		// to another frame, a timer) is held for the agent too.
		if held = w.pendingDialog(); held != nil {
			t.out, t.err = withDialog(s.manifest, t.out, t.err, held)
		}
	}
	if w.navigationCount() == navs {
		// No document committed (a dialog held the load, say): there is no
		// new document's status to give.
		t.out.reportStatus = false
	}
	// A download the action started is waited for (within the command's
	// time): the reply says where it went.
	linkDownload := t.facts != nil && t.facts.Element != nil && t.facts.Element.Dest.Downloads
	awaitBegin, awaitEnd := downloadWaits(spec, held != nil, linkDownload, w.documentRequests()-docs, w.navigationCount()-navs)
	if awaitBegin {
		s.downloads.waitBegun(actx, began, downloadStartWait)
	}
	if awaitEnd {
		if left := s.downloads.wait(actx, began); len(left) > 0 {
			t.out.Text += stillDownloading(left, s.downloadValue)
		}
	}
	// Holding ends here, in the same step as the last look: a dialog that
	// opens after it is answered at once and the reply notes it, so none
	// is held that the reply does not show.
	if holding {
		if late := w.endHold(); late != nil && held == nil {
			t.out, t.err = withDialog(s.manifest, t.out, t.err, late)
		}
	}
	acting.end()
	return s.egress.blocked.unjudgedSubmission(mark)
}

// downloadWaits says what act waits for after a command's action, given
// whether a dialog holds the page, whether the action clicked a download
// link, and how many document requests (newDocs) and new documents
// (newNavs) the tab saw meanwhile: a download that may have begun and
// that the browser has yet to report (begin: a download link, or a
// document request that committed no document), and the downloads begun
// meanwhile to end (end). A command that does not change the page
// started none, and waits for neither: a navigation of the page's own
// still in flight as it ends (a redirect by a timer during a snapshot)
// once held such a snapshot back for downloadStartWait. Downloads the
// page starts on its own are reported when they end, with the next reply.
func downloadWaits(spec commandSpec, held, linkDownload bool, newDocs, newNavs int) (begin, end bool) {
	if held || !spec.changesPage() {
		return false, false
	}
	return linkDownload || (newDocs > 0 && newNavs == 0), true
}

// withDialog adds the dialog held for the agent to what the action
// returned: a dialog its effects opened a moment after it ended, which did
// not stop it (an error of its own stays one, and says so too).
func withDialog(m *toolclad.Manifest, out output, err error, held *gate.Dialog) (output, error) {
	if err != nil {
		return output{}, fmt.Errorf("%w\n%s", err, heldDialogText(m, held))
	}
	out.Text = strings.TrimRight(out.Text, "\n") + "\n" + heldDialogText(m, held)
	return out, nil
}

// checkAfter observes where the action left the tab and its popups,
// has the gate judge it (gate.After) and enforces. Whatever the action did, the tabs
// must end inside the scope: this runs on its own context, so that a
// client that gave up, or an action that used up its time, cannot skip it.
func (e *Executor) checkAfter(s *session, t *turn, unjudged *Blocked) {
	if !s.tab.open() {
		s.backToFirstTab() // the action closed the tab (window.close())
	}
	pctx, pcancel := context.WithTimeout(s.tab.ctx, 10*time.Second)
	defer pcancel()
	after, _, all, allErr := s.readPage(pctx)
	t.after = &after
	if t.out.reportStatus && t.err == nil {
		t.out = withLanding(t.out, after.URL, s.shownPageURL(pageURL{after.Tab, after.Doc, after.URL}))
		t.out.Text = withStatus(t.out.Text, after.HTTPStatus)
	}
	pages, pagesErr := s.otherPages(pctx, popupSettle, all, allErr)
	t.pages = pages
	o := &gate.Outcome{Command: t.call.Command.Name, State: after, Pages: pages, PagesErr: pagesErr, Asks: gate.AsksOutside(s.manifest)}
	if unjudged != nil {
		o.Unjudged = &gate.Unjudged{Rule: unjudged.Rule, Reason: unjudged.Reason}
	}
	av := gate.After(s.check, o)
	if d := e.enforce(pctx, s, t, av); d != nil {
		t.deny = d
	}
	if ds := s.tab.watch.takeDialogs(); len(ds) > 0 && t.err == nil {
		t.out.Text += dialogNote(ds)
	}
	if lost := s.tab.watch.takeLostDialog(); lost != "" && t.err == nil {
		t.out.Text += "\n[" + lost + "]"
	}
}

// popupSettle bounds the wait for a new popup's first URL after an action.
// A popup that stays blank longer is left open; it is checked again before
// the next call.
const popupSettle = 500 * time.Millisecond

// actContext bounds one command by the manifest's [tool] timeout_seconds,
// and stops it when the client gives up.
func (e *Executor) actContext(ctx context.Context, s *session) (context.Context, context.CancelFunc) {
	return commandContext(ctx, s.tab.ctx, s)
}

// commandContext is a command's context on the session's engine (parent:
// its tab, or its browserless engine): bounded by [tool] timeout_seconds,
// and ended when the client gives up (ctx) or the session begins to end.
func commandContext(ctx, parent context.Context, s *session) (context.Context, context.CancelFunc) {
	timeout := defaultActTimeout
	if n := s.manifest.Tool.TimeoutSeconds; n > 0 {
		timeout = time.Duration(n) * time.Second
	}
	actx, cancel := context.WithTimeout(parent, timeout)
	stop := context.AfterFunc(ctx, cancel)
	stopOnEnd := context.AfterFunc(s.stopping, cancel) // the session began to end (stopCalls)
	return actx, func() { stop(); stopOnEnd(); cancel() }
}

// question gathers what the gate reads for the turn's call: with the
// call and the facts, what the command table says of its command.
func (e *Executor) question(s *session, t *turn, f *facts, approved bool) *gate.Question {
	var spec commandSpec
	if t.call.Command != nil {
		spec = specOf(t.call.Command.Name, t.call.Args)
	}
	return &gate.Question{
		Call:        t.call,
		Facts:       f,
		Observes:    spec.observes,
		ChangesTab:  spec.changesTab || opensTab(t.call),
		OpensTab:    opensTab(t.call),
		UserContext: s.backend.userContext(),
		Scope:       s.backend.scope.Load(),
		Check:       s.check,
		Policies:    e.policies.Load(),
		Secrets:     s.secrets.Load(),
		Principal:   s.principal,
		Groups:      t.call.Groups, // as the agents file says now (it is reloaded with the policies)
		Session:     s.id,
		Limits:      &s.limits.Limits,
		Now:         t.start,
		Approved:    approved,
	}
}
