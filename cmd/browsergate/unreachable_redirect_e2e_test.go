package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestNavigateRedirectedToASiteThatDoesNotAnswer: a navigate to a site in
// scope that answers with a redirect to another loopback port in scope
// where nothing listens is the same clear error as a navigate to a dead
// site, naming the URL asked for and the redirect's target, not the egress
// proxy's 502 shown as the page; the next snapshot shows no words of
// browsergate's inside the page fence; the evidence records the error.
func TestNavigateRedirectedToASiteThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	// A port that was free a moment ago: nothing listens on it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d/landing", l.Addr().(*net.TCPAddr).Port)
	l.Close()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, dead, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>Alive</title><p>alive")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	asked := site + "/moved"

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"})
	text, failed := f.call(t, "e2e.navigate", map[string]any{"url": asked})
	if !failed || !strings.Contains(text, "the site did not answer") || !strings.Contains(text, "connection refused") ||
		!strings.Contains(text, asked) || !strings.Contains(text, dead) || !strings.Contains(text, "redirected to") {
		t.Fatalf("navigate to %s, which redirects to %s where nothing listens: want an error naming both, saying the site did not answer (connection refused):\n%s", asked, dead, text)
	}
	if strings.Contains(text, "moved on") {
		t.Errorf("the error calls the server's redirect the page's own move:\n%s", text)
	}
	for _, proxyWords := range []string{"502", "Bad Gateway", "egress proxy", "blocked", "DENIED"} {
		if strings.Contains(text, proxyWords) {
			t.Errorf("the reply has %q, the proxy's or the gate's words:\n%s", proxyWords, text)
		}
	}

	snap := f.mustAllow(t, "e2e.snapshot", nil)
	begin, end := strings.Index(snap, "[PAGE CONTENT"), strings.Index(snap, "[END PAGE CONTENT")
	if begin < 0 || end < begin {
		t.Fatalf("snapshot has no page fence:\n%s", snap)
	}
	fence := strings.ToLower(snap[begin+len("[PAGE CONTENT") : end])
	for _, own := range []string{"browsergate", "egress", "dial", "connection refused", "502"} {
		if strings.Contains(fence, own) {
			t.Errorf("the page fence holds %q, the proxy's words shown as the page's:\n%s", own, snap)
		}
	}

	show, _ := runBinary(t, "evidence", "show", "--evidence", f.evidence)
	var line string
	for _, l := range strings.Split(show, "\n") {
		if strings.Contains(l, "navigate") && strings.Contains(l, asked) {
			line = l
		}
	}
	if !strings.Contains(line, "error: the site did not answer") || !strings.Contains(line, dead) || strings.Contains(line, "502") {
		t.Errorf("evidence show's line for the navigate to %s does not record that its redirect found no site:\n%s", asked, show)
	}

	// A redirect that lands on a site that answers is a navigation, as
	// before.
	if reply := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"}); strings.Contains(reply, "did not answer") {
		t.Errorf("navigate to the live site after the dead redirect:\n%s", reply)
	}
}

// TestNavigateToAPageThatMovesOnToASiteThatDoesNotAnswer: a page that
// loads and moves the tab on by itself (its script) to a site in scope
// where nothing listens is a clear error too, but not called a redirect:
// the site answered the navigate; the page moved on.
func TestNavigateToAPageThatMovesOnToASiteThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d/landing", l.Addr().(*net.TCPAddr).Port)
	l.Close()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/hop" {
			fmt.Fprintf(w, "<title>Hop</title><script>location.replace(%q)</script><p>moving on", dead)
			return
		}
		fmt.Fprint(w, "<title>Alive</title><p>alive")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	asked := site + "/hop"

	text, failed := f.call(t, "e2e.navigate", map[string]any{"url": asked})
	if !failed || !strings.Contains(text, "the site did not answer") || !strings.Contains(text, "moved on to") ||
		!strings.Contains(text, asked) || !strings.Contains(text, dead) {
		t.Fatalf("navigate to %s, whose script moves on to %s where nothing listens: want an error naming both, saying the page moved on:\n%s", asked, dead, text)
	}
	if strings.Contains(text, "redirected") {
		t.Errorf("the error calls the page's own move a redirect:\n%s", text)
	}
}
