package executor

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// network_requests and network_request: the tab's requests (its network
// log, pagelog.go) by id, and one request's headers and text bodies, as
// the peers' list_network_requests and get_network_request give them.
// Everything is masked as every page text is; the credentials
// (toolclad.RedactedHeaders) are redacted unless network_request's
// declaration reveals them. A tab's ids are its own: another tab's or
// another session's requests are not in its log.

func actNetworkRequests(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	since, _ := args["since"].(int64)
	typ, _ := args["resource_type"].(string)
	if typ != "" && !slices.Contains(resourceTypes, typ) {
		return output{}, fmt.Errorf("argument resource_type: %q is not a resource type (one of %s)", typ, strings.Join(resourceTypes, ", "))
	}
	all, more, dropped := s.loggedRequests(since, typ)
	return requestsReply(all, more, dropped, func(b *strings.Builder, r *requestEntry) {
		r.ID = "r" + strconv.Itoa(r.Seq)
		fmt.Fprintf(b, "%s %s %s %s", r.ID, r.Method, r.URL, strings.ToLower(r.Type))
		writeOutcome(b, r)
	}), nil
}

// requestsReply is the reply that lists requests of the log, a line each
// as line writes it (and changes it: the structured reply has it as
// changed), and says what it leaves out (logText).
func requestsReply(all []requestEntry, more, dropped int, line func(*strings.Builder, *requestEntry)) output {
	var b strings.Builder
	items := make([]any, len(all))
	for i := range all {
		line(&b, &all[i])
		b.WriteByte('\n')
		items[i] = all[i]
	}
	last := 0
	if len(all) > 0 {
		last = all[len(all)-1].Seq
	}
	return output{Text: logText(&b, "request", len(all), more, last, dropped),
		Structured: map[string]any{"requests": items}}
}

// resourceTypes are CDP's Network.ResourceType values, lowercase, as
// network_requests' resource_type names them.
var resourceTypes = []string{"document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
	"prefetch", "eventsource", "websocket", "manifest", "signedexchange", "ping", "cspviolationreport", "preflight", "fedcm", "other"}

// loggedRequests are the tab's requests after since (of resource type typ
// when given), the first maxLogReply of them, each masked (shown), clipped
// and marked with the rule that refused it; how many more there are; and
// how many the log no longer holds.
func (s *session) loggedRequests(since int64, typ string) (all []requestEntry, more, dropped int) {
	refused := s.egress.blocked.refusals()
	l := s.tab.watch.log
	l.mu.Lock()
	l.settle()
	for _, r := range l.requests {
		if r.Seq > int(since) && (typ == "" || strings.EqualFold(r.Type, typ)) {
			all = append(all, settled(r))
		}
	}
	dropped = l.requestsDropped
	l.mu.Unlock()
	all, more = first(all)
	for i := range all {
		s.shown(&all[i], refused)
	}
	return all, more, dropped
}

// shown makes a request of the log as a reply shows it: marked with the
// rule that refused it, its texts masked and clipped. The request's own
// texts (its URL, method, headers and body, and why it failed) are the
// page's: they are masked for the secrets of the document that sent it
// (session.logMask), never for the host it went to, or a page could send
// its guesses to a secret's site and read which one came back masked.
//
// Two of its parts could hold a secret its document is not masked for,
// and are withheld whole (a note that reads the same whatever they hold):
// a request refused while the binding held such a secret (the secret's
// page's beacon as the tab left it for another host, or a request of a
// page that never had the value: masked for it, the page's guesses would
// tell; in clear, the value would), whose texts request then withholds;
// and what a host on a secret's domains answered a document off them (it
// may hold the secret; masked, a site that echoes what it is sent would
// tell the right guess), for which respond is nil. What another server
// answered is masked as the request is.
func (s *session) shown(r *requestEntry, refused map[string]Blocked) (request, respond func(string) string) {
	answering := hostOf(r.URL)
	request, byDocs := s.logMask(r.logged)
	if byDocs {
		r.withheld = refusalWithheld
	}
	r.Failed = pagetext.Balanced(clip(request(r.Failed), maxLogText))
	b, ok := refused[refusalKey(string(r.id), r.URL)]
	if !ok {
		b, ok = refused[r.URL]
	}
	if ok && r.Failed != "" {
		r.Refused = b.Rule
		if r.withheld == "" && !s.logAccounts(r.logged, b.Held) {
			r.withheld = requestWithheld
			request = func(string) string { return requestWithheld }
		}
	}
	r.URL = pagetext.Balanced(clip(request(r.URL), maxLogText))
	r.Method = pagetext.Balanced(clip(request(r.Method), maxLogMethod)) // the page chooses it, and the structured reply has it too
	if r.withheld == "" && s.logAccounts(r.logged, s.considered(answering)) {
		respond = request
	}
	return request, respond
}

