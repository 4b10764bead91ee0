package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

const continuationBudgetManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
max_interactions = 5
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`

// pageCount reads "[page 1 of N of this snapshot; …]" from a reply.
var pageCount = regexp.MustCompile(`\[page 1 of (\d+) of this snapshot`)

// TestContinuationsForwardDoNotCountTowardMaxInteractions: with
// max_interactions = 5, a long page is read whole — a navigate, a snapshot
// and every further page of it — for two interactions; each page's record
// carries the count unchanged. Asking for page 2 again is not moving
// forward: each such call counts, and the budget ends the session as
// before.
func TestContinuationsForwardDoNotCountTowardMaxInteractions(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	long.WriteString("<title>Long</title><main>")
	for i := range 300 {
		fmt.Fprintf(&long, "<p>Paragraph %d of a page long enough to come in many pages.</p>", i)
	}
	long.WriteString("</main>")
	site, _ := serveLogged(t, map[string]string{"/long": long.String()})
	f := startWith(t, continuationBudgetManifest)

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	first := f.mustAllow(t, "e2e.snapshot", map[string]any{"max_chars": 1000})
	m := pageCount.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the snapshot came in one page:\n%s", first)
	}
	pages, _ := strconv.Atoi(m[1])
	if pages < 6 {
		t.Fatalf("the snapshot has %d pages; the test needs more pages than max_interactions", pages)
	}
	// More pages than the budget has interactions: every one is given.
	for n := 2; n <= pages; n++ {
		out := f.mustAllow(t, "e2e.snapshot", map[string]any{"page": n})
		if !strings.Contains(out, fmt.Sprintf("[page %d of %d of this snapshot", n, pages)) {
			t.Fatalf("page %d:\n%s", n, out)
		}
	}
	// Page 2 again, three times: interactions 3, 4 and 5.
	for range 3 {
		f.mustAllow(t, "e2e.snapshot", map[string]any{"page": 2})
	}
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": 2}, "max_interactions")
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": pages}, "max_interactions")
	f.cs.Close()

	store, err := evidence.Open(f.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions: %v %v", sessions, err)
	}
	recs, err := store.Records(sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Kind != "" {
			continue
		}
		page := ""
		if p, ok := r.Args["page"]; ok {
			page = fmt.Sprintf(" page %v", p)
		}
		got = append(got, fmt.Sprintf("%s%s allowed=%v count=%d", r.Command, page, r.Decision.Allowed, r.InteractionCount))
	}
	want := []string{"navigate allowed=true count=1", "snapshot allowed=true count=2"}
	for n := 2; n <= pages; n++ {
		want = append(want, fmt.Sprintf("snapshot page %d allowed=true count=2", n))
	}
	want = append(want,
		"snapshot page 2 allowed=true count=3",
		"snapshot page 2 allowed=true count=4",
		"snapshot page 2 allowed=true count=5",
		"snapshot page 2 allowed=false count=0",
		fmt.Sprintf("snapshot page %d allowed=false count=0", pages))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadContinuationsForwardDoNotCountTowardMaxInteractions: the same
// rule for read: under max_interactions = 3 a long page is read whole in
// many pages after a navigate, and a page asked for again counts.
func TestReadContinuationsForwardDoNotCountTowardMaxInteractions(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	long.WriteString("<title>Article</title><main><h1>Article</h1>")
	for i := range 300 {
		fmt.Fprintf(&long, "<p>Paragraph %d of an article long enough to come in many pages.</p>", i)
	}
	long.WriteString("</main>")
	site, _ := serveLogged(t, map[string]string{"/article": long.String()})
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 3", 1)+"[browser.commands.read]\n")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/article"})
	first := f.mustAllow(t, "e2e.read", map[string]any{"max_chars": 1000})
	m := regexp.MustCompile(`\[page 1 of (\d+) of this read`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the read came in one page:\n%s", first)
	}
	pages, _ := strconv.Atoi(m[1])
	if pages < 4 {
		t.Fatalf("the read has %d pages; the test needs more pages than max_interactions", pages)
	}
	for n := 2; n <= pages; n++ {
		if out := f.mustAllow(t, "e2e.read", map[string]any{"page": n}); !strings.Contains(out, fmt.Sprintf("[page %d of %d of this read", n, pages)) {
			t.Fatalf("page %d:\n%s", n, out)
		}
	}
	f.mustAllow(t, "e2e.read", map[string]any{"page": 3}) // the third interaction
	f.mustRefuse(t, "e2e.read", map[string]any{"page": 3}, "max_interactions")
}

// TestContinuationOfAnotherDocumentCounts: a continuation is free only in
// the document its reply is of; once the tab has moved on, page 2 of the
// old snapshot is an error, and it counts like any call.
func TestContinuationOfAnotherDocumentCounts(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 300 {
		fmt.Fprintf(&long, "<p>Paragraph %d of a page long enough to come in many pages.</p>", i)
	}
	site, _ := serveLogged(t, map[string]string{"/long": long.String(), "/other": "<title>Other</title><p>other"})
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 4", 1))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	if first := f.mustAllow(t, "e2e.snapshot", map[string]any{"max_chars": 1000}); !pageCount.MatchString(first) {
		t.Fatalf("the snapshot came in one page:\n%s", first)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/other"})
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": 2}, "another document") // the fourth interaction
	f.mustRefuse(t, "e2e.snapshot", nil, "max_interactions")
}
