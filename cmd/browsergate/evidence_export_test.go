package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
)

// hostileTitle is a page title written to break out of the report.
const hostileTitle = `<script>document.title="pwned"</script><b id="injected">x</b>`

// screenshotManifest is the e2e manifest with a screenshot in every
// record.
func screenshotManifest() string {
	return fmt.Sprintf(e2eManifest, "launch", "") + "\n[tool.evidence]\nscreenshots = true\n"
}

// recordedLog drives a real session through the daemon (sign-in, a page
// with a hostile title, a refused navigation), stops it, and returns the
// fixture, whose evidence file is then free to open.
func recordedLog(t *testing.T, manifest string, serveArgs ...string) *fixture {
	t.Helper()
	hostile, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>a page with a hostile title</p>", html.EscapeString(hostileTitle))
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, manifest, serveArgs...)
	f.login(t)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": hostile + "/"})
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}, "DENIED at scope")
	f.cs.Close() // the daemon exits and lets go of the file
	return f
}

// logContents reads what the evidence file holds, through the package.
func logContents(t *testing.T, path string) ([]evidence.SessionSummary, map[string][]*evidence.Envelope) {
	t.Helper()
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string][]*evidence.Envelope{}
	for _, sum := range sums {
		if recs[sum.ID], err = s.Records(sum.ID); err != nil {
			t.Fatal(err)
		}
	}
	return sums, recs
}

// reportDOM is what the test reads from the report as Chromium built it.
type reportDOM struct {
	Status   string   `json:"status"`
	Problems []string `json:"problems"`
	Sessions []struct {
		ID      string   `json:"id"`
		Rows    []string `json:"rows"`
		Records string   `json:"records"`
	} `json:"sessions"`
	BadRows  []string `json:"badRows"`
	Images   []int    `json:"images"`
	Scripts  int      `json:"scripts"`
	Injected bool     `json:"injected"`
	Titles   []string `json:"titles"`
	DocTitle string   `json:"docTitle"`
}

const readReport = `(async () => {
  const imgs = [...document.querySelectorAll('img.screenshot')];
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  return {
    status: document.getElementById('verification').textContent.trim(),
    problems: [...document.querySelectorAll('#problems li')].map(li => li.textContent),
    sessions: [...document.querySelectorAll('section.session')].map(s => ({
      id: s.dataset.session,
      rows: [...s.querySelectorAll('tr.interaction')].map(r => r.dataset.seq),
      records: s.querySelector('.record-count').textContent,
    })),
    badRows: [...document.querySelectorAll('tr.interaction.bad')].map(r => r.id),
    images: imgs.map(i => i.naturalWidth),
    scripts: document.querySelectorAll('script').length,
    injected: document.getElementById('injected') !== null,
    titles: [...document.querySelectorAll('dd.state-title')].map(d => d.textContent),
    docTitle: document.title,
  };
})()`

// headlessChromium starts one Chromium for a test and returns a function
// that loads a file in a fresh tab and reads the report from its DOM.
func headlessChromium(t *testing.T) func(path string) reportDOM {
	t.Helper()
	userDir, err := os.MkdirTemp("", "browsergate-report-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("/usr/bin/chromium"), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("no-first-run", true), chromedp.UserDataDir(userDir))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(userDir) // best-effort: helpers may still write to it
	})
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return func(path string) reportDOM {
		t.Helper()
		tab, cancel := chromedp.NewContext(browser)
		defer cancel()
		tab, cancel = context.WithTimeout(tab, time.Minute)
		defer cancel()
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Navigate("file://"+abs)); err != nil {
			t.Fatalf("load the report in chromium: %v", err)
		}
		dom, err := chromedp.Run(tab, chromedp.Evaluate[reportDOM](readReport, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("read the report's DOM: %v", err)
		}
		return dom
	}
}

