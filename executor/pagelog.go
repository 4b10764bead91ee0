package executor

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// A tab's console and network log, for console_messages and network_log:
// what the page logged (console calls, uncaught exceptions, the browser's
// own log entries) and the requests it made, read from CDP events as they
// come (never by running the page's code). Each log keeps its last
// maxLogEntries entries and counts those it dropped; every entry has a
// sequence number, so an agent can ask for what came since.

const (
	maxLogEntries = 1000
	// maxLogReply bounds the entries one reply gives (the first after
	// since; the reply says how to get the rest).
	maxLogReply = 200
	// maxLogText bounds one message's text and one URL in a reply.
	maxLogText = 2000
	// maxLogKept bounds what the log keeps of each (more than a reply
	// shows, so that masking sees a secret whole before the reply clips).
	maxLogKept = 4 * maxLogText
	// maxLogMethod bounds a request's method in a reply.
	maxLogMethod = 32
)

// consoleEntry is one thing the page logged.
type consoleEntry struct {
	Seq    int    `json:"seq"`
	Level  string `json:"level"` // debug, info, warning, error
	Text   string `json:"text"`
	Source string `json:"source,omitempty"` // url:line when known

	logged
}

// logged is what an entry of the log is masked for (session.logMask):
// the hosts of the session's documents that may have made it, as the
// browser says (pageLog.docOf; for a document load, every document that
// may have started it, pageLog.requestDocs), never its own URL or text.
// nil when the log did not know the document yet.
type logged struct {
	docs []string
	// unknown: a document load whose choosers the guard does not know
	// (session.logMask withholds it).
	unknown bool
}

// loggedBy is an entry made by the document on host ("": not known).
func loggedBy(host string) logged {
	if host == "" {
		return logged{}
	}
	return logged{docs: []string{host}}
}

// requestEntry is one request of the page.
type requestEntry struct {
	Seq    int     `json:"seq"`
	Method string  `json:"method"`
	URL    string  `json:"url"`
	Type   string  `json:"type"`
	Status int64   `json:"status,omitempty"`
	Size   int64   `json:"size,omitempty"`    // encoded bytes received
	Millis float64 `json:"time_ms,omitempty"` // from the request to its end
	Failed string  `json:"failed,omitempty"`  // the browser's error
	// Refused is the guard's rule that refused it ("" when none did).
	Refused string `json:"refused,omitempty"`

	// ID is network_requests' id of it (r<seq>), set as that command
	// lists it.
	ID string `json:"id,omitempty"`

	id     network.RequestID
	start  cdp.MonotonicTime
	logged // docs: the hosts of the documents that may have sent it
	// awaitGuard is the URL of a document load whose credit awaits the
	// guard's (pageLog.settle), "" for none.
	awaitGuard string
	// withheld is the note a reply shows for each of its texts, when it
	// shows none of them (session.shown); "" when it shows them.
	withheld string
	// detail is what network_request shows of it, kept as it came.
	detail requestDetail
}

// requestDetail is a request's headers, post data and response type, as
// network_request reads them: the raw headers of the ExtraInfo events
// (which carry Cookie and Set-Cookie) when they came, else those of the
// request and response events. Bounded as kept, like the log's texts.
type requestDetail struct {
	kept                    bool // the log holds it (pageLog.details, maxDetailKept)
	reqHeaders, respHeaders network.Headers
	rawReq, rawResp         bool // the headers are the ExtraInfo events' raw ones
	postData                string
	hasPostData             bool
	mime                    string
	redirected              bool // the response was a redirect: its body is none of this request's
}

