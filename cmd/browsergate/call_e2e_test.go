package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// callPages are the loopback pages the call tests browse: a home page
// with a link to a contact page.
var callPages = map[string]string{
	"/":        `<title>Acme Notes</title><h1>Acme Notes</h1><p>Short notes about the Acme project.</p><a href="/contact">Write to us</a>`,
	"/contact": `<title>Contact</title><h1>Contact</h1><label>Your name <input name=name></label>`,
}

// runCallBinary runs `browsergate call` with args and returns its stdout, its
// stderr and its exit status.
func runCallBinary(t *testing.T, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"call"}, args...)...)
	cmd.Stdin = stdin
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	t.Fatalf("browsergate call: %v", err)
	return "", "", 0
}

// TestCallOverHTTP: `browsergate call --url` acts as the agent whose token
// it reads: navigate and snapshot in one session print each reply after
// its call, the session is the agent's in the evidence, --list shows the
// tools, a refusal exits 1 with the refusal printed, and a wrong token, an
// unknown tool or bad JSON exit with their reason before any call.
func TestCallOverHTTP(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, callPages)
	d := startHTTP(t, inputManifest(), "")
	dir := t.TempDir()
	token := filepath.Join(dir, "alice.token")
	if err := os.WriteFile(token, []byte("alice-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := d.url + "/mcp"

	out, errOut, code := runCallBinary(t, nil, "--url", url, "--token-file", token,
		"navigate", fmt.Sprintf(`{"url": %q}`, site+"/"), "snapshot")
	if code != 0 {
		t.Fatalf("navigate + snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	nav := strings.Index(out, "> e2e.navigate {\"url\":\""+site+"/\"}\nnavigated to "+site+"/ (HTTP 200 OK)")
	snap := strings.Index(out, "> e2e.snapshot {}\n[PAGE CONTENT ")
	if nav < 0 || snap < nav || !strings.Contains(out[snap:], "# Acme Notes") || !strings.Contains(out[snap:], "[Write to us](e") {
		t.Errorf("the transcript of navigate + snapshot:\n%s", out)
	}
	show, err := exec.Command(binary, "evidence", "show", "--evidence", d.evidence).CombinedOutput()
	if err != nil || !strings.Contains(string(show), "agent alice") || !strings.Contains(string(show), "snapshot  ALLOW") {
		t.Errorf("the evidence does not hold alice's calls (%v):\n%s", err, show)
	}

	out, errOut, code = runCallBinary(t, nil, "--url", url, "--token-file", token, "--list")
	if code != 0 || !strings.Contains(out, "instructions: browsergate is a governed browser") ||
		!strings.Contains(out, "\ne2e.navigate {\"url\": string}\n    ") || !strings.Contains(out, "\ne2e.click {\"ref\": string, optional; ") {
		t.Errorf("--list: exit %d\n%s\n%s", code, out, errOut)
	}

	out, errOut, code = runCallBinary(t, nil, "--url", url, "--token-file", token, "e2e.navigate", `{"url":"http://example.com/"}`, "snapshot")
	if code != 1 || !strings.Contains(out, "DENIED at scope") || strings.Contains(out, "e2e.snapshot") ||
		!strings.Contains(errOut, "browsergate: e2e.navigate: the reply is an error (isError)") {
		t.Errorf("a refused navigate: exit %d; it must stop the sequence there\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	wrong := filepath.Join(dir, "wrong.token")
	if err := os.WriteFile(wrong, []byte("carol-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCallBinary(t, nil, "--url", url, "--token-file", wrong, "snapshot")
	if code != 1 || !strings.Contains(errOut, "the daemon refused the token in "+wrong+" (401 Unauthorized)") {
		t.Errorf("a wrong token: exit %d, %s", code, errOut)
	}
	_, errOut, code = runCallBinary(t, nil, "--url", url, "--token-file", token, "snapshot", "snapshto")
	if code != 2 || !strings.Contains(errOut, `unknown tool "snapshto" (did you mean e2e.snapshot?); the tools are: e2e.click, `) {
		t.Errorf("an unknown tool: exit %d, %s", code, errOut)
	}
	_, errOut, code = runCallBinary(t, nil, "--url", url, "--token-file", token, "click", `{"ref": e1}`)
	if code != 2 || !strings.Contains(errOut, `argument 2 (the arguments of click): invalid JSON at character 9`) {
		t.Errorf("bad JSON: exit %d, %s", code, errOut)
	}
	show, _ = exec.Command(binary, "evidence", "show", "--evidence", d.evidence).CombinedOutput()
	if strings.Contains(string(show), "snapshto") || strings.Count(string(show), "  click  ") != 0 {
		t.Errorf("a call that was never sent is in the evidence:\n%s", show)
	}
}

// TestCallReadsCallsFromAPipe: with no TOOL, call starts serve over stdio
// with the flags after -- and makes one call a line as the lines come: a
// ref read from one reply is clicked on the next line; a bad line is said
// with its number and the session goes on; the exit status is 1 when any
// line failed.
func TestCallReadsCallsFromAPipe(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, callPages)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "e2e.toml")
	if err := os.WriteFile(manifest, []byte(inputManifest()), 0o644); err != nil {
		t.Fatal(err)
	}
	evidence := filepath.Join(dir, "evidence.db")
	cmd := exec.Command(binary, "call", "--", "--manifest", manifest, "--policies", repoPath("policies"), "--evidence", evidence, "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdoutPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	// readUntil collects stdout up to the line holding want.
	readUntil := func(want string) string {
		t.Helper()
		var got strings.Builder
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("call ended before %q:\n%s%s\nstderr:\n%s", want, out.String(), got.String(), stderr.String())
				}
				got.WriteString(l + "\n")
				out.WriteString(l + "\n")
				if strings.Contains(l, want) {
					return got.String()
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("no %q from call:\n%s\nstderr:\n%s", want, out.String(), stderr.String())
			}
		}
	}
	fmt.Fprintf(stdin, "navigate {\"url\": %q}\n\n# the page as text\nsnapshot\n", site+"/")
	readUntil("navigated to " + site + "/")
	snap := readUntil("[END PAGE CONTENT")
	ref := findRef(snap, "Write to us")
	if ref == "" {
		t.Fatalf("no ref for the link in:\n%s", snap)
	}
	fmt.Fprintf(stdin, "click {\"ref\": %q}\nclick {ref: e1}\nnavigat {\"url\": %q}\nsnapshot\n", ref, site+"/")
	readUntil("clicked ref " + ref)
	page := readUntil("[END PAGE CONTENT")
	if !strings.Contains(page, "# Contact") {
		t.Errorf("the snapshot after the click is not the contact page:\n%s", page)
	}
	stdin.Close()
	for range lines {
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v; want status 1 for the two bad lines", err)
	}
	for _, want := range []string{
		"browsergate: line 6: the arguments of click: invalid JSON at character 2",
		`browsergate: line 7: unknown tool "navigat" (did you mean e2e.navigate?)`,
		"browsergate: 2 of the calls were refused, failed or could not be read",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(out.String(), "> e2e.click {\"ref\":\""+ref+"\"}\n") || strings.Contains(out.String(), "navigat {") {
		t.Errorf("the transcript:\n%s", out.String())
	}
}

// TestCallWithAStatelessDaemon: against a daemon that serves clients of
// MCP's 2026-07-28 revision without MCP sessions (--stateless-clients),
// `browsergate call` opens a browser session, makes every call of the run
// in it (navigate then snapshot see the same page), and closes it at the
// end: the daemon's /metrics counts no handle left open.
func TestCallWithAStatelessDaemon(t *testing.T) {
	t.Parallel()
	site, _ := serveLogged(t, callPages)
	d := startHTTP(t, inputManifest(), "", "--stateless-clients", "--operator-token-file", operatorFile(t))
	token := filepath.Join(t.TempDir(), "alice.token")
	if err := os.WriteFile(token, []byte("alice-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCallBinary(t, nil, "--url", d.url+"/mcp", "--token-file", token,
		"navigate", fmt.Sprintf(`{"url": %q}`, site+"/"), "snapshot")
	snap := strings.Index(out, "> e2e.snapshot {}\n[PAGE CONTENT ")
	if code != 0 || snap < 0 || !strings.Contains(out[snap:], "# Acme Notes") {
		t.Fatalf("navigate + snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, _, metrics := d.raw(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + olga}, ""); code != http.StatusOK ||
		!strings.Contains(metrics, "\nbrowsergate_browser_sessions_open 0\n") {
		t.Errorf("/metrics after the run: %d, want no browser session open:\n%s", code, metrics)
	}
}
