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

// longPage is a page whose text is about kb kilobytes, in paragraphs of
// some 4500 bytes each (few elements, for a light page): several of the
// default 200000-byte pages of a snapshot or a read.
func longPage(kb int) string {
	var b strings.Builder
	b.WriteString("<title>Long</title><main><h1>Long</h1>")
	words := strings.Repeat("words of a page long enough to come in several default pages ", 70)
	for i := range kb * 1000 / 4500 {
		fmt.Fprintf(&b, "<p>Paragraph %d: %s</p>", i, words)
	}
	b.WriteString("</main>")
	return b.String()
}

// pagesOf is N of "[page 1 of N of this <command>" in a reply (0: the
// reply came whole).
func pagesOf(command, reply string) int {
	m := regexp.MustCompile(`\[page 1 of (\d+) of this ` + command).FindStringSubmatch(reply)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// callRecords are a session's records of calls, one line each: command,
// page, decision, count, and the free continuation's mark.
func callRecords(t *testing.T, f *fixture) []string {
	t.Helper()
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
		line := r.Command
		if p, ok := r.Args["page"]; ok {
			line += fmt.Sprintf(" page %v", p)
		}
		line += fmt.Sprintf(" allowed=%v count=%d", r.Decision.Allowed, r.InteractionCount)
		if c := r.FreeContinuation; c != nil {
			line += fmt.Sprintf(" free=%d/%d", c.Page, c.Of)
		}
		got = append(got, line)
	}
	return got
}

// sameLines fails t when got is not want, showing both.
func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestContinuationsForwardDoNotCountTowardMaxInteractions: with
// max_interactions = 5, a long page is read whole — a navigate, a snapshot
// and every further page of it — for two interactions; each page's record
// carries the count unchanged and its free_continuation mark (page n of
// the reply's pages). Asking for page 2 again is not moving forward: each
// such call counts, its record has no mark, and the budget ends the
// session as before.
func TestContinuationsForwardDoNotCountTowardMaxInteractions(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/long": longPage(900)})
	f := startWith(t, continuationBudgetManifest)

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	pages := pagesOf("snapshot", f.mustAllow(t, "e2e.snapshot", nil))
	if pages < 4 {
		t.Fatalf("the snapshot has %d pages; the test needs at least 4", pages)
	}
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

	want := []string{"navigate allowed=true count=1", "snapshot allowed=true count=2"}
	for n := 2; n <= pages; n++ {
		want = append(want, fmt.Sprintf("snapshot page %d allowed=true count=2 free=%d/%d", n, n, pages))
	}
	want = append(want,
		"snapshot page 2 allowed=true count=3",
		"snapshot page 2 allowed=true count=4",
		"snapshot page 2 allowed=true count=5",
		"snapshot page 2 allowed=false count=0",
		fmt.Sprintf("snapshot page %d allowed=false count=0", pages))
	sameLines(t, callRecords(t, f), want)
}

// TestSmallMaxCharsGivesNoMoreFreeContinuations: a snapshot with max_chars = 1000 of a long page comes in hundreds of
// pages, but only as many of them are free as the default snapshot of
// the same page has after its first; the pages after those count, and
// the budget ends the session.
func TestSmallMaxCharsGivesNoMoreFreeContinuations(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/long": longPage(700)})
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 6", 1))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	defaults := pagesOf("snapshot", f.mustAllow(t, "e2e.snapshot", nil))
	if defaults < 3 {
		t.Fatalf("the default snapshot has %d pages; the test needs at least 3", defaults)
	}
	small := pagesOf("snapshot", f.mustAllow(t, "e2e.snapshot", map[string]any{"max_chars": 1000}))
	if small < 100 {
		t.Fatalf("the snapshot with max_chars 1000 has %d pages", small)
	}
	// Free: pages 2 to defaults; then interactions 4, 5 and 6.
	last := defaults + 3
	for n := 2; n <= last; n++ {
		f.mustAllow(t, "e2e.snapshot", map[string]any{"page": n})
	}
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": last + 1}, "max_interactions")
	f.cs.Close()

	want := []string{"navigate allowed=true count=1", "snapshot allowed=true count=2", "snapshot allowed=true count=3"}
	for n := 2; n <= defaults; n++ {
		want = append(want, fmt.Sprintf("snapshot page %d allowed=true count=3 free=%d/%d", n, n, small))
	}
	for n := defaults + 1; n <= last; n++ {
		want = append(want, fmt.Sprintf("snapshot page %d allowed=true count=%d", n, n-defaults+3))
	}
	want = append(want, fmt.Sprintf("snapshot page %d allowed=false count=0", last+1))
	sameLines(t, callRecords(t, f), want)
}

// TestFreeContinuationsOfASessionAreAtMostMaxInteractions: under
// max_interactions = 3 a session has three free continuations, though
// the reply it reads has more free pages: the fourth continuation counts
// (the third interaction), and the next call is refused.
func TestFreeContinuationsOfASessionAreAtMostMaxInteractions(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/long": longPage(900)})
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 3", 1))

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	pages := pagesOf("snapshot", f.mustAllow(t, "e2e.snapshot", nil))
	if pages < 5 {
		t.Fatalf("the snapshot has %d pages; the test needs at least 5", pages)
	}
	for n := 2; n <= 5; n++ {
		f.mustAllow(t, "e2e.snapshot", map[string]any{"page": n})
	}
	f.mustRefuse(t, "e2e.snapshot", map[string]any{"page": pages}, "max_interactions")
	f.cs.Close()

	sameLines(t, callRecords(t, f), []string{
		"navigate allowed=true count=1",
		"snapshot allowed=true count=2",
		fmt.Sprintf("snapshot page 2 allowed=true count=2 free=2/%d", pages),
		fmt.Sprintf("snapshot page 3 allowed=true count=2 free=3/%d", pages),
		fmt.Sprintf("snapshot page 4 allowed=true count=2 free=4/%d", pages),
		"snapshot page 5 allowed=true count=3",
		fmt.Sprintf("snapshot page %d allowed=false count=0", pages),
	})
}

// TestReadContinuationsForwardDoNotCountTowardMaxInteractions: the same
// rule for read: under max_interactions = 3 a long page is read whole in
// its default pages after a navigate, and a page asked for again counts.
func TestReadContinuationsForwardDoNotCountTowardMaxInteractions(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, map[string]string{"/article": longPage(700)})
	f := startWith(t, strings.Replace(continuationBudgetManifest, "max_interactions = 5", "max_interactions = 3", 1)+"[browser.commands.read]\n")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/article"})
	pages := pagesOf("read", f.mustAllow(t, "e2e.read", nil))
	if pages < 3 {
		t.Fatalf("the read has %d pages; the test needs at least 3", pages)
	}
	for n := 2; n <= pages; n++ {
		if out := f.mustAllow(t, "e2e.read", map[string]any{"page": n}); !strings.Contains(out, fmt.Sprintf("[page %d of %d of this read", n, pages)) {
			t.Fatalf("page %d:\n%s", n, out)
		}
	}
	f.mustAllow(t, "e2e.read", map[string]any{"page": 2}) // the third interaction
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