// pageLog is one tab's log.
type pageLog struct {
	mu              sync.Mutex
	console         []consoleEntry
	consoleSeq      int
	requests        []*requestEntry
	byID            map[network.RequestID]*requestEntry
	requestSeq      int
	consoleDropped  int
	requestsDropped int
	// early holds ExtraInfo events that came before their request's
	// event (CDP does not order them), at most maxEarlyExtra.
	early map[network.RequestID]any
	// details: the log keeps its requests' headers, post data and
	// response type for network_request (the session's manifest declares
	// it); set before the tab's first event.
	details bool
	// The tab's documents as the browser reports them (docOf): its
	// frames and the execution contexts of their documents; top is its
	// main frame.
	frames     map[cdp.FrameID]*frameDoc
	contexts   map[runtime.ExecutionContextID]cdp.FrameID
	contextIDs map[string]runtime.ExecutionContextID // by unique id, as a context's end names it
	top        cdp.FrameID
	// loadDocs are the hosts of the documents that may have chosen the
	// URL of a document load of a frame (targetGuard.frameLoaders; nil
	// until the tab's guard is known).
	loadDocs func(frame cdp.FrameID, url string, parent cdp.FrameID) []string
	// pausedDocs is the guard's credit of a document request it paused
	// (targetGuard.pausedCredit; ok false: not paused yet), nil without a
	// guard.
	pausedDocs func(network, url string) (docs []string, ok bool)
	// pending are the requests whose credit awaits the guard's (settle).
	pending []*requestEntry
}

// frameDoc is a frame of the tab: the host of its document's origin ("":
// not known, or opaque) and its parent frame ("": the main frame).
type frameDoc struct {
	host   string
	parent cdp.FrameID
}

// maxFrames bounds the frames and contexts a log follows (Blink allows a
// page 1,000 frames); one it does not follow counts as the main frame's.
const maxFrames = 2048

// frame is frame id's entry, made when there is room; l.mu held.
func (l *pageLog) frame(id cdp.FrameID) *frameDoc {
	f := l.frames[id]
	if f == nil && id != "" && len(l.frames) < maxFrames {
		f = &frameDoc{}
		l.frames[id] = f
	}
	return f
}

// docOf is the host of frame id's document now: its origin's, else (an
// opaque one: data:, a sandboxed frame) its parent's, whose page chose it;
// the main frame's for a frame not known. l.mu held.
func (l *pageLog) docOf(id cdp.FrameID) string {
	for range 32 {
		f := l.frames[id]
		if f == nil {
			break
		}
		if f.host != "" || f.parent == "" {
			return f.host
		}
		id = f.parent
	}
	if f := l.frames[l.top]; f != nil {
		return f.host
	}
	return ""
}

// frameHost is the host of frame id's document now (docOf).
func (l *pageLog) frameHost(id cdp.FrameID) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.docOf(id)
}

// requestDocs are the documents a request is masked for. For a document
// load, those that may have chosen its URL (loadDocs: the guard's window
// group of the frame, and those credited with an earlier load of the URL
// there) and, for a redirect's next request, the servers that named the
// URLs of the chain — never the URL it loads, which
// the browser names as its document (a page would put the secret's site
// there to have its guesses masked); until the guard is known, the tab's
// page as it is before the load commits for the main frame, the parent's
// for a frame. For a subresource, the document that sent it as the
// browser names it (its URL's host is its origin's: a page's history
// calls keep the origin), so that the old page's last beacon, reported
// after the next page committed, is the old page's; its frame's document
// when the URL has no host (about:blank, srcdoc, data:). l.mu held.
func (l *pageLog) requestDocs(e *network.EventRequestWillBeSent) logged {
	if e.Type != network.ResourceTypeDocument {
		if h := hostOf(e.DocumentURL); h != "" {
			return loggedBy(h)
		}
		return loggedBy(l.docOf(e.FrameID))
	}
	var docs logged
	switch f := l.frames[e.FrameID]; {
	case l.loadDocs != nil:
		var parent cdp.FrameID
		if f != nil {
			parent = f.parent
		}
		docs = logged{docs: l.loadDocs(e.FrameID, e.Request.URL, parent)}
		docs.unknown = docs.docs == nil
		if !docs.unknown {
			// The guard hears of the tab's commits on a connection of its
			// own, maybe after this log: the frame's document and its
			// parent's as the log knows them now may be ones the guard
			// has not taken yet, and may have started the load.
			docs.docs = union(docs.docs, []string{l.docOf(e.FrameID)})
			if parent != "" {
				docs.docs = union(docs.docs, []string{l.docOf(parent)})
			}
		}
	case f != nil && f.parent != "":
		docs = loggedBy(l.docOf(f.parent))
	default:
		docs = loggedBy(l.docOf(e.FrameID))
	}
	if e.RedirectResponse != nil && docs.docs != nil {
		// The request before, whose server named this URL, with the
		// servers that named its own.
		prev := l.byID[e.RequestID]
		if prev == nil || prev.docs == nil {
			return logged{unknown: true}
		}
		docs.docs = union(union(docs.docs, prev.docs), []string{hostOf(e.RedirectResponse.URL)})
	}
	return docs
}

