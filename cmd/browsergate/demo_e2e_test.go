package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoEndsWithCommandsThatRunAgain: the demo (built with its tag, run
// from the repository root as make demo runs it) prints the serve it
// starts and each evidence command before its output, and ends with the
// show, verify, replay and export lines for its file; typed into a shell,
// each of those runs with the release binary (as ./browsergate, which
// make build leaves in the repository root) and does what it says.
func TestDemoEndsWithCommandsThatRunAgain(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the demo and runs it twice over: not in -short")
	}
	dir := t.TempDir()
	demo := filepath.Join(dir, "browsergate-demo")
	if out, err := exec.Command("go", "build", "-tags", "demo", "-o", demo, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags demo: %v\n%s", err, out)
	}
	evidencePath := filepath.Join(dir, "my evidence.db") // a space, to be quoted
	cmd := exec.Command(demo, "demo", "--evidence", evidencePath)
	cmd.Dir = repoPath("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	text := string(out)
	// The daemon's log goes to a file the demo names, not into the
	// narrative.
	logPath := filepath.Join(dir, "my evidence.log")
	if strings.Contains(text, "approval answered") || strings.Contains(text, `"level":`) {
		t.Errorf("the daemon's log lines are in the demo's narrative:\n%s", text)
	}
	if !strings.Contains(text, "browsergate serve's log (warnings and errors) is in "+logPath+"\n") {
		t.Errorf("the demo does not name its daemon's log %s:\n%s", logPath, text)
	}
	if serveLog, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(serveLog), "approval answered on the operator socket") {
		t.Errorf("the daemon's log %s does not hold its warnings (%v):\n%s", logPath, err, serveLog)
	}
	for _, want := range []string{
		"$ browsergate serve --manifest examples/demo.toml --policies policies --evidence '" + evidencePath + "' --log-level warn\n",
		"\n$ browsergate evidence verify --evidence '" + evidencePath + "'\nok: 1 session(s)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo does not print %q before what it runs:\n%s", want, text)
		}
	}
	_, again, ok := strings.Cut(text, "\nThe evidence is in "+evidencePath+". To read, check and replay it again, or export it for people:\n")
	if !ok {
		t.Fatalf("the demo does not end with the commands for its file:\n%s", text)
	}
	if !strings.HasPrefix(again, "  (from the repository root; make build makes ./browsergate)\n") {
		t.Errorf("the demo does not say where ./browsergate comes from:\n%s", again)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(again, "\n"), "\n") {
		if line, ok := strings.CutPrefix(l, "  ./browsergate "); ok {
			lines = append(lines, "./browsergate "+line)
		}
	}
	if len(lines) != 5 {
		t.Fatalf("%d command(s) at the end, want show, show --summary, verify, replay and export:\n%s", len(lines), again)
	}
	// The replay visits the demo site again, which stopped with the demo:
	// it runs, and its steps differ (the demo itself replayed the
	// session while the site was up, and found none that did).
	// The demo's operator approved its submit_form: the replay says, before
	// it starts, that the step will run again.
	if !strings.Contains(text, "\n1 step(s) a human approved will run again, approved as recorded, with their side effects: #") || !strings.Contains(text, " submit_form (") {
		t.Errorf("the demo's replay does not say the approved submit_form runs again:\n%s", text)
	}
	if !strings.Contains(text, "replayed 8 of 8 step(s) that ran: 0 differ, 0 not replayable") {
		t.Errorf("the demo's own replay did not find every step the same:\n%s", text)
	}
	wants := []string{"  #10 ", "  summary: 10 call(s): 8 allowed, 2 refused", "ok: log-wide head #10 covers every session",
		"DIFFERS", "wrote demo-report.html: 1 session(s), 10 record(s), verification intact"}
	for i, line := range lines {
		words := shellWords(t, line)
		if words[0] != "./browsergate" {
			t.Fatalf("%q is not a browsergate command", line)
		}
		run := exec.Command(binary, words[1:]...)
		// From the repository root, as the demo ran (the replay's secret
		// file is named from there); the report is written elsewhere.
		run.Dir = repoPath("")
		if words[2] == "export" {
			run.Dir = dir
		}
		got, err := run.CombinedOutput()
		if (err != nil) != (words[2] == "replay") || !strings.Contains(string(got), wants[i]) {
			t.Errorf("$ %s\nexit %v, want it to print %q:\n%s", line, err, wants[i], got)
		}
	}
}
