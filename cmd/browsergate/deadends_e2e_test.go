package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refOnlyUnderTextManifest is the dead end web-scraping.toml once shipped:
// a click that takes refs only, under snapshots that carry none.
const refOnlyUnderTextManifest = `[tool]
name = "e2e"
mode = "browser"

[browser]
extract_mode = "text"

[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]

[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
args.ref = { type = "ref" }
`

func writeManifest(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckWarnsOfDeadEnds: check prints each dead end as a warning at
// its file:line:col, says how many, and exits 0 (the manifest is safe, only
// useless in part); a search backend outside the scope is one too.
func TestCheckWarnsOfDeadEnds(t *testing.T) {
	t.Parallel()
	clicks := writeManifest(t, "clicks.toml", refOnlyUnderTextManifest)
	search := writeManifest(t, "search.toml", `[tool]
name = "research"
mode = "browser"
[browser]
engine = "http"
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.search]
backend = "searxng"
url = "https://search.example.net/search"
[browser.commands.search_web]
`)
	out, code := runBinary(t, "check", "--manifest", clicks, "--manifest", search, "--policies", repoPath("policies"))
	if code != 0 {
		t.Fatalf("check: exit %d, want 0 (warnings only)\n%s", code, out)
	}
	for _, want := range []string{
		clicks + `:15:6: warning: browser.commands.click.args.ref: click can never run: its required argument ref can never be given: this manifest's snapshots carry no refs: extract_mode = "text"`,
		search + ":10:1: warning: browser.search.url: search_web's backend https://search.example.net/search is outside the scope",
		"ok (2 warning(s))",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
}

// TestServeLogsDeadEnds: serve starts with a manifest that has a dead
// end, and logs the warning check prints.
func TestServeLogsDeadEnds(t *testing.T) {
	t.Parallel()
	f := startWith(t, refOnlyUnderTextManifest)
	log := f.stderr.String()
	if !strings.Contains(log, `browser.commands.click.args.ref: click can never run`) || !strings.Contains(log, `"level":"WARN"`) {
		t.Errorf("serve's log lacks the dead end's warning:\n%s", log)
	}
}

// TestDoctorSaysNothingAnswersAtTheLiveEndpoint: doctor tries a live
// manifest's endpoint and, where nothing listens, says so and how to start
// a browser with remote debugging on that endpoint's port (with
// --no-sandbox as root), says "not ok" and exits 1, since serve would
// refuse every call of that manifest.
func TestDoctorSaysNothingAnswersAtTheLiveEndpoint(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	m := writeManifest(t, "live.toml", fmt.Sprintf(`[tool]
name = "live"
mode = "browser"
[browser]
connect = "live"
live_endpoint = %q
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.commands.navigate]
[browser.commands.snapshot]
`, endpoint))
	out, code := runBinary(t, "doctor", "--manifest", m, "--policies", repoPath("policies"))
	if code != 1 {
		t.Errorf("doctor with no browser at the live endpoint: exit %d, want 1\n%s", code, out)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	wants := []string{m + ": live_endpoint " + endpoint + ": nothing answers there", "chromium --remote-debugging-port=" + port + " ", "\nnot ok ("}
	if os.Geteuid() == 0 {
		wants = append(wants, "--remote-debugging-port="+port+" --no-sandbox ")
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's output lacks %q:\n%s", want, out)
		}
	}
	if (port != "9222" && strings.Contains(out, "port=9222")) || strings.Contains(out, "\nok (") {
		t.Errorf("doctor names the default port, or calls the set ok:\n%s", out)
	}
	if strings.Contains(out, "could not tell whether") {
		t.Errorf("doctor also asks the absent browser about preloading:\n%s", out)
	}

	// A browser that is there gets no such warning.
	livePort, _ := startChromium(t)
	m = writeManifest(t, "live.toml", fmt.Sprintf(`[tool]
name = "live"
mode = "browser"
[browser]
connect = "live"
context = "isolated"
live_endpoint = "http://127.0.0.1:%d"
[browser.scope]
allowed_domains = ["docs.example.com"]
[browser.commands.navigate]
`, livePort))
	if out, code := runBinary(t, "doctor", "--manifest", m, "--policies", repoPath("policies")); code != 0 || strings.Contains(out, "nothing answers") {
		t.Errorf("doctor with a browser at the endpoint: exit %d\n%s", code, out)
	}
}