// requestWithheld stands for every text of a request shown withheld
// (shown), responseWithheld for a response's headers and body.
const (
	requestWithheld  = "[withheld: refused while a secret typed in the session was held, by a page not on its domains]"
	responseWithheld = "not shown: the host that answered is on a secret's domains and the page that sent the request is not"
)

// writeOutcome ends a request's line with what became of it.
func writeOutcome(b *strings.Builder, r *requestEntry) {
	switch {
	case r.Refused != "":
		fmt.Fprintf(b, " REFUSED by the gate (%s)", r.Refused)
	case r.Failed != "":
		fmt.Fprintf(b, " failed: %s", r.Failed)
	case r.Status != 0:
		fmt.Fprintf(b, " %d", r.Status)
	default:
		b.WriteString(" (pending)")
	}
}

func actNetworkRequest(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	id, _ := args["id"].(string)
	seq, err := strconv.Atoi(strings.TrimPrefix(id, "r"))
	if err != nil || !strings.HasPrefix(id, "r") {
		return output{}, fmt.Errorf("argument id: %q is not a request id (r1, r2, ... from network_requests)", id)
	}
	r, ok := s.tabRequest(seq)
	if !ok {
		return output{}, fmt.Errorf("argument id: the current tab has no request %s: ids come from network_requests of this tab, which keeps its last %d requests", id, maxLogEntries)
	}
	var reveal []string
	if c := s.manifest.Command("network_request"); c != nil {
		reveal = c.RevealHeaders
	}
	mask, respond := s.shown(&r, s.egress.blocked.refusals())
	d := r.detail
	if !d.kept {
		return output{}, fmt.Errorf("argument id: the headers and bodies of %s are no longer kept: the tab keeps them for its latest %d requests", id, maxDetailKept)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", id, r.Method, r.URL, strings.ToLower(r.Type))
	writeOutcome(&b, &r)
	structured := map[string]any{"id": id, "method": r.Method, "url": r.URL, "type": strings.ToLower(r.Type), "status": r.Status}
	if r.withheld != "" {
		b.WriteString("\nrequest headers and body " + r.withheld + "\n")
		structured["request_withheld"] = r.withheld
	} else {
		b.WriteString("\nrequest headers:\n")
		structured["request_headers"] = shownHeaders(&b, d.reqHeaders, reveal, mask)
		reqBody, reqNote := s.requestBody(ctx, &r)
		reqBody, reqCut := cutBody(mask, reqBody)
		if reqNote != "" || reqBody != "" {
			b.WriteString("request body" + bodyNote(reqNote, reqCut) + ":\n" + reqBody + "\n")
		}
		structured["request_body"], structured["request_body_cut"] = reqBody, reqCut
	}
	if r.Refused != "" {
		structured["refused"] = r.Refused
	}
	switch {
	case r.Status != 0 && respond == nil:
		b.WriteString("response headers and body " + responseWithheld)
		structured["response_withheld"] = responseWithheld
	case r.Status != 0:
		b.WriteString("response headers:\n")
		structured["response_headers"] = shownHeaders(&b, d.respHeaders, reveal, respond)
		respBody, respNote := s.responseBody(ctx, &r)
		respBody, respCut := cutBody(respond, respBody)
		b.WriteString("response body" + bodyNote(respNote, respCut) + ":\n" + respBody)
		structured["response_body"], structured["response_body_cut"] = respBody, respCut
		structured["mime_type"] = pagetext.Balanced(respond(r.detail.mime))
	}
	return output{Text: strings.TrimRight(b.String(), "\n"), Structured: map[string]any{"request": structured}}, nil
}

// tabRequest is a copy of the current tab's request seq.
func (s *session) tabRequest(seq int) (requestEntry, bool) {
	l := s.tab.watch.log
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.requests {
		if r.Seq == seq {
			l.settle()
			return settled(r), true
		}
	}
	return requestEntry{}, false
}

// shownHeaders writes headers one a line, sorted, each masked, the
// redacted ones redacted unless revealed, and returns them as written.
func shownHeaders(b *strings.Builder, h map[string]any, reveal []string, mask func(string) string) map[string]string {
	out := make(map[string]string, len(h))
	if len(h) == 0 {
		b.WriteString("  (none seen)\n")
	}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		v, _ := h[k].(string)
		name := pagetext.Balanced(clip(mask(k), maxLogMethod*4))
		lower := strings.ToLower(k)
		switch {
		case slices.Contains(toolclad.RedactedHeaders, lower) && !slices.Contains(reveal, lower):
			v = fmt.Sprintf("[redacted: network_request shows it only with reveal_headers = [%q] declared]", lower)
		default:
			v = pagetext.Balanced(clip(mask(v), maxHeaderShown))
		}
		out[name] = v
		for _, line := range strings.Split(v, "\n") { // duplicate headers come joined by \n
			fmt.Fprintf(b, "  %s: %s\n", name, line)
		}
	}
	return out
}

