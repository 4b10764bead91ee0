package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStuckPageSession: one session's page blocks its renderer for good
// (for (;;) {}, after telling the test it has begun); meanwhile another
// session's calls run and its page answers them (its script runs on a
// click, and the snapshot shows what it wrote). The stuck session's own next call ends with an error that
// says so, rather than holding the session for good, and the session can
// then leave the page.
func TestStuckPageSession(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, inputManifest(), "")
	looping := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/stuck":
			fmt.Fprint(w, `<title>stuck</title><p>this page blocks its renderer</p>
<script>setTimeout(() => { navigator.sendBeacon('/looping'); for (;;) {} }, 500);</script>`)
		case "/looping":
			select {
			case looping <- struct{}{}:
			default:
			}
		default:
			fmt.Fprintf(w, `<title>work %s</title><button id=go onclick="document.getElementById('out').textContent = 'clicked ' + (+this.dataset.n + 1); this.dataset.n = +this.dataset.n + 1" data-n=0>Go</button><p id=out></p>`, r.URL.Query().Get("s"))
		}
	}))
	defer site.Close()

	stuck, worker := d.connect(t, "alice-token"), d.connect(t, "bob-token")
	if out, refused := callText(t, stuck, "e2e.navigate", map[string]any{"url": site.URL + "/stuck"}); refused {
		t.Fatalf("navigate to the stuck page: %s", out)
	}
	<-looping
	for round := 1; round <= 3; round++ {
		if out, refused := callText(t, worker, "e2e.navigate", map[string]any{"url": fmt.Sprintf("%s/work?s=%d", site.URL, round)}); refused {
			t.Fatalf("round %d: navigate beside the stuck page: %s", round, out)
		}
		for n := 1; n <= 2; n++ {
			if out, refused := callText(t, worker, "e2e.click", map[string]any{"selector": "#go"}); refused {
				t.Fatalf("round %d: click beside the stuck page: %s", round, out)
			}
		}
		if out, refused := callText(t, worker, "e2e.snapshot", nil); refused || !strings.Contains(out, fmt.Sprintf("work %d", round)) || !strings.Contains(out, "clicked 2") {
			t.Errorf("round %d: the worker's page did not run its script on both clicks: %v\n%s", round, refused, out)
		}
	}

	out, refused := callText(t, stuck, "e2e.snapshot", nil)
	if !refused || !strings.Contains(out, "the page did not answer within the call's timeout (timeout_seconds 30): its renderer may be kept busy by a script that never yields") {
		t.Errorf("a snapshot of a page whose renderer does not answer: %v, want the error that says so\n%s", refused, out)
	}
	// Leaving the page: the navigate either leaves it, or finds the page
	// still not answering and replaces the tab; the next one leaves it.
	out, refused = callText(t, stuck, "e2e.navigate", map[string]any{"url": site.URL + "/work?s=after"})
	if refused {
		if !strings.Contains(out, "so the session's browser context was closed") {
			t.Errorf("a navigate away from the stuck page:\n%s", out)
		}
		out, refused = callText(t, stuck, "e2e.navigate", map[string]any{"url": site.URL + "/work?s=after"})
	}
	if refused {
		t.Errorf("the stuck session could not leave the page: %s", out)
	} else if out, refused := callText(t, stuck, "e2e.snapshot", nil); refused || !strings.Contains(out, "work after") {
		t.Errorf("the stuck session after it left the page: %v\n%s", refused, out)
	}
}