// TestExportHTMLReportInChromium exports a real log (screenshots on) to
// HTML with the binary and checks, from the DOM headless Chromium builds,
// that every session and interaction is there, the verification status is
// right, the embedded screenshots decode, and a hostile page title is
// text. Then it alters a record: the report must say FAILED and name it.
func TestExportHTMLReportInChromium(t *testing.T) {
	f := recordedLog(t, screenshotManifest())
	sums, recs := logContents(t, f.evidence)
	if len(sums) == 0 {
		t.Fatal("the daemon recorded no session")
	}
	load := headlessChromium(t)
	report := filepath.Join(t.TempDir(), "report.html")

	out, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html", "--out", report)
	if code != 0 || !strings.Contains(out, "verification intact") {
		t.Fatalf("export html: exit %d\n%s", code, out)
	}
	dom := load(report)
	if !strings.HasPrefix(dom.Status, "intact") || len(dom.Problems) != 0 {
		t.Errorf("verification status %q, problems %q; want intact", dom.Status, dom.Problems)
	}
	if len(dom.Sessions) != len(sums) {
		t.Fatalf("report shows %d session(s), the log has %d", len(dom.Sessions), len(sums))
	}
	shots := 0
	for i, sum := range sums {
		got := dom.Sessions[i]
		var want []string
		for _, e := range recs[sum.ID] {
			want = append(want, strconv.FormatUint(e.Seq, 10))
			if e.ScreenshotSHA256 != "" {
				shots++
			}
		}
		if got.ID != sum.ID || !slices.Equal(got.Rows, want) || got.Records != strconv.Itoa(sum.Records) {
			t.Errorf("session %d: report shows %q rows %v (%s records); log has %q rows %v", i, got.ID, got.Rows, got.Records, sum.ID, want)
		}
	}
	if shots == 0 {
		t.Fatal("the log has no screenshot: [tool.evidence] screenshots = true did not take")
	}
	if len(dom.Images) != shots {
		t.Errorf("report embeds %d screenshot(s), the log has %d", len(dom.Images), shots)
	}
	for i, w := range dom.Images {
		if w <= 0 {
			t.Errorf("screenshot %d does not decode (naturalWidth %d)", i, w)
		}
	}
	if dom.Scripts != 0 || dom.Injected || dom.DocTitle == "pwned" {
		t.Errorf("hostile title became markup: %d script(s), injected element %v, document title %q", dom.Scripts, dom.Injected, dom.DocTitle)
	}
	if !slices.Contains(dom.Titles, hostileTitle) {
		t.Errorf("the hostile title is not shown as text; titles: %q", dom.Titles)
	}

	// Alter one stored record: the report says FAILED and names it.
	session, seq := tamperOneRecord(t, f.evidence)
	out, code = runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html", "--out", report)
	named := fmt.Sprintf("session %s record %d:", session, seq)
	if code != 1 || !strings.Contains(out, named) {
		t.Errorf("export html of an altered log: exit %d, want 1 naming %q\n%s", code, named, out)
	}
	dom = load(report)
	if !strings.HasPrefix(dom.Status, "FAILED") {
		t.Errorf("verification status %q, want FAILED", dom.Status)
	}
	if !slices.ContainsFunc(dom.Problems, func(p string) bool { return strings.HasPrefix(p, named) }) {
		t.Errorf("problems %q do not name %q", dom.Problems, named)
	}
	if len(dom.BadRows) == 0 {
		t.Error("no interaction row is marked bad")
	}
}

// TestExportJSONL: one stored envelope a line, in chain order, and
// --session keeps only that session's lines.
func TestExportJSONL(t *testing.T) {
	f := recordedLog(t, fmt.Sprintf(e2eManifest, "launch", ""))
	sums, recs := logContents(t, f.evidence)
	out, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export jsonl: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var want []string
	for _, sum := range sums {
		for _, e := range recs[sum.ID] {
			want = append(want, sum.ID+"/"+strconv.FormatUint(e.Seq, 10)+"/"+e.Hash)
		}
	}
	var got []string
	for i, line := range lines {
		var rec struct {
			Session string `json:"session"`
			Seq     uint64 `json:"seq"`
			Hash    string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is not one JSON envelope: %v\n%s", i+1, err, line)
		}
		got = append(got, rec.Session+"/"+strconv.FormatUint(rec.Seq, 10)+"/"+rec.Hash)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("exported records:\n%v\nwant\n%v", got, want)
	}

	only := filepath.Join(t.TempDir(), "one.jsonl")
	out, code = runBinary(t, "evidence", "export", "--evidence", f.evidence, "--session", sums[0].ID, "--out", only)
	data, _ := os.ReadFile(only)
	if code != 0 || strings.Count(string(data), "\n") != sums[0].Records {
		t.Errorf("export --session --out: exit %d, %d line(s), want %d\n%s", code, strings.Count(string(data), "\n"), sums[0].Records, out)
	}
	for _, args := range [][]string{
		{"evidence", "export", "--evidence", f.evidence, "--format", "pdf"},
		{"evidence", "export", "--evidence", f.evidence, "--pubkey", "k.pub"},
		{"evidence", "export", "--format", "html"},
	} {
		if out, code := runBinary(t, args...); code != 2 || !strings.Contains(out, "run `browsergate help evidence export` for its flags") {
			t.Errorf("browsergate %v: exit %d, want 2 with where its flags are\n%s", args, code, out)
		}
	}
}
