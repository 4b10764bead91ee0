package executor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// sent is a request event of a page, with headers.
func sent(id string, headers network.Headers) *network.EventRequestWillBeSent {
	return &network.EventRequestWillBeSent{RequestID: network.RequestID(id), Type: network.ResourceTypeFetch,
		Request: &network.Request{URL: "https://www.example.com/" + id, Method: "GET", Headers: headers}}
}

// TestPageLogKeepsDetailOnlyWhenAskedAndBounded: a tab's log keeps its
// requests' headers only when its session declares network_request; then
// for its latest maxDetailKept requests, at most maxKeptHeaders headers and
// maxHeadersKept bytes of them each, however many the page sends; and an
// ExtraInfo event that comes before its request's event is not lost.
func TestPageLogKeepsDetailOnlyWhenAskedAndBounded(t *testing.T) {
	t.Parallel()
	off := newPageLog("")
	off.record(sent("a", network.Headers{"X-A": "1"}))
	if d := off.requests[0].detail; d.kept || d.reqHeaders != nil {
		t.Errorf("without network_request the log kept %+v", d)
	}

	l := newPageLog("")
	l.details = true
	l.record(&network.EventRequestWillBeSentExtraInfo{RequestID: "early", Headers: network.Headers{"Cookie": "c=1"}})
	l.record(sent("early", network.Headers{"X-A": "1"}))
	if h := l.requests[0].detail.reqHeaders; h["Cookie"] != "c=1" {
		t.Errorf("the early ExtraInfo's headers were lost: %v", h)
	}
	huge := network.Headers{}
	for i := range 500 {
		huge[fmt.Sprintf("X-%03d", i)] = strings.Repeat("v", 5000)
	}
	l.record(sent("huge", huge))
	h := l.requests[1].detail.reqHeaders
	size := 0
	for k, v := range h {
		size += len(k) + len(v.(string))
	}
	if len(h) > maxKeptHeaders || size > maxHeadersKept || len(h) == 0 {
		t.Errorf("a request with 500 headers of 5000 bytes: kept %d headers, %d bytes", len(h), size)
	}
	for i := range maxDetailKept {
		l.record(sent(fmt.Sprint(i), network.Headers{"X-A": "1"}))
	}
	if l.requests[0].detail.kept || l.requests[1].detail.kept || !l.requests[2].detail.kept {
		t.Errorf("after %d more requests the first two keep their detail, or the third does not", maxDetailKept)
	}
}
