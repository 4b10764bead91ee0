package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestContinuationCarryingThePagesNewsCounts: a continuation whose reply
// carries something the page did since the last call — here a request to
// a host outside the scope, refused between calls — is not free: it
// counts, and its record has no free_continuation; the next page, which
// carries nothing new, is free again.
func TestContinuationCarryingThePagesNewsCounts(t *testing.T) {
	t.Parallel()
	// The page asks /go until the test lets it; then it asks a host out of
	// scope (refused) and, once that has failed, tells the site (/done).
	script := `<script>
const poll = setInterval(async () => {
  const r = await fetch("/go");
  if (r.status !== 200) return;
  clearInterval(poll);
  try { await fetch("http://outside.test/news"); } catch (e) {}
  await fetch("/done");
}, 100);
</script>`
	var (
		mu   sync.Mutex
		goOn bool
	)
	done := make(chan struct{})
	var once sync.Once
	page := strings.Replace(longPage(700), "</main>", "</main>"+script, 1)
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/go":
			mu.Lock()
			ok := goOn
			mu.Unlock()
			if !ok {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		case "/done":
			once.Do(func() { close(done) })
		case "/long":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 10", 1))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	pages := pagesOf("snapshot", f.mustAllow(t, "e2e.snapshot", nil))
	if pages < 3 {
		t.Fatalf("the snapshot has %d pages; the test needs at least 3", pages)
	}
	mu.Lock()
	goOn = true
	mu.Unlock()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the page never asked the host out of scope")
	}
	news := f.mustAllow(t, "e2e.snapshot", map[string]any{"page": 2})
	if !strings.Contains(news, "egress gate blocked") || !strings.Contains(news, "outside.test") {
		t.Fatalf("page 2 does not tell of the refused request:\n%s", news)
	}
	if quiet := f.mustAllow(t, "e2e.snapshot", map[string]any{"page": 3}); strings.Contains(quiet, "egress gate blocked") {
		t.Fatalf("page 3 tells of a refused request, and the page made none since page 2:\n%s", quiet)
	}
	f.cs.Close()

	sameLines(t, callRecords(t, f), []string{
		"navigate allowed=true count=1",
		"snapshot allowed=true count=2",
		"snapshot page 2 allowed=true count=3",
		fmt.Sprintf("snapshot page 3 allowed=true count=3 free=3/%d", pages),
	})
}
