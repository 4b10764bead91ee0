package executor

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// Downloads. Chromium is never left to choose where a download goes: each
// session's target guard sets the download behaviour of the session's
// browser context (in the user's context, of the user's) to "allowAndName"
// into a staging directory of browsergate's, with events on its own
// DevTools connection. Every download of the browser is then reported
// there (Browser.downloadWillBegin, Browser.downloadProgress), and the
// guard takes those whose frame is one of the session's.
//
// Each download a page of the session's starts is decided by the gate as
// a call of the download command about its URL would be (judgePageDownload:
// the manifest, the arguments, the scope, Cedar, a human's approval),
// while Chromium writes it into the staging directory; nothing of it
// reaches the download directory before the gate has allowed it. A
// refused one is cancelled and its staged bytes are removed; so is one
// larger than max_download_bytes. An allowed one is hashed and copied into
// the download directory under a sanitised name (sanitizeFileName) that
// never replaces a file already there (saveFile). Each download has an
// evidence record of its own (kind page_download), written when it has
// ended, naming the call it began in; the reply of that call (or, for one
// that ends later, of the next call) says what became of it.

// downloads is one session's share of the browser's downloads.
type downloads struct {
	declared bool   // the manifest declares download
	dir      string // the download directory ("" when not declared)
	max      int64  // max_download_bytes
	staging  string // where Chromium writes, under names of its own (GUIDs); set before any download
	check    gate.URLCheck
	logger   *slog.Logger
	// cancel asks the browser to cancel a download that names no way of
	// its own (download.cancel; the guard always names one).
	cancel func(guid string)
	// gate decides a download (nil: every download is refused); asking
	// is called when it waits for a human. record writes an ended
	// download's evidence record (nil: none is written).
	gate   func(ctx context.Context, dl *download, asking func(id string)) downloadAnswer
	record func(dl *download)
	// ctx ends with the session (stop): the waits for a human end with it.
	ctx    context.Context
	endCtx context.CancelFunc

	mu    sync.Mutex
	began int // downloads begun, ever
	// cancelling counts the cancels asked of the browser and not yet
	// answered (cancelLater).
	cancelling int
	active     map[string]*download
	// news are what the agent has not been told yet: downloads that
	// ended, and those that began to wait for a human.
	news []downloadNews
	// unrecorded are the downloads that ended and whose record is not
	// written yet: those of the call under way wait for its record.
	unrecorded []*download
	// calls counts the session's calls; inCall: one is under way (from
	// its start to its record), lastSeq: the record of the last one.
	calls   int
	inCall  bool
	lastSeq uint64
	stopped bool
	// view is what the gate reads of the session, as of the last call's
	// start or record (the session's own fields are the call's).
	view   sessionView
	change chan struct{} // closed when a download begins or ends
}

// sessionView is what the gate reads of a session for a download: its
// limits (the counters Cedar reads) and its principal's groups.
type sessionView struct {
	limits gate.Limits
	groups []string
}

// download is one download of the session's, from its start to its end.
type download struct {
	guid, url, name string
	// cancel asks the browser to cancel it: the guard's of the browser
	// context it began in (nil: the downloads' cancel).
	cancel func(guid string)
	// shown is the URL as the gate judges and the evidence records it
	// (downloadURL: a data: URL by its digest).
	shown string
	// page is the URL of the document of the frame that started it, as
	// the browser reported it committed ("" unknown); docs, the hosts of
	// the documents that may have chosen its URL
	// (targetGuard.downloadLoaders; nil: not known).
	page string
	docs []string
	seq  int // its place among the session's downloads (begun counts them)
	// The call it began in (calls when it began), or, between calls,
	// the last one; linked: callSeq names that call's record.
	call    int
	between bool
	linked  bool
	callSeq uint64
	// answer is the gate's (nil until it has answered, or when it could
	// not); asking is the approval it waits for ("" none).
	answer downloadAnswer
	asking string
	// refused is why it is not saved (nil while it may be).
	refused   *DenyError
	completed bool // the browser has written all of it into the staging directory
	saving    bool
	// abandoned: the session ended before its save did, and it is
	// recorded as refused; the save never names its file.
	abandoned bool
	ended     bool
	file      evidence.FileRef // what became of it, once ended
	stopWait  context.CancelFunc
}

