package executor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// A JavaScript dialog (alert, confirm, prompt, beforeunload) stops the
// page until it is answered. With [browser] dialogs = "ask", a dialog a
// command opens is held open: the command returns at once and says what
// the dialog asks, every other call is refused until the agent answers it
// with handle_dialog, and nothing the gate does meanwhile runs the page's
// scripts (they are stopped; the page state is read from the browser
// alone). A dialog that opens at any other time — between calls, or while
// the gate itself moves the tab — is answered at once, as are all of them
// with "dismiss" or "accept", and the next reply says so. A beforeunload
// dialog answered at once is always accepted: a page may not keep the tab
// (or the gate resetting it) from leaving.
//
// Only the dialogs of the tab's main document are held. One a frame
// opens is answered at once in every mode (dismissed under "ask"): while
// a frame's dialog waits, the page may remove the frame, and Chromium 156
// then crashes at the tab's next navigation, or when told to answer it.
// A held dialog can still end without the agent's answer: the browser
// closes it when a frame in another process opens a dialog of its own;
// the next reply says so.

// dialogState is a tab's dialogs; pageWatch.mu guards it.
type dialogState struct {
	mode string // toolclad.Dialogs*
	// mask masks the session's secrets in a message of the document on
	// host, for the agent (session.maskDialog), before it is cut to a
	// note's length.
	mask func(text, host string) string
	// hold: a command is acting in "ask" mode, and a dialog that opens now
	// is held for the agent; onHeld is called when one is (it ends the
	// command's wait for the browser, which the dialog stops).
	hold    bool
	onHeld  func()
	pending *gate.Dialog
	// pendingFrame is the frame of the held dialog: a dialog of another
	// frame closing is not the held one's.
	pendingFrame cdp.FrameID
	pendingHost  string // the host of the document that opened it
	// answering: handle_dialog is answering the held dialog (its close is
	// the answer's).
	answering bool
	// others counts the dialogs that opened while one was held (a frame's
	// in another process, whose scripts the held dialog does not stop):
	// the browser may have closed the held one for it, or kept it and
	// queued the new one. Their answers wait in deferred until the held
	// dialog is gone: Page.handleJavaScriptDialog answers whichever
	// dialog is showing, which may still be the held one.
	others   int
	deferred []dialogAnswer
	// notes are the dialogs answered at once since the last reply; lost
	// says what became of a held dialog that ended without an answer.
	notes   []string
	lost    string
	answers chan dialogAnswer
}

// maxDialogNotes and maxDialogNote bound the notes of dialogs answered at
// once between two replies.
const (
	maxDialogNotes = 20
	maxDialogNote  = 2000
)

// dialogAnswer is an answer to send to a dialog answered at once.
type dialogAnswer struct {
	accept bool
	text   string
}

// opened handles Page.javascriptDialogOpening, on the read loop; main is
// the tab's main frame, host the host of the document that opened it
// ("": not known).
func (d *dialogState) opened(e *page.EventJavascriptDialogOpening, main cdp.FrameID, host string) {
	info := gate.Dialog{Type: string(e.Type), Message: e.Message, Default: e.DefaultPrompt}
	ofFrame := e.FrameID != "" && main != "" && e.FrameID != main
	if d.hold && d.pending == nil && !ofFrame {
		d.pending, d.pendingFrame, d.pendingHost, d.others = &info, e.FrameID, host, 0
		if d.onHeld != nil {
			d.onHeld()
			d.onHeld = nil
		}
		return
	}
	accept := d.mode == toolclad.DialogsAccept || e.Type == page.DialogTypeBeforeunload
	verb := "dismissed"
	if accept {
		verb = "accepted"
	}
	if ofFrame {
		info.Type += " of a frame"
	}
	// A page that opens dialogs in a loop gets its first few noted, and
	// a count of the rest.
	switch n := len(d.notes); {
	case n < maxDialogNotes:
		d.notes = append(d.notes, verb+" "+info.Type+": "+d.masked(info.Message, host, maxDialogNote))
	case n == maxDialogNotes:
		d.notes = append(d.notes, "more dialogs, answered the same way (not listed)")
	}
	a := dialogAnswer{accept: accept, text: info.Default}
	if d.pending != nil {
		d.others++
		if len(d.deferred) < cap(d.answers) {
			d.deferred = append(d.deferred, a)
		}
		return
	}
	d.send(a)
}