// followGuard has the log credit each document load to the documents the
// tab's guard says may have started it (requestDocs).
func (l *pageLog) followGuard(g *targetGuard) {
	if g == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loadDocs = g.frameLoaders
	l.pausedDocs = g.pausedCredit
}

// awaitsGuard reports whether a request of the log is a document load
// whose credit is the guard's (pausedCredit): one over the network.
func awaitsGuard(e *network.EventRequestWillBeSent) bool {
	return e.Type == network.ResourceTypeDocument && (strings.HasPrefix(e.Request.URL, "http:") || strings.HasPrefix(e.Request.URL, "https:"))
}

// settle joins the guard's credit (pausedCredit) to that of each
// document load that awaits it (pending), once the guard paused it: as
// the log records a request, and as a reply reads the log, so that the
// guard still keeps the credit. l.mu held.
func (l *pageLog) settle() {
	waiting := l.pending[:0]
	for _, r := range l.pending {
		if l.settle1(r) {
			waiting = append(waiting, r)
		}
	}
	clear(l.pending[len(waiting):])
	l.pending = waiting
}

// settle1 is settle for one request; it reports whether r still awaits
// the guard's credit. l.mu held.
func (l *pageLog) settle1(r *requestEntry) bool {
	if r.awaitGuard == "" {
		return false
	}
	if docs, ok := l.pausedDocs(string(r.id), r.awaitGuard); ok {
		r.logged, r.awaitGuard = joinCredit(r.logged, docs), ""
		return false
	}
	return true
}

// joinCredit is stamp with docs (nil: not known) joined.
func joinCredit(stamp logged, docs []string) logged {
	if docs == nil || stamp.unknown {
		return logged{unknown: true}
	}
	return logged{docs: union(stamp.docs, docs)}
}

// settled is a copy of r as a reply reads it: a document load whose
// credit still awaits the guard's is not known (withheld). l.mu held.
func settled(r *requestEntry) requestEntry {
	c := *r
	if c.awaitGuard != "" {
		c.logged = logged{unknown: true}
	}
	return c
}

// originHost is the host of a document's origin ("" for an opaque one).
func originHost(origin string) string {
	if origin == "" || origin == "null" {
		return ""
	}
	return hostOf(origin)
}

