package main

import (
	"strings"
	"testing"
)

// The command-surface suite's steps for the network detail, waiting and
// find (networkSite's pages): find hands out a ref that click takes, a
// wait for text to go and a fixed wait, and the fetch the click made
// listed by network_requests and shown by network_request, its
// Set-Cookie revealed (the suite declares reveal_headers = ["set-cookie"])
// and its Authorization still redacted.

func (s *surface) runNetwork(t *testing.T) {
	s.allow(t, "navigate", map[string]any{"url": s.site + "/network/page"}, `title="Network"`)
	found := s.allow(t, "find", map[string]any{"text": "send"}, `button "Send"`)
	send := findRef(found, `button "Send"`)
	if send == "" || strings.Contains(found, "Away") {
		t.Fatalf("find {text: send} does not give the Send button's ref alone:\n%s", found)
	}
	s.allow(t, "click", map[string]any{"ref": send})
	s.allow(t, "wait_for", map[string]any{"text_gone": "not sent", "timeout_ms": 10000}, "the text is gone")
	s.allow(t, "wait_for", map[string]any{"time_ms": 20}, "waited 20 ms")
	list := s.allow(t, "network_requests", map[string]any{"resource_type": "fetch"}, "/network/api fetch 200")
	api := requestID(list, "/network/api")
	detail := strings.ToLower(s.allow(t, "network_request", map[string]any{"id": api}, "trace-7", "session=cookie-abc123", `"ok":true`))
	if !strings.Contains(detail, "authorization: [redacted") || strings.Contains(detail, "token-xyz789") {
		t.Errorf("network_request %s shows the Authorization header the suite does not reveal:\n%s", api, detail)
	}
}