// A downloadAnswer is the gate's answer about a download, which the
// download's record is written from (downloads_judge.go: the decision of
// the call it is judged as); refusal is why the gate refused it, nil when
// it allowed it.
type downloadAnswer interface{ refusal() *DenyError }

// downloadNews is one thing to tell the agent about a download: it ended
// (file; refused says at which stage, when it was not saved), or it waits
// for a human (asking).
type downloadNews struct {
	file    evidence.FileRef
	refused *DenyError
	asking  string
	docs    []string // download.docs
}

// serverDocs are the hosts of the documents and the server that may have
// chosen what a download's server answered (its file name, its content
// type): those that chose its URL (docs; nil: not known), and the
// server at u, which may have put a value of its own there.
func serverDocs(docs []string, u string) []string {
	if docs == nil {
		return nil
	}
	return union(docs, []string{hostOf(u)})
}

func newDownloads(declared bool, dir string, max int64, staging string, check gate.URLCheck, logger *slog.Logger) *downloads {
	ctx, end := context.WithCancel(context.Background())
	// Made during a call (the session's first tab), or before the first
	// (a warmed session): its downloads are that call's.
	return &downloads{declared: declared, dir: dir, max: max, staging: staging, check: check, logger: logger,
		ctx: ctx, endCtx: end, calls: 1, inCall: true,
		active: map[string]*download{}, change: make(chan struct{})}
}

// behavior is the download behaviour the guard sets for the session.
func (d *downloads) behavior() map[string]any {
	return map[string]any{"behavior": "allowAndName", "downloadPath": d.staging, "eventsEnabled": true}
}

// beginCall notes that a call of the session starts, and what the gate
// reads of the session meanwhile.
func (d *downloads) beginCall(v sessionView) {
	if d == nil {
		return
	}
	d.mu.Lock()
	if !d.inCall {
		d.calls++
		d.inCall = true
	}
	d.view = v
	d.mu.Unlock()
}

// endCall notes that the call under way was recorded as seq (0: its
// record could not be written): the downloads that began in it are linked
// to it, and the records of those that ended are written.
func (d *downloads) endCall(seq uint64, v sessionView) {
	if d == nil {
		return
	}
	d.mu.Lock()
	link := func(dl *download) {
		if !dl.between && dl.call == d.calls {
			dl.linked, dl.callSeq = true, seq
		}
	}
	for _, dl := range d.active {
		link(dl)
	}
	for _, dl := range d.unrecorded {
		link(dl)
	}
	d.inCall, d.lastSeq, d.view = false, seq, v
	d.mu.Unlock()
	d.flush()
}

// currentView is what the gate reads of the session now.
func (d *downloads) currentView() sessionView {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.view
}

// begin takes a download of one of the session's frames as it starts
// and has the gate decide it, on a goroutine of its own (the guard's read
// loop must not wait for a human); page is the URL of the document that
// started it, docs the hosts of those that may have chosen its URL.
func (d *downloads) begin(cancel func(guid string), guid, url, suggested, page string, docs []string) {
	ctx, stop := context.WithCancel(d.ctx)
	dl := &download{cancel: cancel, guid: guid, url: url, name: suggested, shown: downloadURL(url), page: page, docs: docs, stopWait: stop}
	d.mu.Lock()
	d.active[guid] = dl
	d.began++
	dl.seq = d.began
	dl.call, dl.between = d.calls, !d.inCall
	if dl.between {
		dl.linked, dl.callSeq = true, d.lastSeq
	}
	if d.stopped {
		// After the session's end: nothing is decided, nothing kept.
		d.refuseLocked(dl, deny(evidence.StageLimits, "session ended", "the session ended before it did"))
		d.endLocked(dl)
		d.mu.Unlock()
		d.flush()
		return
	}
	d.notify()
	d.mu.Unlock()
	go d.judge(ctx, dl)
}