// followFrames takes the events that say which document is in which frame.
func (l *pageLog) followFrames(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventFrameAttached:
		if f := l.frame(e.FrameID); f != nil {
			f.parent = e.ParentFrameID
		}
	case *page.EventFrameNavigated:
		fr := e.Frame
		if fr == nil {
			return
		}
		host := originHost(fr.SecurityOrigin)
		if fr.SecurityOrigin == "" {
			host = hostOf(fr.URL)
		}
		if fr.ParentID == "" {
			l.top = fr.ID
			for id := range l.frames { // the old page's frames went with it
				if id != fr.ID {
					delete(l.frames, id)
				}
			}
		}
		f := l.frame(fr.ID)
		if f == nil {
			return
		}
		f.parent = fr.ParentID
		if fr.ParentID == "" {
			if host == "" {
				// about:blank as the agent leaves a page (emptyBeforeLeaving):
				// the old page's last handlers still run; only the page
				// itself or the agent puts an opaque document in the tab.
				return
			}
		}
		f.host = host
	case *page.EventFrameDetached:
		if e.Reason == page.FrameDetachedReasonRemove {
			delete(l.frames, e.FrameID)
		}
	case *runtime.EventExecutionContextCreated:
		var aux struct {
			IsDefault bool        `json:"isDefault"`
			FrameID   cdp.FrameID `json:"frameId"`
		}
		if e.Context == nil || json.Unmarshal(e.Context.AuxData, &aux) != nil || aux.FrameID == "" {
			return
		}
		if len(l.contexts) < maxFrames {
			l.contexts[e.Context.ID] = aux.FrameID
			l.contextIDs[e.Context.UniqueID] = e.Context.ID
		}
		// A document that was there before the log began (a tab the
		// session attached to) is known by its context's origin.
		if f := l.frame(aux.FrameID); f != nil && aux.IsDefault && f.host == "" {
			f.host = originHost(e.Context.Origin)
		}
	case *runtime.EventExecutionContextDestroyed:
		delete(l.contexts, l.contextIDs[e.ExecutionContextUniqueID])
		delete(l.contextIDs, e.ExecutionContextUniqueID)
	case *runtime.EventExecutionContextsCleared:
		clear(l.contexts)
		clear(l.contextIDs)
	}
}

// contextDoc is the document of execution context id (the main frame's
// when not known).
func (l *pageLog) contextDoc(id runtime.ExecutionContextID) logged {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.contexts[id]
	if !ok {
		f = l.top
	}
	return loggedBy(l.docOf(f))
}

// maxEarlyExtra bounds the ExtraInfo events kept for requests not seen yet.
const maxEarlyExtra = 64

// newPageLog is the log of the tab whose main frame is top ("": not
// known yet).
func newPageLog(top cdp.FrameID) *pageLog {
	return &pageLog{byID: map[network.RequestID]*requestEntry{}, early: map[network.RequestID]any{},
		frames: map[cdp.FrameID]*frameDoc{}, contexts: map[runtime.ExecutionContextID]cdp.FrameID{},
		contextIDs: map[string]runtime.ExecutionContextID{}, top: top}
}

// consoleLevels maps console API calls to levels.
var consoleLevels = map[runtime.ConsoleAPICalledType]string{
	runtime.ConsoleAPICalledTypeDebug: "debug", runtime.ConsoleAPICalledTypeLog: "info", runtime.ConsoleAPICalledTypeInfo: "info",
	runtime.ConsoleAPICalledTypeWarning: "warning", runtime.ConsoleAPICalledTypeError: "error", runtime.ConsoleAPICalledTypeAssert: "error",
	runtime.ConsoleAPICalledTypeTrace: "debug",
}

