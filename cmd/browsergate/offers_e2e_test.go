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

// sinceLine is a log reply's offer of the rest.
var sinceLine = regexp.MustCompile(`\[(\d+) more console message\(s\): ask again with since: (\d+)\]`)

// TestRepliesOfferOnlyCallsTheyTake: a refusal of an unknown ref tells
// the agent to take a snapshot only where the manifest's snapshots hand
// out refs (else it says why there are none, and offers a selector where
// the command takes one), and a log reply's offer of the rest (since) is
// taken though the manifest declares only level.
func TestRepliesOfferOnlyCallsTheyTake(t *testing.T) {
	t.Parallel()
	site := serveLongSite(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "htmlsnap.toml")
	if err := os.WriteFile(other, []byte(htmlSnapManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, offersManifest, "--manifest", other)

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
}
