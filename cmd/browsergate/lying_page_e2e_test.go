package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/proctree"
)

// lyingPage redefines, in its own script and before the gate reads
// anything, every DOM getter and method the page state could be read
// through in the page's world: forms, querySelectorAll, title,
// readyState, URL, documentURI, innerText, textContent. The truth: a
// page titled "Real title" with a form and a log out link (so it is
// authenticated), fully loaded.
const lyingPage = `<!doctype html><title>Real title</title>
<script>
const lie = (proto, prop, value) => { try { Object.defineProperty(proto, prop, {get() { return value; }, configurable: true}); } catch (e) {} };
lie(Document.prototype, 'title', 'Forged title');
lie(Document.prototype, 'forms', {length: 0});
lie(Document.prototype, 'readyState', 'loading');
lie(Document.prototype, 'URL', 'https://forged.example/');
lie(Document.prototype, 'documentURI', 'https://forged.example/');
lie(HTMLElement.prototype, 'innerText', '');
lie(Node.prototype, 'textContent', '');
Document.prototype.querySelectorAll = function() { return []; };
Element.prototype.querySelectorAll = function() { return []; };
Document.prototype.querySelector = function() { return null; };
try { Object.defineProperty(document, 'location', {get() { return {href: 'https://forged.example/'}; }}); } catch (e) {}
</script>
<form action="/saved" method="post"><input name="q" value="x"><button type="submit">Save</button></form>
<a href="/logout">Log out</a>`

// TestLyingPageCannotForgeTheState: a page that lies to its own
// JavaScript world does not change what Cedar judges. The evidence record
// of a call on it holds the state the gate gave Cedar, field by field the
// truth; and the shipped policy that holds submissions on authenticated
// pages for a human still holds it (the page's lie would have made the
// page look signed out and formless).
func TestLyingPageCannotForgeTheState(t *testing.T) {
	t.Parallel()
	inBothModes(t, func(t *testing.T, connect, endpoint string) {
		live := ""
		if endpoint != "" {
			live = fmt.Sprintf("live_endpoint = %q", endpoint)
		}
		f := startWith(t, fmt.Sprintf(e2eManifest, connect, live), "--approval-timeout", "1s")
		submits := 0
		mux := http.NewServeMux()
		mux.HandleFunc("/liar", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, lyingPage) })
		mux.HandleFunc("/saved", func(w http.ResponseWriter, r *http.Request) { submits++; fmt.Fprint(w, "<title>saved</title>") })
		site, stop, err := serveOn("127.0.0.1:0", mux)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)

		page := site + "/liar"
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": page})
		f.mustAllow(t, "e2e.snapshot", nil)
		text := f.mustRefuse(t, "e2e.submit_form", map[string]any{"selector": "form"}, "DENIED at approval")
		if !strings.Contains(text, "submit-authenticated-needs-approval") {
			t.Errorf("the submission was not held by submit-authenticated-needs-approval:\n%s", text)
		}
		if submits != 0 {
			t.Fatalf("the form was submitted %d time(s)", submits)
		}

		f.cs.Close() // serve exits and releases the evidence file
		rec := lastRecord(t, f.evidence, "snapshot")
		want := map[string]any{
			"url": page, "title": "Real title", "domain": "127.0.0.1", "has_forms": true,
			"is_authenticated": true, "page_loaded": true, "tab_count": float64(1),
		}
		for field, v := range want {
			if got := rec.Before[field]; fmt.Sprint(got) != fmt.Sprint(v) {
				t.Errorf("state_before.%s = %v, want %v (the truth)", field, got, v)
			}
		}
	})
}

// lastRecord is the last evidence record of command in the log at path.
func lastRecord(t *testing.T, path, command string) *evidence.Envelope {
	t.Helper()
	rec := lastRecordWhere(t, path, func(e *evidence.Envelope) bool { return e.Command == command })
	if rec == nil {
		t.Fatalf("no %s record in %s", command, path)
	}
	return rec
}

// lastRecordWhere is the last evidence record in the log at path for
// which match holds, or nil.
func lastRecordWhere(t *testing.T, path string, match func(*evidence.Envelope) bool) *evidence.Envelope {
	t.Helper()
	store, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var last *evidence.Envelope
	for _, s := range sessions {
		recs, err := store.Records(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if match(r) {
				last = r
			}
		}
	}
	return last
}

// TestBrowserEnvironmentHoldsNoSecret: a manifest secret read from an
// environment variable is in serve's environment, and in no browser
// process's /proc/<pid>/environ: a launched Chromium gets a minimal
// environment of its own.
func TestBrowserEnvironmentHoldsNoSecret(t *testing.T) {
	// Not parallel: t.Setenv changes the test binary's environment, which
	// serve inherits.
	const value = "env-secret-value-7d1c"
	manifest := fmt.Sprintf(e2eManifest, "launch", "") + `
[secrets.ENV_PW]
env = "BROWSERGATE_TEST_ENV_PW"
domains = ["127.0.0.1"]
`
	t.Setenv("BROWSERGATE_TEST_ENV_PW", value) // inherited by serve
	t.Setenv("BROWSERGATE_UNRELATED", "other-daemon-setting")
	f := startWith(t, manifest)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": f.siteURL + "/login"})

	pids := proctree.Descendants(f.pid)
	browsers := 0
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if !strings.Contains(string(cmdline), "chromium") {
			continue
		}
		browsers++
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue // the process exited meanwhile
		}
		if strings.Contains(string(env), value) || strings.Contains(string(env), "BROWSERGATE_UNRELATED") {
			t.Errorf("browser process %d (%s) has the daemon's environment:\n%s", pid,
				strings.ReplaceAll(string(cmdline), "\x00", " "), strings.ReplaceAll(string(env), "\x00", "\n"))
		}
	}
	if browsers == 0 {
		t.Fatalf("no chromium process under serve (pid %d) among %v", f.pid, pids)
	}
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(f.pid), "environ"))
	if err != nil || !strings.Contains(string(env), value) {
		t.Fatalf("serve itself should hold the secret's variable (the test's premise): %v", err)
	}
}
