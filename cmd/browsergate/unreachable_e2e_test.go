package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestNavigateToASiteThatDoesNotAnswer: a navigate to a loopback port in
// scope where nothing listens is an error that says the site did not
// answer and why (connection refused), not a navigation with the egress
// proxy's 502 and not a refusal of the gate's; the next snapshot shows no
// words of browsergate's inside the page fence; the evidence records the
// call's error; and a page of the site still loads after it.
func TestNavigateToASiteThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	// A port that was free a moment ago: nothing listens on it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("http://127.0.0.1:%d/", l.Addr().(*net.TCPAddr).Port)
	l.Close()

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/"})
	text, failed := f.call(t, "e2e.navigate", map[string]any{"url": down})
	if !failed || !strings.Contains(text, "the site did not answer") || !strings.Contains(text, "connection refused") {
		t.Fatalf("navigate to %s, where nothing listens: want an error saying the site did not answer (connection refused):\n%s", down, text)
	}
	for _, gateWords := range []string{"blocked", "refused by", "DENIED", "egress proxy refused", "502", "Bad Gateway"} {
		if strings.Contains(text, gateWords) {
			t.Errorf("the reply has %q, as if the gate had refused the site:\n%s", gateWords, text)
		}
	}

	snap := f.mustAllow(t, "e2e.snapshot", nil)
	start, end := strings.Index(snap, "[PAGE CONTENT"), strings.Index(snap, "[END PAGE CONTENT")
	if start < 0 || end < start {
		t.Fatalf("snapshot has no page fence:\n%s", snap)
	}
	fence := strings.ToLower(snap[start:end])
	for _, own := range []string{"browsergate", "egress", "dial", "connection refused"} {
		if strings.Contains(fence[len("[page content"):], own) {
			t.Errorf("the page fence holds %q, browsergate's words shown as the page's:\n%s", own, snap)
		}
	}

	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	var line string
	for _, l := range strings.Split(show, "\n") {
		if strings.Contains(l, "navigate") && strings.Contains(l, down) {
			line = l
		}
	}
	if !strings.Contains(line, "error: the site did not answer") || !strings.Contains(line, "connection refused") || strings.Contains(line, "502") {
		t.Errorf("evidence show's line for the navigate to %s does not record the site's silence as its error:\n%s", down, show)
	}

	// The session goes on: the site in scope that does answer loads.
	if reply := f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/"}); strings.Contains(reply, "did not answer") {
		t.Errorf("navigate to the live site after the dead one:\n%s", reply)
	}
}