// record takes one CDP event of the tab (on chromedp's read loop).
func (l *pageLog) record(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		level, ok := consoleLevels[e.Type]
		if !ok {
			level = "info"
		}
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = remoteText(a)
		}
		src := ""
		if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
			f := e.StackTrace.CallFrames[0]
			src = f.URL + ":" + strconv.FormatInt(f.LineNumber+1, 10)
		}
		l.addConsole(l.contextDoc(e.ExecutionContextID), level, strings.Join(parts, " "), src)
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		}
		src := ""
		if d.URL != "" {
			src = d.URL + ":" + strconv.FormatInt(d.LineNumber+1, 10)
		}
		l.addConsole(l.contextDoc(d.ExecutionContextID), "error", text, src)
	case *cdplog.EventEntryAdded:
		level := string(e.Entry.Level)
		if level == "verbose" {
			level = "debug"
		}
		l.addConsole(l.contextDoc(0), level, e.Entry.Text, e.Entry.URL) // the browser's, on the tab's page
	case *page.EventFrameAttached, *page.EventFrameNavigated, *page.EventFrameDetached,
		*runtime.EventExecutionContextCreated, *runtime.EventExecutionContextDestroyed, *runtime.EventExecutionContextsCleared:
		l.followFrames(ev)
	case *network.EventRequestWillBeSent:
		l.mu.Lock()
		stamp := l.requestDocs(e)
		defer l.mu.Unlock()
		if e.RedirectResponse != nil {
			if r := l.byID[e.RequestID]; r != nil { // the hop ends; the next is a request of its own
				r.Status = e.RedirectResponse.Status
				if l.details {
					r.detail.redirected = true
					if !r.detail.rawResp {
						r.detail.respHeaders = keptHeaders(e.RedirectResponse.Headers)
					}
				}
				delete(l.byID, e.RequestID)
			}
		}
		l.requestSeq++
		r := &requestEntry{Seq: l.requestSeq, Method: clip(e.Request.Method, maxLogKept), URL: clip(e.Request.URL, maxLogKept), Type: string(e.Type), id: e.RequestID, start: e.Timestamp, logged: stamp}
		if l.pausedDocs != nil && awaitsGuard(e) {
			r.awaitGuard = e.Request.URL
			l.pending = append(l.pending, r)
		}
		l.settle()
		l.requests = append(l.requests, r)
		l.byID[e.RequestID] = r
		if l.details {
			l.keepDetail(r, e.Request)
		}
		if len(l.requests) > maxLogEntries {
			l.requests[0].awaitGuard = "" // gone: settle lets it go
			delete(l.byID, l.requests[0].id)
			l.requests = l.requests[1:]
			l.requestsDropped++
		}
	case *network.EventResponseReceived:
		l.mu.Lock()
		defer l.mu.Unlock()
		if r := l.byID[e.RequestID]; r != nil && e.Response != nil {
			r.Status = e.Response.Status
			if l.details {
				r.detail.mime = clip(e.Response.MimeType, maxLogMethod*4)
				if !r.detail.rawResp {
					r.detail.respHeaders = keptHeaders(e.Response.Headers)
				}
			}
		}
	case *network.EventRequestWillBeSentExtraInfo:
		if l.details {
			l.extra(e.RequestID, e)
		}
	case *network.EventResponseReceivedExtraInfo:
		if l.details {
			l.extra(e.RequestID, e)
		}
	case *network.EventLoadingFinished:
		l.finish(e.RequestID, e.Timestamp, e.EncodedDataLength, "")
	case *network.EventLoadingFailed:
		l.finish(e.RequestID, e.Timestamp, 0, e.ErrorText)
	}
}

// keepDetail keeps what network_request shows of a request that has just
// been logged, and lets go of it for the request maxDetailKept before.
func (l *pageLog) keepDetail(r *requestEntry, req *network.Request) {
	r.detail = requestDetail{kept: true, reqHeaders: keptHeaders(req.Headers), hasPostData: req.HasPostData, postData: postData(req)}
	if early, ok := l.early[r.id]; ok {
		delete(l.early, r.id)
		r.detail.extra(early)
	}
	if n := len(l.requests) - maxDetailKept - 1; n >= 0 {
		l.requests[n].detail = requestDetail{}
	}
}

// extra takes an ExtraInfo event: its raw headers replace those of the
// request's own events. One that comes before its request waits for it.
func (l *pageLog) extra(id network.RequestID, ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byID[id]; r != nil {
		r.detail.extra(ev)
		return
	}
	if len(l.early) == maxEarlyExtra { // of requests never seen (a worker's, say)
		clear(l.early)
	}
	l.early[id] = ev
}

