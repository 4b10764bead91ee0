package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The design documents' own manifests (examples/design-docs) through the
// real binary: each passes check as it is, and a copy served on loopback
// reaches every command it declares over MCP, a long page to its last
// part through the continuations its replies offer, and refs.

// designDocsDir holds the manifests.
const designDocsDir = "examples/design-docs"

// longParagraphs makes the long page's snapshot and its Markdown longer
// than two default replies (200,000 characters each).
const longParagraphs = 4000

// longEnd is the long page's last line.
const longEnd = "The end of the long page."

// serveLongSite serves the long page (with a link, a text field, a select
// and a file input at its top), a second page it links to, and a file to
// download, on 127.0.0.1.
func serveLongSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><title>The long page</title></head><body>
<nav><a href="/chapter2">Chapters</a></nav>
<main><h1>The long page</h1>
<p><a id="next" href="/chapter2">Next chapter</a></p>
<form action="/chapter2"><label>Query <input id="q" name="q"></label>
<label>Colour <select id="colour" name="colour"><option value="red">Red</option><option value="blue">Blue</option></select></label>
<label>Attachment <input type="file" id="attachment" name="attachment"></label>
<button>Search</button></form>
`)
		for i := 1; i <= longParagraphs; i++ {
			fmt.Fprintf(&b, "<p>Paragraph %d of the long page, which goes on so that no one reply can hold it all: words, words and words.</p>\n", i)
		}
		b.WriteString(`<p id="end">` + longEnd + `</p></main><script>console.log("the long page is here")</script></body></html>`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(b.String()))
	})
	mux.HandleFunc("/chapter2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Chapter two</title><h1>Chapter two</h1><p>Query: %s</p>`, strconv.Quote(r.URL.Query().Get("q")))
	})
	mux.HandleFunc("/medium", func(w http.ResponseWriter, r *http.Request) {
		// Longer than fetch_page's default max_length (5,000), shorter
		// than four of them.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<!doctype html><title>Medium</title><h1>Medium</h1>")
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(&b, "<p>Paragraph %d of the medium page, which goes on so that no one reply can hold it all: words and words.</p>\n", i)
		}
		_, _ = w.Write([]byte(b.String()))
	})
	mux.HandleFunc("/noisy", func(w http.ResponseWriter, r *http.Request) {
		// More console messages than one reply holds (200).
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Noisy</title><p>Noisy</p><script>for (let i = 1; i <= 250; i++) console.log("message " + i)</script>`))
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		_, _ = w.Write([]byte("month,total\n2026-01,650\n"))
	})
	u, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return u
}

// servedCopy is a design document's manifest as the test serves it: the
// scope is the test's loopback sites, https in a URL argument's schemes is
// http (the sites have no TLS), the files' directories are dir, and the
// search backend is the test's; the limits in those tables (keptKeys) are
// kept. Nothing else of the file changes.
func servedCopy(t *testing.T, file, dir, searchURL string) string {
	t.Helper()
	body, err := os.ReadFile(repoPath(filepath.Join(designDocsDir, file)))
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]string{
		"[browser.scope]":  {`allowed_domains = ["127.0.0.1"]`, `allow_private_cidrs = ["127.0.0.1/32"]`},
		"[browser.files]":  {fmt.Sprintf("upload_dir = %q", dir), fmt.Sprintf("download_dir = %q", dir)},
		"[browser.search]": {`backend = "duckduckgo"`, fmt.Sprintf("url = %q", searchURL)},
	}
	var out []string
	var in []string // the replacement of the table being read, nil outside one
	for _, line := range strings.Split(string(body), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			in = tables[trimmed]
			out = append(out, line)
			out = append(out, in...)
			continue
		}
		if in != nil && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			if key, _, _ := strings.Cut(trimmed, " "); keptKeys[key] {
				out = append(out, line)
			}
			continue
		}
		out = append(out, strings.ReplaceAll(line, `schemes = ["https"]`, `schemes = ["http"]`))
	}
	return strings.Join(out, "\n")
}

// keptKeys are the keys of the replaced tables that servedCopy keeps: the
// manifest's limits, which the test's machine does not change.
var keptKeys = map[string]bool{"requests_per_second_per_host": true, "max_download_bytes": true, "max_response_bytes": true}

// designDoc is one manifest's session: what it reached, to show at the
// end that every tool it publishes was reached.
type designDoc struct {
	*fixture
	tool    string // the manifest's tool name, the tools' prefix
	reached map[string]bool
}

func (d *designDoc) ok(t *testing.T, command string, args map[string]any) string {
	t.Helper()
	out := d.mustAllow(t, d.tool+"."+command, args)
	d.reached[command] = true
	return out
}

// allReached fails for every published tool no call reached.
func (d *designDoc) allReached(t *testing.T) {
	t.Helper()
	tools, err := d.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if !d.reached[strings.TrimPrefix(tool.Name, d.tool+".")] {
			t.Errorf("%s was never reached", tool.Name)
		}
	}
}

// pageLine is the line that ends each part of a reply that did not fit
// one: where it is, and the call for the next.
var pageLine = regexp.MustCompile(`\[page (\d+) of (\d+) of this (\w+)(?:; the next: (\w+) \{page: (\d+)\}|: the end)\]`)

// allPages calls command with args, then every call its replies offer for
// the next part, and returns the parts. It fails unless there are at least
// two, each offers the next by number and the last says it is the end.
func (d *designDoc) allPages(t *testing.T, command string, args map[string]any) []string {
	t.Helper()
	var parts []string
	text := d.ok(t, command, args)
	for n := 1; ; n++ {
		m := pageLine.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s part %d has no page line:\n%s", command, n, clipText(text, 400))
		}
		parts = append(parts, text)
		if m[1] != strconv.Itoa(n) || m[3] != command {
			t.Fatalf("%s part %d says %q", command, n, m[0])
		}
		if m[4] == "" {
			if n < 2 || m[2] != strconv.Itoa(n) {
				t.Fatalf("%s ended at part %d: %q (want a page long enough for two or more)", command, n, m[0])
			}
			return parts
		}
		next, _ := strconv.Atoi(m[5])
		if m[4] != command || next != n+1 {
			t.Fatalf("%s part %d offers %q", command, n, m[0])
		}
		text = d.ok(t, m[4], map[string]any{"page": next})
	}
}

// wholeLongPage fails unless parts, joined, are the whole long page: its
// first and last paragraphs and its end.
func wholeLongPage(t *testing.T, what string, parts []string) {
	t.Helper()
	all := strings.Join(parts, "\n")
	for _, want := range []string{"Paragraph 1 of the long page", fmt.Sprintf("Paragraph %d of the long page", longParagraphs), longEnd} {
		if !strings.Contains(all, want) {
			t.Errorf("%s's %d parts lack %q", what, len(parts), want)
		}
	}
	if !strings.Contains(parts[len(parts)-1], longEnd) {
		t.Errorf("%s's last part lacks the page's end", what)
	}
}

// approving is a client whose user approves every held call, as a human
// at the elicitation prompt would.
var approving = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved_by": "the test's human"}}, nil
}}

// startDesignDoc checks file as it is, then serves its copy.
func startDesignDoc(t *testing.T, file, tool string, live string) (*designDoc, string) {
	t.Helper()
	if out, code := runBinary(t, "check", "--manifest", repoPath(filepath.Join(designDocsDir, file)), "--policies", repoPath("policies")); code != 0 {
		t.Fatalf("check %s: exit %d\n%s", file, code, out)
	}
	site := serveLongSite(t)
	dir := t.TempDir()
	body := servedCopy(t, file, dir, site+"/ddg/html/")
	if live != "" {
		body = strings.Replace(body, `connect = "live"`, `connect = "live"`+"\n"+fmt.Sprintf("live_endpoint = %q", live), 1)
	}
	f := startClient(t, body, approving, "--elicitation")
	return &designDoc{fixture: f, tool: tool, reached: map[string]bool{}}, site
}

// TestDesignDocManifests: each design document's manifest loads as written,
// and every command it declares is reached on a long page, through every
// part of its snapshot and read, with refs where it hands them out.
func TestDesignDocManifests(t *testing.T) {
	t.Parallel()
	t.Run("toolclad browser mode", func(t *testing.T) {
		t.Parallel()
		d, site := startDesignDoc(t, "toolclad-browser-mode.toml", "browser_session", "")
		d.ok(t, "navigate", map[string]any{"url": site + "/long"})
		// The document's snapshot takes a selector and nothing more; its
		// continuation is taken all the same.
		parts := d.allPages(t, "snapshot", nil)
		wholeLongPage(t, "snapshot", parts)
		if findRef(parts[0], "Next chapter") == "" {
			t.Errorf("the snapshot hands out no ref for the link:\n%s", clipText(parts[0], 600))
		}
		d.mustRefuse(t, "browser_session.snapshot", map[string]any{"max_chars": 5000}, "unknown argument")
		d.ok(t, "click", map[string]any{"selector": "#q"})
		d.ok(t, "type_text", map[string]any{"text": "fts5"})
		if out := d.ok(t, "snapshot", map[string]any{"selector": "form"}); !strings.Contains(out, `value="fts5"`) {
			t.Errorf("typed text is not in the field:\n%s", out)
		}
		d.ok(t, "scroll", map[string]any{"direction": "down"})
		d.ok(t, "wait_for", map[string]any{"selector": "#end"})
		if out := d.ok(t, "extract_html", map[string]any{"selector": "#end"}); !strings.Contains(out, longEnd) {
			t.Errorf("extract_html #end:\n%s", out)
		}
		d.ok(t, "screenshot", nil)
		d.ok(t, "network_timing", nil)
		d.ok(t, "list_tabs", nil)
		if out := d.ok(t, "execute_js", map[string]any{"expression": "document.title"}); !strings.Contains(out, "The long page") {
			t.Errorf("execute_js document.title:\n%s", out)
		}
		d.ok(t, "click", map[string]any{"selector": "#next"})
		d.ok(t, "go_back", nil)
		d.ok(t, "submit_form", map[string]any{"selector": "form"})
		if out := d.ok(t, "extract_html", map[string]any{"selector": "h1"}); !strings.Contains(out, "Chapter two") {
			t.Errorf("submit_form did not reach chapter two:\n%s", out)
		}
		d.allReached(t)
	})
	t.Run("toolclad chrome_live", func(t *testing.T) {
		t.Parallel()
		port, _ := startChromium(t)
		d, site := startDesignDoc(t, "toolclad-chrome-live.toml", "chrome_live", fmt.Sprintf("http://127.0.0.1:%d", port))
		d.ok(t, "navigate", map[string]any{"url": site + "/long"})
		parts := d.allPages(t, "snapshot", nil)
		wholeLongPage(t, "snapshot", parts)
		if findRef(parts[0], "Next chapter") == "" {
			t.Errorf("the snapshot hands out no ref for the link:\n%s", clipText(parts[0], 600))
		}
		d.ok(t, "scroll", nil)
		d.ok(t, "wait_for", map[string]any{"text": longEnd})
		d.ok(t, "extract_html", map[string]any{"selector": "#next"})
		d.ok(t, "screenshot", nil)
		d.ok(t, "network_timing", nil)
		d.ok(t, "list_tabs", nil)
		d.ok(t, "navigate", map[string]any{"url": site + "/chapter2"})
		d.ok(t, "go_back", nil)
		d.allReached(t)
	})
	t.Run("wcore-browser", func(t *testing.T) {
		t.Parallel()
		d, site := startDesignDoc(t, "wcore-browser.toml", "wcore_browser", "")
		d.ok(t, "navigate", map[string]any{"url": site + "/long"})
		parts := d.allPages(t, "snapshot", nil)
		wholeLongPage(t, "snapshot", parts)
		q, colour, file, next := findRef(parts[0], "Query [textbox"), findRef(parts[0], "Colour [combobox"), findRef(parts[0], "Attachment [button"), findRef(parts[0], "Next chapter")
		if q == "" || colour == "" || file == "" || next == "" {
			t.Fatalf("the snapshot lacks refs (query %q, colour %q, attachment %q, link %q):\n%s", q, colour, file, next, clipText(parts[0], 1500))
		}
		for _, mode := range []string{"main_content", "article", "raw"} {
			wholeLongPage(t, "read "+mode, d.allPages(t, "read", map[string]any{"mode": mode}))
		}
		d.ok(t, "type_text", map[string]any{"ref": q, "text": "fts5"})
		d.ok(t, "select_option", map[string]any{"ref": colour, "value": "blue"})
		d.ok(t, "press_key", map[string]any{"key": "Tab"})
		d.uploadFrom(t, file)
		d.ok(t, "wait_for", map[string]any{"role": "heading", "timeout_ms": 2000})
		d.ok(t, "wait_for", map[string]any{"selector": "#end"})
		d.ok(t, "console_messages", nil)
		d.ok(t, "network_log", nil)
		d.ok(t, "screenshot", nil)
		d.ok(t, "click", map[string]any{"ref": next})
		d.ok(t, "go_back", nil)
		d.ok(t, "go_forward", nil)
		if out := d.ok(t, "new_tab", nil); !strings.Contains(out, "blank (about:blank)") {
			t.Errorf("new_tab without a URL:\n%s", out)
		}
		if out := d.ok(t, "list_tabs", nil); !strings.Contains(out, "about:blank") {
			t.Errorf("list_tabs does not show the blank tab:\n%s", out)
		}
		d.ok(t, "switch_tab", map[string]any{"tab": "t1"})
		d.ok(t, "close_tab", map[string]any{"tab": "t2"})
		d.mustRefuse(t, "wcore_browser.download", map[string]any{"url": site + "/report.csv", "dest_path": "/tmp"}, "download does not take dest_path", "download_dir")
		d.ok(t, "download", map[string]any{"url": site + "/report.csv"})
		d.allReached(t)
	})
	t.Run("oxios lightpanda", func(t *testing.T) {
		t.Parallel()
		d, site := startDesignDoc(t, "oxios-lightpanda.toml", "browser", "")
		d.ok(t, "navigate", map[string]any{"url": site + "/long"})
		wholeLongPage(t, "snapshot", d.allPages(t, "snapshot", nil))
		wholeLongPage(t, "read", d.allPages(t, "read", nil))
		d.ok(t, "type_text", map[string]any{"selector": "#q", "text": "fts5"})
		d.ok(t, "extract_html", map[string]any{"selector": "#end"})
		d.ok(t, "screenshot", nil)
		if out := d.ok(t, "execute_js", map[string]any{"expression": "document.querySelectorAll('p').length"}); !strings.Contains(out, strconv.Itoa(longParagraphs+2)) {
			t.Errorf("execute_js counted:\n%s", out)
		}
		d.ok(t, "click", map[string]any{"selector": "#next"})
		d.allReached(t)
	})
	t.Run("gaia web tools", func(t *testing.T) {
		t.Parallel()
		web := serveWebSite(t)
		if out, code := runBinary(t, "check", "--manifest", repoPath(filepath.Join(designDocsDir, "gaia-web-tools.toml")), "--policies", repoPath("policies")); code != 0 {
			t.Fatalf("check: exit %d\n%s", code, out)
		}
		dir := t.TempDir()
		f := startWith(t, servedCopy(t, "gaia-web-tools.toml", dir, web.URL+"/ddg/html/"))
		d := &designDoc{fixture: f, tool: "gaia_web", reached: map[string]bool{}}
		page := web.URL + "/docs/wikipedia-time-loops.html"
		d.readOn(t, page)
		if out := d.ok(t, "search_web", map[string]any{"query": "time loops"}); !strings.Contains(out, "results from duckduckgo") {
			t.Errorf("search_web:\n%s", out)
		}
		d.mustRefuse(t, "gaia_web.download_file", map[string]any{"url": web.URL + "/binary", "save_to": "~/Downloads"}, "download_file does not take save_to", "download_dir")
		if out := d.ok(t, "download_file", map[string]any{"url": web.URL + "/binary"}); !strings.Contains(out, "binary") {
			t.Errorf("download_file:\n%s", out)
		}
		d.allReached(t)
	})
}

// restLine is fetch_page's offer of the next part of a page.
var restLine = regexp.MustCompile(`; the rest: fetch_page \{url: "([^"]+)", max_length: (\d+), start_index: (\d+)\}`)

// readOn reads page with fetch_page from a max_length over the limit
// (clamped, and said so), then every call its replies offer, and fails
// unless the parts, joined, are as long as the page's text and the last
// offers nothing more.
func (d *designDoc) readOn(t *testing.T, page string) {
	t.Helper()
	out := d.ok(t, "fetch_page", map[string]any{"url": page, "max_length": 50000})
	if !strings.Contains(out, "max_length 50000 was clamped to 20000") || !regexp.MustCompile(`\nFetched: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n`).MatchString(out) {
		t.Errorf("the first part does not say it was clamped, or when it was fetched:\n%s", clipText(out, 500))
	}
	total := regexp.MustCompile(`Length: (\d+) characters`)
	m := total.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no length:\n%s", clipText(out, 500))
	}
	want, _ := strconv.Atoi(m[1])
	span := regexp.MustCompile(`; characters (\d+) to (\d+) follow`)
	end, parts := 0, 0
	for {
		parts++
		sp := span.FindStringSubmatch(out)
		if sp == nil {
			t.Fatalf("part %d does not say which characters it holds:\n%s", parts, clipText(out, 500))
		}
		if from, _ := strconv.Atoi(sp[1]); from != end {
			t.Fatalf("part %d starts at %d, the last ended at %d", parts, from, end)
		}
		end, _ = strconv.Atoi(sp[2])
		rest := restLine.FindStringSubmatch(out)
		if rest == nil {
			break
		}
		if rest[1] != page || rest[2] != "20000" || rest[3] != sp[2] {
			t.Fatalf("part %d, characters %s to %s, offers %q", parts, sp[1], sp[2], rest[0])
		}
		out = d.ok(t, "fetch_page", map[string]any{"url": page, "max_length": 20000, "start_index": end})
	}
	if parts < 2 || end != want {
		t.Errorf("the parts end at %d of a page of %d characters, after %d parts", end, want, parts)
	}
}

// uploadFrom attaches a file of the files' directory to the file input
// ref (upload_file is held for a human, who approves it).
func (d *designDoc) uploadFrom(t *testing.T, ref string) {
	t.Helper()
	dir := filesDir(t, d.manifest)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := d.ok(t, "upload_file", map[string]any{"ref": ref, "file": "notes.txt"}); !strings.Contains(out, "notes.txt") {
		t.Errorf("upload_file:\n%s", out)
	}
}

// filesDir is the upload_dir the served copy at manifest names.
func filesDir(t *testing.T, manifest string) string {
	t.Helper()
	body, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^upload_dir = "([^"]+)"$`).FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("%s names no upload_dir", manifest)
	}
	return m[1]
}