// send queues an answer for answerDialogs.
func (d *dialogState) send(a dialogAnswer) {
	select {
	case d.answers <- a:
	default: // more dialogs than the page can open while one is up
	}
}

// gone: the held dialog is no longer up; the answers that waited for it
// go out.
func (d *dialogState) gone() {
	d.pending, d.answering = nil, false
	for _, a := range d.deferred {
		d.send(a)
	}
	d.deferred = nil
}

// masked is the page's text with the session's secrets masked, then cut
// to n bytes (masked first: a secret cut in two would show a piece). A
// longer text is cut to a few times n before it is masked; a piece of a
// secret at that cut is far past n.
func (d *dialogState) masked(text, host string, n int) string {
	text = clip(text, 8*n)
	if d.mask != nil {
		// Masked for the agent as it is read, for the document that
		// opened it; quoted where it is shown, and marked done there
		// (dialogNote), so the record masks it in full.
		text = pagetext.Unmarked(d.mask(text, host))
	}
	return clip(text, n)
}

// closed handles Page.javascriptDialogClosed: no dialog of its frame is
// open now. A held dialog the agent did not answer was closed by the
// browser (another dialog opened).
func (d *dialogState) closed(e *page.EventJavascriptDialogClosed) {
	if d.pending == nil || (e.FrameID != "" && d.pendingFrame != "" && e.FrameID != d.pendingFrame) {
		return // a dialog answered at once
	}
	if d.answering {
		d.gone()
		return
	}
	verb := "dismissed"
	if e.Result {
		verb = "accepted"
	}
	d.drop(fmt.Sprintf("the browser %s it before it was answered (another dialog opened)", verb))
}

// drop forgets the held dialog, which ended without an answer (unless it
// is being answered); why says how, for the next reply.
func (d *dialogState) drop(why string) {
	if d.pending == nil || d.answering {
		return
	}
	d.lost = fmt.Sprintf("the %s dialog that was waiting for an answer (%s) is gone: %s",
		d.pending.Type, pagetext.Done(inert(strconv.Quote(d.masked(d.pending.Message, d.pendingHost, 200)))), why)
	d.gone()
}

// answerDialogs runs for the life of the tab and sends the answers of the
// dialogs answered at once.
func (w *pageWatch) answerDialogs(tab context.Context) {
	for {
		select {
		case <-tab.Done():
			return
		case a := <-w.dialogs.answers:
			if _, err := chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: a.accept, PromptText: a.text}); err != nil && tab.Err() == nil {
				// The browser lost the dialog (one opened while another
				// was up): say so rather than claim it was answered.
				w.mu.Lock()
				if len(w.dialogs.notes) < maxDialogNotes {
					w.dialogs.notes = append(w.dialogs.notes, "(the browser refused that answer: "+clip(err.Error(), 200)+")")
				}
				w.mu.Unlock()
			}
		}
	}
}

// holdDialogs starts holding, in "ask" mode, the dialogs the acting
// command opens; onHeld is called when one is. It reports whether it
// holds.
func (w *pageWatch) holdDialogs(onHeld func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dialogs.mode != toolclad.DialogsAsk {
		return false
	}
	w.dialogs.hold, w.dialogs.onHeld = true, onHeld
	return true
}

// releaseDialogs: the command is over; later dialogs are answered at once.
func (w *pageWatch) releaseDialogs() {
	w.mu.Lock()
	w.dialogs.hold, w.dialogs.onHeld = false, nil
	w.mu.Unlock()
}

// endHold ends holding (releaseDialogs) and returns the dialog held for
// the agent (nil: none), in one step.
func (w *pageWatch) endHold() *gate.Dialog {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dialogs.hold, w.dialogs.onHeld = false, nil
	if w.dialogs.pending == nil {
		return nil
	}
	d := *w.dialogs.pending
	return &d
}