// judge has the gate decide a download and acts on the answer: a refused
// download is cancelled, an allowed one that the browser has completed is
// saved. Any failure to decide refuses it.
func (d *downloads) judge(ctx context.Context, dl *download) {
	a, refused := d.decide(ctx, dl)
	d.mu.Lock()
	switch {
	case dl.ended:
		// Ended meanwhile (cancelled, or the session ended): its record
		// is written, or being written, without this answer.
	case refused != nil:
		dl.answer, dl.asking = a, ""
		d.refuseLocked(dl, refused)
	default:
		dl.answer, dl.asking = a, ""
		if dl.completed && !dl.saving && dl.refused == nil {
			d.startSaveLocked(dl)
		}
	}
	d.notify()
	d.mu.Unlock()
	d.flush()
}

// decide is the gate's answer about dl and its refusal, failing closed:
// no gate, no answer, or a gate that panics, refuses it (with no answer).
func (d *downloads) decide(ctx context.Context, dl *download) (a downloadAnswer, refused *DenyError) {
	defer func() {
		if r := recover(); r != nil {
			d.logger.Error("deciding a page's download failed", "url", dl.shown, "panic", r)
			a, refused = nil, deny(evidence.StageObserve, "gate error", "the download could not be decided: %v", r)
		}
	}()
	if d.gate == nil {
		return nil, deny(evidence.StageObserve, "gate error", "no gate decides this session's downloads")
	}
	a = d.gate(ctx, dl, func(id string) { d.asking(dl, id) })
	if a == nil {
		return nil, deny(evidence.StageObserve, "gate error", "the gate gave no answer")
	}
	return a, a.refusal()
}

// asking notes that dl waits for a human's answer to approval id: the
// call it began in does not wait for it, and the agent is told.
func (d *downloads) asking(dl *download, id string) {
	d.mu.Lock()
	if !dl.ended {
		dl.asking = id
		d.news = append(d.news, downloadNews{file: evidence.FileRef{Direction: "download", Name: dl.name, URL: dl.shown}, asking: id, docs: dl.docs})
		d.notify()
	}
	d.mu.Unlock()
}

// refuseLocked refuses a download: the browser is told to cancel it, and
// one it had completed ends now (its staged bytes removed). d.mu is held.
func (d *downloads) refuseLocked(dl *download, why *DenyError) {
	if dl.refused == nil {
		dl.refused = why
		d.cancelLater(dl)
	}
	if dl.completed && !dl.saving {
		d.endLocked(dl)
	}
}

// progress takes a download's progress; it reports whether the download
// is the session's.
func (d *downloads) progress(guid, state string, total, received int64) bool {
	d.mu.Lock()
	dl := d.active[guid]
	if dl == nil {
		d.mu.Unlock()
		return false
	}
	if !dl.saving { // being saved: its end is the save's
		if dl.refused == nil && (total > d.max || received > d.max) {
			d.refuseLocked(dl, deny(evidence.StageLimits, "max_download_bytes", "larger than max_download_bytes (%d bytes)", d.max))
		}
		switch state {
		case "completed":
			dl.completed = true
			switch {
			case dl.refused != nil:
				d.endLocked(dl)
			case dl.answer != nil:
				d.startSaveLocked(dl)
			}
			// Otherwise it stays in the staging directory until the gate
			// (or the human) has answered.
		case "canceled":
			if dl.refused == nil {
				dl.refused = deny(evidence.StageAct, "cancelled", "cancelled by the page or the browser before it ended")
			}
			d.endLocked(dl)
		}
	}
	d.mu.Unlock()
	d.flush()
	return true
}

// startSaveLocked starts saving an allowed, completed download. d.mu is
// held.
func (d *downloads) startSaveLocked(dl *download) {
	dl.saving = true
	go d.save(dl)
}

