package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// offersManifest declares click by ref with no snapshot, and
// console_messages with only its level declared; a second tool,
// "htmlsnap", declares snapshot in extract_mode html (no refs) and click
// by ref or selector.
const offersManifest = `
[tool]
name = "offers"
timeout_seconds = 30
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.click]
args.ref = { type = "ref" }
[browser.commands.console_messages]
args.level = { type = "enum", allowed = ["debug", "info", "warning", "error"] }
`

const htmlSnapManifest = `
[tool]
name = "htmlsnap"
timeout_seconds = 30
[browser]
startup_timeout_seconds = 30
extract_mode = "html"
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.click]
`

// declaredFetchManifest declares fetch_page's url and nothing else, so
// its continuation, start_index, is undeclared.
const declaredFetchManifest = `
[tool]
name = "fetchurl"
[browser]
engine = "http"
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
requests_per_second_per_host = 0
[browser.commands.fetch_page]
args.url = { type = "url" }
`

// sinceLine is a log reply's offer of the rest.
var sinceLine = regexp.MustCompile(`\[(\d+) more console message\(s\): ask again with since: (\d+)\]`)

// TestRepliesOfferOnlyCallsTheyTake: a refusal of an unknown ref tells
// the agent to take a snapshot only where the manifest's snapshots hand
// out refs (else it says why there are none, and offers a selector where
// the command takes one), a log reply's offer of the rest (since) is
// taken though the manifest declares only level, and fetch_page's offer
// of the rest (start_index) is taken though the manifest declares only
// url, to the page's last part.
func TestRepliesOfferOnlyCallsTheyTake(t *testing.T) {
	t.Parallel()
	site := serveLongSite(t)
	dir := t.TempDir()
	other, fetch := filepath.Join(dir, "htmlsnap.toml"), filepath.Join(dir, "fetchurl.toml")
	for file, body := range map[string]string{other: htmlSnapManifest, fetch: declaredFetchManifest} {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := startWith(t, offersManifest, "--manifest", other, "--manifest", fetch)

	f.mustAllow(t, "offers.navigate", map[string]any{"url": site + "/noisy"})
	out := f.mustRefuse(t, "offers.click", map[string]any{"ref": "e1"}, "no ref is known: this manifest hands out no refs (snapshot is not declared)")
	for _, not := range []string{"take a snapshot", "selector"} {
		if strings.Contains(out, not) {
			t.Errorf("the refusal offers %q, which this manifest does not take:\n%s", not, out)
		}
	}

	logs := f.mustAllow(t, "offers.console_messages", nil)
	m := sinceLine.FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("250 messages in one reply, or no offer of the rest:\n%s", clipText(logs, 400))
	}
	since, _ := strconv.Atoi(m[2])
	rest := f.mustAllow(t, "offers.console_messages", map[string]any{"since": since})
	if !strings.Contains(rest, "message 250") || sinceLine.MatchString(rest) {
		t.Errorf("the offered call did not give the rest:\n%s", clipText(rest, 400))
	}

	f.mustAllow(t, "htmlsnap.navigate", map[string]any{"url": site + "/chapter2"})
	f.mustAllow(t, "htmlsnap.snapshot", nil)
	out = f.mustRefuse(t, "htmlsnap.click", map[string]any{"ref": "e1"},
		fmt.Sprintf("its snapshots are extract_mode = %q, which has none", "html"), "name the element by a CSS selector instead (selector)")
	if strings.Contains(out, "take a snapshot") {
		t.Errorf("the refusal offers a snapshot, which hands out no refs here:\n%s", out)
	}

	// fetch_page declared with url alone: each part offers the rest with
	// url and start_index only, and the offered call is taken.
	page := site + "/medium"
	text := f.mustAllow(t, "fetchurl.fetch_page", map[string]any{"url": page})
	restCall := regexp.MustCompile(`; the rest: fetch_page \{url: "([^"]+)", start_index: (\d+)\}`)
	parts := 1
	for m := restCall.FindStringSubmatch(text); m != nil; m = restCall.FindStringSubmatch(text) {
		if m[1] != page {
			t.Fatalf("part %d offers the rest of %q", parts, m[1])
		}
		start, _ := strconv.Atoi(m[2])
		text = f.mustAllow(t, "fetchurl.fetch_page", map[string]any{"url": page, "start_index": start})
		parts++
	}
	if parts < 3 || !strings.Contains(text, "Paragraph 100 of the medium page") {
		t.Errorf("%d parts; the last:\n%s", parts, clipText(text, 600))
	}
}
