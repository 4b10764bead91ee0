package executor

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestARequestToTheSecretsSiteIsNoOracle: a hostile page off the
// secret's domains, where no secret was ever typed, sends its guesses to
// the secret's own site (in scope) in a request's URL. The log's entries
// are masked for where they were sent from, not where they went, so the
// right guess comes back as written, like the wrong one: the page learns
// nothing from the agent's reading its log.
func TestARequestToTheSecretsSiteIsNoOracle(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	m := testkit.SecretManifest(t, value) // PW on login.example.com
	s := maskSession(t, m)
	s.egress.bound.Committed("hostile.example.com")
	s.observed("https://hostile.example.com/")
	l := newPageLog()
	l.stamp = s.logStamp
	for i, guess := range []string{"Aa1-Bb2_Cc3-Dd4", value} {
		l.record(&network.EventRequestWillBeSent{RequestID: network.RequestID(rune('a' + i)), DocumentURL: "https://hostile.example.com/",
			Request: &network.Request{Method: "GET", URL: "https://login.example.com/?g=" + guess}})
	}
	for i := range l.requests {
		r := *l.requests[i]
		s.shown(&r, nil)
		t.Logf("entry %d: %s", i, r.URL)
		if strings.Contains(r.URL, "[secret") || strings.Contains(r.URL, "[part of secret") {
			t.Errorf("a request the hostile page made tells its guess right: %q", r.URL)
		}
	}
}

// TestLogEntriesReadOnTheSecretsSiteAreNoOracle: the same guesses sent
// while the tab was on the hostile page, read after the agent has gone to
// the secret's site, come back as written: an entry is masked for the
// page it was logged on, not for the pages the call reads.
func TestLogEntriesReadOnTheSecretsSiteAreNoOracle(t *testing.T) {
	const value = "Zq8-Lm2_Vx7-Kp4"
	m := testkit.SecretManifest(t, value)
	s := maskSession(t, m)
	s.egress.bound.Committed("hostile.example.com")
	l := newPageLog()
	l.stamp = s.logStamp
	for i, guess := range []string{"Aa1-Bb2_Cc3-Dd4", value} {
		l.record(&network.EventRequestWillBeSent{RequestID: network.RequestID(rune('a' + i)), DocumentURL: "https://hostile.example.com/",
			Request: &network.Request{Method: "GET", URL: "https://hostile.example.com/?g=" + guess}})
	}
	s.egress.bound.Committed("login.example.com")
	s.observed("https://login.example.com/")
	for i := range l.requests {
		r := *l.requests[i]
		s.shown(&r, nil)
		t.Logf("entry %d: %s", i, r.URL)
		if strings.Contains(r.URL, "[secret") {
			t.Errorf("a request the hostile page made, read from the secret's site, tells its guess right: %q", r.URL)
		}
	}
}