// endLocked ends a download that was not saved: its staged bytes are
// removed, its wait for a human (if any) ends, and it is told and
// recorded as refused. d.mu is held.
func (d *downloads) endLocked(dl *download) {
	if dl.ended {
		return
	}
	delete(d.active, dl.guid)
	d.removeStaged(dl.guid)
	why := dl.refused
	if why == nil {
		why = deny(evidence.StageAct, "cancelled", "it ended without being saved")
		dl.refused = why
	}
	d.finishLocked(dl, evidence.FileRef{Direction: "download", Name: dl.name, URL: dl.shown, Refused: why.Reason})
}

// finishLocked concludes a download: file says what became of it.
// d.mu is held.
func (d *downloads) finishLocked(dl *download, file evidence.FileRef) {
	dl.ended, dl.file = true, file
	dl.stopWait()
	d.news = append(d.news, downloadNews{file: file, refused: dl.refused, docs: dl.docs})
	d.unrecorded = append(d.unrecorded, dl)
	d.notify()
}

// flush writes the records of the ended downloads whose call is known:
// those of the call under way wait for its record (endCall), unless the
// session has ended.
func (d *downloads) flush() {
	d.mu.Lock()
	var ready []*download
	rest := d.unrecorded[:0]
	for _, dl := range d.unrecorded {
		if dl.linked || d.stopped {
			ready = append(ready, dl)
		} else {
			rest = append(rest, dl)
		}
	}
	d.unrecorded = rest
	d.mu.Unlock()
	if d.record == nil {
		return
	}
	for _, dl := range ready {
		d.record(dl)
	}
}

func (d *downloads) notify() {
	close(d.change)
	d.change = make(chan struct{})
}

// removeStaged removes a download's staged bytes (Chromium's file and its
// in-progress one), now and again a moment later (restagedSweeps).
func (d *downloads) removeStaged(guid string) {
	if !validGUID(guid) {
		return
	}
	d.removeStagedNow(guid)
	for _, after := range restagedSweeps {
		time.AfterFunc(after, func() { d.removeStagedNow(guid) })
	}
}

// restagedSweeps are when a download's staged files are removed again
// after it ended: Chromium may create the (empty) file of a download it
// reported cancelled a moment after it did, while the download's name is
// settled on its file thread.
var restagedSweeps = []time.Duration{250 * time.Millisecond, 2 * time.Second, 10 * time.Second}

func (d *downloads) removeStagedNow(guid string) {
	for _, name := range []string{guid, guid + ".crdownload"} {
		_ = os.Remove(filepath.Join(d.staging, name))
	}
}