// requestBody is the request's post data (asked of the browser when the
// event left it out), or a note of why it is not shown.
func (s *session) requestBody(ctx context.Context, r *requestEntry) (body, note string) {
	if !r.detail.hasPostData {
		return "", ""
	}
	data := r.detail.postData
	if data == "" {
		res, err := chromedp.Call(ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: r.id})
		if err != nil {
			return "", "not available: the browser no longer holds it"
		}
		data = string(res.PostData)
	}
	if !utf8.ValidString(data) {
		return "", fmt.Sprintf("not shown: %d bytes that are not text", len(data))
	}
	return data, ""
}

// responseBody is the response's body when it is text, or a note of why
// it is not shown.
func (s *session) responseBody(ctx context.Context, r *requestEntry) (body, note string) {
	switch {
	case r.detail.redirected:
		return "", "none: a redirect"
	case r.Refused != "" || r.Failed != "":
		return "", "none: the request did not complete"
	case !isTextType(r.detail.mime):
		return "", fmt.Sprintf("not shown: %s is not text", cmp.Or(r.detail.mime, "an unknown type"))
	case r.Size > maxBodyFetched:
		return "", fmt.Sprintf("not shown: %d bytes is more than the %d read", r.Size, maxBodyFetched)
	}
	res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: r.id})
	if err != nil {
		return "", fmt.Sprintf("not available: the response has not finished, or the browser no longer holds it (it keeps a tab's latest bodies, each up to %d bytes)", maxBodyFetched)
	}
	if res.Base64encoded && !utf8.Valid(res.Body) {
		return "", fmt.Sprintf("not shown: %d bytes that are not text", len(res.Body))
	}
	return string(res.Body), ""
}

// cutBody masks a body (its first maxBodyKept bytes, so that a secret
// across the cut is masked whole) and cuts it to maxBodyText; cut says by
// how much it was longer ("" when it was not).
func cutBody(mask func(string) string, body string) (string, string) {
	if body == "" {
		return "", ""
	}
	n := len(body)
	masked := mask(clip(body, maxBodyKept))
	if len(masked) <= maxBodyText && n <= maxBodyKept {
		return pagetext.Balanced(masked), ""
	}
	return pagetext.Balanced(clip(masked, maxBodyText)), fmt.Sprintf("cut at %d bytes of %d", maxBodyText, n)
}

// bodyNote is what a body's heading says of it.
func bodyNote(note, cut string) string {
	switch {
	case note != "":
		return " " + note
	case cut != "":
		return " (" + cut + ": the rest is not shown)"
	}
	return ""
}

// isTextType reports whether a MIME type is text network_request shows.
func isTextType(mime string) bool {
	mime = strings.ToLower(strings.TrimSpace(mime))
	switch {
	case strings.HasPrefix(mime, "text/"), strings.HasSuffix(mime, "+json"), strings.HasSuffix(mime, "+xml"):
		return true
	}
	switch mime {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/graphql", "application/x-ndjson", "image/svg+xml":
		return true
	}
	return false
}
