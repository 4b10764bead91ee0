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
	"github.com/chromedp/cdproto/runtime"

	"github.com/browsergate/browsergate/toolclad"
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

// logged is what an entry of the log is masked for besides the pages the
// reply reads (session.logMask): the host of the document it came from
// and the secrets the binding held as it was logged (pageLog.stamp).
type logged struct {
	doc  string
	held []*toolclad.Secret
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
	logged // doc: the host of the document that sent it
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
	// stamp, when set, is the host of the tab's page and the secrets the
	// secret binding holds the tab to now (session.logStamp): each entry is
	// stamped with them as it is logged, so that a reply masks it for them
	// after the tab has left the page. Set before the tab's first event.
	stamp func() (page string, held []*toolclad.Secret)
}

// stamped is what an entry logged now is masked for: from the tab's page
// (doc when given: a request's document) and the binding (stamp).
func (l *pageLog) stamped(doc string) logged {
	if l.stamp == nil {
		return logged{doc: doc}
	}
	page, held := l.stamp()
	if doc == "" {
		doc = page
	}
	return logged{doc: doc, held: held}
}

// maxEarlyExtra bounds the ExtraInfo events kept for requests not seen yet.
const maxEarlyExtra = 64

func newPageLog() *pageLog {
	return &pageLog{byID: map[network.RequestID]*requestEntry{}, early: map[network.RequestID]any{}}
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
		l.addConsole(level, strings.Join(parts, " "), src)
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
		l.addConsole("error", text, src)
	case *cdplog.EventEntryAdded:
		level := string(e.Entry.Level)
		if level == "verbose" {
			level = "debug"
		}
		l.addConsole(level, e.Entry.Text, e.Entry.URL)
	case *network.EventRequestWillBeSent:
		stamp := l.stamped(hostOf(e.DocumentURL))
		l.mu.Lock()
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
		l.requests = append(l.requests, r)
		l.byID[e.RequestID] = r
		if l.details {
			l.keepDetail(r, e.Request)
		}
		if len(l.requests) > maxLogEntries {
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

func (l *pageLog) addConsole(level, text, src string) {
	stamp := l.stamped("")
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
