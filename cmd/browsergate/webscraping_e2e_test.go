package main

import (
	"os"
	"strings"
	"testing"
)

// webScrapingOnLoopback is examples/web-scraping.toml with its scope, URL
// patterns and download directory moved to the test's site on loopback,
// everything else as shipped.
func webScrapingOnLoopback(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoPath("examples/web-scraping.toml"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	for _, r := range []struct {
		old, new string
		n        int
	}{
		{`allowed_domains = ["docs.example.com"]`, "allowed_domains = [\"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]", 1},
		{`schemes = ["https"], scope_check = true, pattern = "^https://docs\\.example\\.com/"`, `schemes = ["http"], scope_check = true, pattern = "^http://127\\.0\\.0\\.1:"`, 2},
		{`download_dir = "downloads"`, `download_dir = "` + t.TempDir() + `"`, 1},
	} {
		if got := strings.Count(body, r.old); got != r.n {
			t.Fatalf("examples/web-scraping.toml holds %q %d time(s), want %d: the test must follow the example", r.old, got, r.n)
		}
		body = strings.ReplaceAll(body, r.old, r.new)
	}
	return body
}

// TestWebScrapingExampleClicks: the web-scraping example's click takes
// snapshot refs only, and its snapshots hand them out, so an agent
// following a link does what the example says: navigate, snapshot, click
// the link's ref, and the link is followed.
func TestWebScrapingExampleClicks(t *testing.T) {
	t.Parallel()
	f := startWith(t, webScrapingOnLoopback(t))
	f.mustAllow(t, "scraper.navigate", map[string]any{"url": f.siteURL + "/"})
	ref := findRef(f.mustAllow(t, "scraper.snapshot", nil), "[Docs")
	if ref == "" {
		t.Fatal("the snapshot hands out no ref for the Docs link")
	}
	f.mustAllow(t, "scraper.click", map[string]any{"ref": ref})
	if after := f.mustAllow(t, "scraper.snapshot", nil); !strings.Contains(after, `title="Documentation"`) {
		t.Errorf("the click on the Docs link did not lead to the documentation:\n%s", after)
	}
	if strings.Contains(f.stderr.String(), "can never") {
		t.Errorf("serve warns of a dead end in the example:\n%s", f.stderr.String())
	}
}

// TestRefsUnderTextSnapshotsAreRefusedPlainly: the example as it once
// was (extract_mode = "text"): its snapshots carry no refs, and a click
// with a ref is refused saying so, not "take a snapshot first", which
// would send the agent round in a loop.
func TestRefsUnderTextSnapshotsAreRefusedPlainly(t *testing.T) {
	t.Parallel()
	body := strings.Replace(webScrapingOnLoopback(t), "[browser]\n", "[browser]\nextract_mode = \"text\"\n", 1)
	f := startWith(t, body)
	f.mustAllow(t, "scraper.navigate", map[string]any{"url": f.siteURL + "/"})
	if snap := f.mustAllow(t, "scraper.snapshot", nil); findRef(snap, "Docs") != "" {
		t.Fatalf("a text snapshot hands out refs:\n%s", snap)
	}
	text := f.mustRefuse(t, "scraper.click", map[string]any{"ref": "e1"}, `its snapshots are extract_mode = "text", which has none`)
	if strings.Contains(text, "take a snapshot first") {
		t.Errorf("the refusal sends the agent to take a snapshot, which carries no refs:\n%s", text)
	}
	if !strings.Contains(f.stderr.String(), "click can never run") {
		t.Errorf("serve did not warn of the dead end:\n%s", f.stderr.String())
	}
}
