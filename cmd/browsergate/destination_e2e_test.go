package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// siteLog serves pages and counts the requests each path gets.
type siteLog struct {
	mu   sync.Mutex
	hits map[string]int
}

func (l *siteLog) count(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits[path]
}

// serveLogged serves pages (path -> HTML) on 127.0.0.1, logging every
// request by path; any other path answers a small page.
func serveLogged(t *testing.T, pages map[string]string) (string, *siteLog) {
	t.Helper()
	log := &siteLog{hits: map[string]int{}}
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.hits[r.URL.Path]++
		log.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		if page, ok := pages[r.URL.Path]; ok {
			fmt.Fprint(w, page)
			return
		}
		fmt.Fprintf(w, "<title>%s</title>%s", r.URL.Path, r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site, log
}

// TestDestinationsHoldDuringTheAct: what a click was judged to do is what
// the browser may do. A link whose href the page changes in its click
// handler or on mousedown, and a plain button whose handler sends a form
// with GET, are stopped at the request (stage destination, both URLs
// named) or before the click; the site never sees the other URL.
func TestDestinationsHoldDuringTheAct(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	site, log := serveLogged(t, map[string]string{
		"/onclick":   `<a id=l href="/view_statement" onclick="this.href='/delete_account'">Statement</a>`,
		"/mousedown": `<a id=l href="/view_statement" onmousedown="this.href='/delete_account'">Statement</a>`,
		"/getform":   `<form action="/delete_account" method=get><input name=confirm value=yes><button type=button id=l onclick="this.form.submit()">Details</button></form>`,
	})
	for _, page := range []string{"/onclick", "/mousedown", "/getform"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		text := f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#l"})
		if !strings.Contains(text, "/delete_account") {
			t.Errorf("%s: the refusal does not name where the page tried to go:\n%s", page, text)
		}
		if page == "/onclick" && (!strings.Contains(text, "DENIED at destination") || !strings.Contains(text, "/view_statement")) {
			t.Errorf("%s: want a refusal at stage destination naming both URLs:\n%s", page, text)
		}
	}
	if n := log.count("/delete_account"); n != 0 {
		t.Fatalf("the site got %d request(s) for /delete_account", n)
	}
	// A link that goes where it says still works.
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/onclick"})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/plain"})
}

// TestSubmissionsRecognisedByWhatHappens: with no submit_form declared, a
// label for a submit button and a button that becomes a submit button on
// mouseup both submit a form when clicked; the site never receives the
// post.
func TestSubmissionsRecognisedByWhatHappens(t *testing.T) {
	t.Parallel()
	f := startWith(t, strings.Replace(fmt.Sprintf(e2eManifest, "launch", ""), "[browser.commands.submit_form]\n", "", 1))
	site, log := serveLogged(t, map[string]string{
		"/label":   `<form method=post action="/transfer"><input type=submit id=send value=Send></form><label id=l for=send>Read more</label>`,
		"/mouseup": `<form method=post action="/transfer"><button id=l type=button onmouseup="this.type='submit'">More</button></form>`,
	})
	for _, page := range []string{"/label", "/mouseup"} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + page})
		f.mustRefuse(t, "e2e.click", map[string]any{"selector": "#l"})
	}
	if n := log.count("/transfer"); n != 0 {
		t.Fatalf("the site got %d form submission(s)", n)
	}
}
