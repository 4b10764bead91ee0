package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestEvidenceShowSummaryDoesWhatItsHelpSays: show's help says --summary
// prints each session's header and one line counting its calls instead
// of the calls, and it does, for every session of the file.
func TestEvidenceShowSummaryDoesWhatItsHelpSays(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.db")
	store, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*evidence.Envelope{
		{Session: "s-1", Principal: "alice", Command: "navigate", Args: map[string]any{"url": "http://127.0.0.1/"}, Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
		{Session: "s-1", Principal: "alice", Command: "navigate", Args: map[string]any{"url": "http://127.0.0.2/"}, Decision: evidence.Decision{Stage: "scope", Rule: "address class loopback"}},
		{Session: "s-2", Principal: "bob", Command: "snapshot", Decision: evidence.Decision{Allowed: true, Stage: "gate"}},
	} {
		if err := store.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	help, _ := runBinary(t, "evidence", "show", "--help")
	if !strings.Contains(help, "--summary prints each session's header and one line counting its calls,\ninstead of the calls") ||
		!strings.Contains(help, "per session, its header and one line counting the calls allowed, refused by stage, and decided by a human, instead of a line per call") {
		t.Fatalf("show's help no longer says what --summary prints (change this test with it):\n%s", help)
	}
	out, code := runBinary(t, "evidence", "show", "--evidence", path, "--summary")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"session s-1  agent alice  2 records", "  summary: 2 call(s): 1 allowed, 1 refused (scope 1); a human approved 0 and denied 0",
		"session s-2  agent bob  1 record", "  summary: 1 call(s): 1 allowed, 0 refused; a human approved 0 and denied 0"}
	if code != 0 || len(lines) != len(want) {
		t.Fatalf("show --summary: exit %d, %d line(s), want %d (a header and a summary a session, no call):\n%s", code, len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], w)
		}
	}
	// Without --summary every call has its line, and no summary is printed.
	out, _ = runBinary(t, "evidence", "show", "--evidence", path)
	if strings.Count(out, "\n  #") != 3 || strings.Contains(out, "summary:") {
		t.Errorf("show without --summary:\n%s", out)
	}
}