// pendingDialog is the dialog held open for the agent (nil: none).
func (w *pageWatch) pendingDialog() *gate.Dialog {
	if w == nil {
		return nil // the tab is gone (a failed reset closed it)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dialogs.pending == nil {
		return nil
	}
	d := *w.dialogs.pending
	return &d
}

// takeLostDialog returns and clears what became of a held dialog that
// ended without an answer ("": none did).
func (w *pageWatch) takeLostDialog() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.dialogs.lost
	w.dialogs.lost = ""
	return l
}

// takeDialogs returns and clears the notes of the dialogs answered at once
// since the last call.
func (w *pageWatch) takeDialogs() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.dialogs.notes
	w.dialogs.notes = nil
	return n
}

// dropDialog forgets the held dialog, which ended without an answer; why
// says how.
func (w *pageWatch) dropDialog(why string) {
	w.mu.Lock()
	w.dialogs.drop(why)
	w.mu.Unlock()
}

// beginAnswer starts handle_dialog's answer to the held dialog: it
// returns the dialog (nil: none is held) and how many other dialogs have
// opened since it was held, and marks it as being answered, in one step.
func (w *pageWatch) beginAnswer() (*gate.Dialog, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dialogs.pending == nil {
		return nil, 0
	}
	w.dialogs.answering = true
	d := *w.dialogs.pending
	return &d, w.dialogs.others
}

// answerFailed: the answer did not reach the browser; the dialog is held
// still.
func (w *pageWatch) answerFailed() {
	w.mu.Lock()
	w.dialogs.answering = false
	w.mu.Unlock()
}

// answered: the held dialog was answered. It returns how many other
// dialogs had opened by then (see beginAnswer).
func (w *pageWatch) answered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.dialogs.others
	if w.dialogs.pending != nil {
		w.dialogs.gone()
	}
	return n
}

// settleOthers waits, briefly, for the browser to say what became of the
// held dialog when another dialog opened after it: Chromium closes it for
// the new one, or keeps it; its close event comes a moment later.
func (w *pageWatch) settleOthers(ctx context.Context) {
	for range 20 {
		w.mu.Lock()
		unsure := w.dialogs.pending != nil && w.dialogs.others > 0
		w.mu.Unlock()
		if !unsure || ctx.Err() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dismissHeld answers a dialog still held when the session lets go of the
// tab (a user's tab must not be left stopped).
func (w *pageWatch) dismissHeld(ctx context.Context) {
	if d, _ := w.beginAnswer(); d == nil {
		return
	}
	if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false}); err == nil {
		w.answered()
	} else {
		w.answerFailed()
	}
}

// heldDialogText tells the agent about the dialog its call opened, the
// page's message quoted and inert. ("ask" is refused at load without
// handle_dialog; a prompt's text is offered only when handle_dialog takes
// it.)
func heldDialogText(m *toolclad.Manifest, d *gate.Dialog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the page opened a JavaScript %s dialog: %s", d.Type, pagetext.Value(inert(strconv.Quote(d.Message))))
	if d.Type == string(page.DialogTypePrompt) {
		fmt.Fprintf(&b, " (default answer %s)", pagetext.Value(inert(strconv.Quote(d.Default))))
	}
	b.WriteString("\nIt is waiting: answer it with handle_dialog {accept: true|false")
	if d.Type == string(page.DialogTypePrompt) && m.Offers("handle_dialog", "text") {
		b.WriteString(", text")
	}
	b.WriteString("}. Other commands are refused until then.")
	return b.String()
}

// dialogNote tells the agent which JavaScript dialogs were answered at once
// during the call, each message quoted and inert (the page wrote it).
func dialogNote(ds []string) string {
	quoted := make([]string, len(ds))
	for i, d := range ds {
		quoted[i] = pagetext.Done(inert(strconv.Quote(d))) // masked as it was read (dialogState.masked)
	}
	return fmt.Sprintf("\n[answered %d JavaScript dialog(s) at once: [%s]]", len(ds), strings.Join(quoted, " "))
}

// ErrNoDialog is returned by handle_dialog when no dialog is waiting
// (gate.ErrNoDialog, which the gate's refusal names too).
var ErrNoDialog = gate.ErrNoDialog
