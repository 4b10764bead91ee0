package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// replayPageManifest reads one page of the test's own: navigate and
// snapshot, nothing to type, so every step replays.
const replayPageManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["http"], scope_check = true }
[browser.commands.snapshot]
`

// changingPage serves a page whose paragraph the test sets.
func changingPage(t *testing.T, text string) (string, *atomic.Value) {
	t.Helper()
	var body atomic.Value
	body.Store(text)
	url, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Prices</title><h1>Prices</h1><p>%s</p><p>Shipping is free.</p>", body.Load())
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url, &body
}

// sessionID is the id of the only session of the evidence file at path,
// read as an auditor would (evidence show works on a running serve's
// file too).
func sessionID(t *testing.T, path string) string {
	t.Helper()
	out, code := runBinary(t, "evidence", "show", "--evidence", path)
	for _, l := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(l, "session "); ok && code == 0 {
			return strings.Fields(id)[0]
		}
	}
	t.Fatalf("evidence show: exit %d, no session:\n%s", code, out)
	return ""
}

// TestEvidenceReplayOfARunningServesFile: the auditor replays a session
// from the evidence file serve is still writing, as show and verify read
// it (the copy the daemon makes), without stopping the daemon; and the
// daemon goes on recording afterwards.
func TestEvidenceReplayOfARunningServesFile(t *testing.T) {
	t.Parallel()
	page, _ := changingPage(t, "Tea costs 4 euros.")
	f := startWith(t, replayPageManifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": page + "/"})
	f.mustAllow(t, "e2e.snapshot", nil)
	id := sessionID(t, f.evidence)

	out, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	if code != 0 || !strings.Contains(out, "is held by a running serve: reading the consistent copy it made just now") ||
		!strings.Contains(out, "replayed 2 of 2 step(s) that ran: 0 differ, 0 not replayable") {
		t.Fatalf("replay of the running serve's file: exit %d\n%s", code, out)
	}
	// The daemon was not stopped nor held up: it records the next call.
	f.mustAllow(t, "e2e.snapshot", nil)
	if out, code := runBinary(t, "evidence", "show", "--evidence", f.evidence, "--session", id); code != 0 || !strings.Contains(out, "  #3 ") {
		t.Fatalf("the daemon's next call is not in its log: exit %d\n%s", code, out)
	}
}

// TestEvidenceReplayShowsWhatChangedOnThePage: when the page says
// something else now, the replay names the step and prints the lines of
// its output that changed, the recorded one and the new one, not only
// two hashes; the steps whose output did not change are the same.
func TestEvidenceReplayShowsWhatChangedOnThePage(t *testing.T) {
	t.Parallel()
	page, body := changingPage(t, "Tea costs 4 euros.")
	f := startWith(t, replayPageManifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": page + "/"})
	f.mustAllow(t, "e2e.snapshot", nil)
	f.cs.Close()
	id := sessionID(t, f.evidence)

	body.Store("Tea costs 9 euros.")
	out, code := runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", id)
	if code != 1 || !strings.Contains(out, "replayed 2 of 2 step(s) that ran: 1 differ") {
		t.Fatalf("replay of a changed page: exit %d, want 1 and one step that differs\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "#2   snapshot       DIFFERS: output: 1 line(s) removed, 1 added (sha256 ") {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no DIFFERS line for the snapshot, #2, naming the lines that changed:\n%s", out)
	}
	var removed, added bool
	for _, l := range lines[at+1:] {
		if !strings.HasPrefix(l, "      ") {
			break // the next step, or the summary
		}
		l = strings.TrimSpace(l)
		removed = removed || strings.HasPrefix(l, "- ") && strings.Contains(l, "Tea costs 4 euros.")
		added = added || strings.HasPrefix(l, "+ ") && strings.Contains(l, "Tea costs 9 euros.")
		if strings.Contains(l, "Shipping is free.") && !strings.HasPrefix(l, "  ") && (l[0] == '-' || l[0] == '+') {
			t.Errorf("an unchanged line shown as changed: %q", l)
		}
	}
	if !removed || !added {
		t.Fatalf("the snapshot's difference does not show the recorded line and the new one (removed %v, added %v):\n%s", removed, added, out)
	}
	if !strings.Contains(out, "#1   navigate       same") {
		t.Errorf("the navigation, whose URL and title did not change, is not the same:\n%s", out)
	}
}