// validGUID: a GUID Chromium names a staged file by (never a path).
func validGUID(guid string) bool {
	if guid == "" || len(guid) > 64 {
		return false
	}
	for _, r := range guid {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// save moves a completed download from the staging directory into the
// download directory. The bytes are copied outside d.mu; the file gets
// its name and its record under it, so a session's end (stop) sees the
// download either saved and recorded, or not saved at all.
func (d *downloads) save(dl *download) {
	st, err := d.stageSaved(dl)
	d.mu.Lock()
	defer d.flush()
	defer d.mu.Unlock()
	if dl.abandoned {
		// Recorded as refused when the session ended: nothing is kept.
		st.discard()
		d.notify()
		return
	}
	var ref evidence.FileRef
	if err == nil {
		ref, err = st.link()
	}
	st.discard() // after the link, only the name is left
	if err != nil {
		dl.saving = false
		dl.refused = deny(evidence.StageAct, "save", "%v", err)
		d.endLocked(dl)
		return
	}
	ref.URL = dl.shown
	delete(d.active, dl.guid)
	d.removeStaged(dl.guid)
	d.finishLocked(dl, ref)
}

// stageSaved copies a completed download's bytes from Chromium's staging
// directory into the download directory, under a hidden name.
func (d *downloads) stageSaved(dl *download) (*stagedFile, error) {
	if !validGUID(dl.guid) {
		return nil, fmt.Errorf("the browser named the download %q", dl.guid)
	}
	f, err := os.Open(filepath.Join(d.staging, dl.guid))
	if err != nil {
		return nil, fmt.Errorf("read the downloaded bytes: %w", err)
	}
	defer f.Close()
	return stageFile(d.dir, dl.name, f, d.max, browserNaming)
}

// downloadStartWait bounds the wait for the browser to report a download
// after an action whose document request committed nothing.
const downloadStartWait = time.Second

// begun is how many downloads of the session's have begun.
func (d *downloads) begun() int {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.began
}

// waitBegun waits up to max (or until ctx ends) for a download to begin
// after since were.
func (d *downloads) waitBegun(ctx context.Context, since int, max time.Duration) {
	if d == nil {
		return
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		d.mu.Lock()
		n, ch := d.began, d.change
		d.mu.Unlock()
		if n > since {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// take returns what the agent has not been told yet about the downloads.
func (d *downloads) take() []downloadNews {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.news
	d.news = nil
	return out
}

// wait waits until no download of the session's that began after the
// since-th (those the acting call started) is under way, or ctx ends; it
// returns the ones still under way then. One that waits for a human, and
// one the page started before, do not hold the call up.
func (d *downloads) wait(ctx context.Context, since int) []*download {
	if d == nil {
		return nil
	}
	mine := func() []*download {
		var out []*download
		for _, dl := range d.active {
			if dl.seq > since && dl.asking == "" {
				out = append(out, dl)
			}
		}
		return out
	}
	for {
		d.mu.Lock()
		if len(mine()) == 0 {
			d.mu.Unlock()
			return nil
		}
		ch := d.change
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			d.mu.Lock()
			defer d.mu.Unlock()
			return mine()
		}
	}
}

// stop cancels the downloads still under way when the session ends
// (those waiting for a human too): they are recorded as refused, and
// nothing of them is kept. A download the browser has completed and that
// is being saved is waited for, until deadline, so that its record names
// it: saved, or, when its save has not ended by then, refused with
// nothing kept (its save never gives it a name). The records of every
// download that ended are written before stop returns.
func (d *downloads) stop(deadline time.Time) {
	if d == nil {
		return
	}
	d.endCtx()
	d.stopLocked(deadline)
	d.flush()
	// The browser is told to cancel them before the session's tabs and
	// its guard's connection go (session.end): in the user's browser
	// nothing else would stop them, and one that finished would stay in
	// the shared staging directory.
	d.awaitCancels(time.Now().Add(cancelEndWait))
}

// cancelEndWait bounds the wait for the browser's answers to the cancels
// of a session's downloads when it ends.
const cancelEndWait = 2 * time.Second

// cancelLater asks the browser to cancel a download, on a goroutine of
// its own (the guard's read loop may be the caller); awaitCancels waits
// for those under way. d.mu is held.
func (d *downloads) cancelLater(dl *download) {
	cancel := dl.cancel
	if cancel == nil {
		cancel = d.cancel
	}
	if cancel == nil {
		return
	}
	d.cancelling++
	go func() {
		cancel(dl.guid)
		d.mu.Lock()
		d.cancelling--
		d.notify()
		d.mu.Unlock()
	}()
}

// awaitCancels waits until the browser has answered every cancel asked
// of it, or deadline.
func (d *downloads) awaitCancels(deadline time.Time) {
	if d == nil {
		return
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		d.mu.Lock()
		n, ch := d.cancelling, d.change
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			d.logger.Warn("the browser did not answer every cancel of the session's downloads in time", "unanswered", n)
			return
		}
	}
}

func (d *downloads) stopLocked(deadline time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	// Those not being saved (some may begin while stop waits) are
	// cancelled and recorded as refused.
	cancelUnsaved := func() {
		for _, dl := range d.active {
			if !dl.saving {
				if dl.refused == nil {
					dl.refused = deny(evidence.StageLimits, "session ended", "the session ended before it did")
				}
				d.cancelLater(dl)
				d.endLocked(dl)
			}
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		cancelUnsaved()
		if len(d.active) == 0 {
			return
		}
		ch := d.change
		d.mu.Unlock()
		select {
		case <-ch:
			d.mu.Lock()
		case <-timer.C:
			d.mu.Lock()
			cancelUnsaved()
			for _, dl := range d.active { // saves under way
				dl.abandoned = true
				delete(d.active, dl.guid)
				d.removeStaged(dl.guid)
				dl.refused = deny(evidence.StageLimits, "session ended", "the session ended while it was being saved; nothing was kept")
				d.finishLocked(dl, evidence.FileRef{Direction: "download", Name: dl.name, URL: dl.shown, Refused: dl.refused.Reason})
			}
			return
		}
	}
}

// saveEndWait bounds the wait for the saves under way when sessions end
// (each a copy of at most max_download_bytes on a local disk): one
// deadline for all the sessions that end together.
const saveEndWait = 30 * time.Second

// downloadNote tells the agent what became of downloads: saved, refused
// (at which stage, by which rule), or waiting for a human. value shows
// each value of a download in the note (noteValue, session.downloadValue).
func downloadNote(news []downloadNews, value func(docs []string, v string) string) string {
	var b strings.Builder
	for _, n := range news {
		f := n.file
		// Its URL is its choosers'; what its server answered is theirs and
		// the server's.
		v := func(s string) string { return value(n.docs, s) }
		srv := func(s string) string { return value(serverDocs(n.docs, f.URL), s) }
		switch {
		case n.asking != "":
			fmt.Fprintf(&b, "\ndownload of %s (%s) is waiting for a human's approval (%s): nothing of it reaches the download directory unless it is approved; a later reply says how it ended", v(f.URL), srv(strconv.Quote(f.Name)), n.asking)
		case f.Refused != "" && n.refused != nil:
			fmt.Fprintf(&b, "\ndownload of %s (%s) refused at %s (%s): %s; nothing was saved", v(f.URL), srv(strconv.Quote(f.Name)), n.refused.Stage, n.refused.Rule, srv(f.Refused))
		case f.Refused != "":
			fmt.Fprintf(&b, "\ndownload of %s (%s) refused: %s; nothing was saved", v(f.URL), srv(strconv.Quote(f.Name)), srv(f.Refused))
		default:
			fmt.Fprintf(&b, "\ndownloaded %s: saved as %s in the download directory (%d bytes, %s, sha256 %s)", v(f.URL), srv(f.Name), f.Size, srv(f.ContentType), f.SHA256)
		}
	}
	return b.String()
}

// noteValue shows a value in a note as a page's value, which the reply
// and the record mask (pagetext.Value): the evidence's own text of a
// download, the agent's own download.
func noteValue(_ []string, v string) string { return pagetext.Value(v) }

// stillDownloading tells the agent of downloads the call's time ran out on:
// the reply of a later call says how they ended.
func stillDownloading(left []*download, value func(docs []string, v string) string) string {
	var b strings.Builder
	for _, dl := range left {
		fmt.Fprintf(&b, "\ndownload of %s (%s) still under way: a later reply says how it ended", value(dl.docs, dl.shown), value(serverDocs(dl.docs, dl.url), strconv.Quote(dl.name)))
	}
	return b.String()
}

// downloadURL is a download's URL as the gate judges it, Cedar sees it
// and the evidence and the reply show it: the URL the browser reported,
// except a data: URL, whose bytes are the file itself: it is shown by its
// media type (at most 100 bytes of it), its length and its SHA-256,
// "data:text/plain;base64,[1234 bytes, sha256 …]".
func downloadURL(u string) string {
	if !hasScheme(u, "data:") {
		return u
	}
	head, _, _ := strings.Cut(u[len("data:"):], ",")
	return fmt.Sprintf("data:%s,[%d bytes, sha256 %x]", truncateUTF8(head, 100), len(u), sha256.Sum256([]byte(u)))
}

// hasScheme reports whether u starts with scheme (e.g. "data:"), in any
// case.
func hasScheme(u, scheme string) bool {
	return len(u) >= len(scheme) && strings.EqualFold(u[:len(scheme)], scheme)
}