func (d *requestDetail) extra(ev any) {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSentExtraInfo:
		d.reqHeaders, d.rawReq = keptHeaders(e.Headers), true
	case *network.EventResponseReceivedExtraInfo:
		d.respHeaders, d.rawResp = keptHeaders(e.Headers), true
	}
}

// keptHeaders is headers as the log keeps them: at most maxKeptHeaders,
// each value a string of at most maxHeaderKept bytes, maxHeadersKept
// bytes in all (the page chooses its requests' headers).
func keptHeaders(h network.Headers) network.Headers {
	out := make(network.Headers, min(len(h), maxKeptHeaders))
	size := 0
	for _, k := range slices.Sorted(maps.Keys(h)) {
		v, ok := h[k].(string)
		if !ok {
			v = fmt.Sprint(h[k])
		}
		k, v = clip(k, maxLogMethod*4), clip(v, maxHeaderKept)
		if size += len(k) + len(v); len(out) == maxKeptHeaders || size > maxHeadersKept {
			break
		}
		out[k] = v
	}
	return out
}

// The bounds of what a tab's log keeps of its requests' detail, when its
// session's manifest declares network_request (pageLog.details): a hostile
// page's headers and bodies must not grow the daemon.
const (
	// maxDetailKept: the detail of a tab's latest requests only.
	maxDetailKept = 200
	// maxKeptHeaders bounds the headers kept of one request or response.
	maxKeptHeaders = 64
	// maxHeaderShown is the most of a header's value a reply shows;
	// maxHeaderKept, of which it is a part, is what is masked.
	maxHeaderShown = 1000
	maxHeaderKept  = 4 * maxHeaderShown
	// maxHeadersKept bounds one request's or response's headers in all.
	maxHeadersKept = 16 << 10
)

// postData is the request's post data as the event carries it (the
// browser leaves out a long one; network_request asks for it then).
func postData(r *network.Request) string {
	var b strings.Builder
	for _, e := range r.PostDataEntries {
		if b.Len()+len(e.Bytes) > maxBodyKept {
			return ""
		}
		b.Write(e.Bytes)
	}
	return b.String()
}

func (l *pageLog) addConsole(stamp logged, level, text, src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.consoleSeq++
	// Bounded as recorded (the reply clips again, after masking): a page
	// logging megabytes must not grow the daemon.
	l.console = append(l.console, consoleEntry{Seq: l.consoleSeq, Level: level, Text: clip(text, maxLogKept), Source: clip(src, maxLogKept), logged: stamp})
	if len(l.console) > maxLogEntries {
		l.console = l.console[1:]
		l.consoleDropped++
	}
}

func (l *pageLog) finish(id network.RequestID, at cdp.MonotonicTime, size float64, failed string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byID[id]
	if r == nil {
		return
	}
	r.Size, r.Failed = int64(size), failed
	if at > 0 && r.start > 0 {
		r.Millis = float64(at-r.start) * 1000 // monotonic seconds
	}
	delete(l.byID, id)
}

// remoteText renders a console argument as text from what CDP says of it,
// never by calling the page's code: a string as it is, other primitives
// by their value, objects by their description.
func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if o.Type == runtime.RemoteObjectTypeString && len(o.Value) > 0 {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	}
	switch {
	case len(o.Value) > 0:
		return string(o.Value)
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	case o.Type == runtime.RemoteObjectTypeUndefined:
		return "undefined"
	}
	return string(o.Type)
}

// What network_request (commands_network.go) shows of a body, and what
// the log fetches and keeps to show it.
const (
	// maxBodyText is the most of a body network_request shows, in bytes
	// (Chrome DevTools MCP's get_network_request shows 10,000 characters).
	maxBodyText = 10000
	// maxBodyKept is the most of a body masked before it is cut to
	// maxBodyText: a secret across the cut is masked whole.
	maxBodyKept = 4 * maxBodyText
	// maxBodyFetched: a response larger than this is not read at all;
	// the browser keeps no larger body (bodyBuffer).
	maxBodyFetched = 1 << 20
)
