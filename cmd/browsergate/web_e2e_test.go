package main

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The browserless engine's end-to-end tests: the built binary, over the
// MCP SDK client, with engine = "http" manifests; real documentation pages
// (testdata/docs) served on loopback; search backends in DuckDuckGo's and
// SearXNG's shapes; the canary on 127.0.0.2 for the egress cases.

// webManifest is the browserless manifest: the test site on 127.0.0.1 (and
// the --resolve names) in scope, a download directory, DuckDuckGo's shape
// at the site's /ddg/html/. Formatted with the download directory, the
// site's URL and the rate limit.
const webManifest = `
[tool]
name = "web"
description = "browserless reading"
timeout_seconds = 10

[browser]
engine = "http"
max_interactions = 100000

[browser.scope]
allowed_domains = ["127.0.0.1", "app.test", "rebind.test", "mixed.test"]
allow_private_cidrs = ["127.0.0.1/32"]
allowed_ports = ["1024-65535"]
requests_per_second_per_host = %v

[browser.files]
download_dir = %q
max_download_bytes = 1048576

[browser.search]
backend = "duckduckgo"
url = "%s/ddg/html/"

[browser.commands.fetch_page]
[browser.commands.search_web]
[browser.commands.download_file]
risk_tier = "medium"
`

// webSite is the site the browserless engine reads: the documentation
// pages, the search backends' shapes, files to download, a redirector,
// a cookie that signs in, and a log of when each path was asked for.
type webSite struct {
	URL string
	mu  sync.Mutex
	hit map[string][]time.Time
}

func (s *webSite) times(path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hit[path])
}

// hostileDisposition is the hostile download's Content-Disposition: its
// name (RFC 5987 encoded, as a raw control character would not pass the
// HTTP client) climbs out of the directory and holds a control character,
// a leading dot, spaces and a shell metacharacter.
const hostileDisposition = `attachment; filename*=UTF-8''..%2F..%2F.bashrc%07%20evil%20name%3Brm.sh`

func serveWebSite(t testing.TB) *webSite {
	t.Helper()
	site := &webSite{hit: map[string][]time.Time{}}
	mux := http.NewServeMux()
	docs := http.FileServer(http.Dir("testdata/docs"))
	mux.Handle("/docs/", http.StripPrefix("/docs/", docs))
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		// Raw, as a hostile site would write it: no escaping of ours.
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/ddg/html/", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		if to, ok := strings.CutPrefix(q, "!go "); ok {
			// A "bang": the backend redirects where the query says.
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><body><form action="/ddg/html/"><input name="q" value="%s"></form>`, q)
		for i, p := range []string{"go-memory-model.html", "wikipedia-time-loops.html", "nope.html"} {
			fmt.Fprintf(w, `<div class="result results_links"><h2 class="result__title"><a class="result__a" href="/l/?uddg=%s&amp;rut=1">Result %d for %s</a></h2><a class="result__snippet">Snippet %d</a></div>`,
				strings.ReplaceAll(site.URL+"/docs/"+p, ":", "%3A"), i+1, q, i+1)
		}
		fmt.Fprint(w, `<div class="result result--ad"><h2 class="result__title"><a href="https://ads.example/">An ad</a></h2></div></body></html>`)
	})
	mux.HandleFunc("/searx/search", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "format", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{
			{"url": site.URL + "/docs/go-memory-model.html", "title": "Memory model: " + r.URL.Query().Get("q"), "content": "happens before"},
			{"url": "https://elsewhere.example/page", "title": "Elsewhere", "content": "out of scope"},
		}})
	})
	mux.HandleFunc("/files/hostile", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x-shellscript")
		w.Header().Set("Content-Disposition", hostileDisposition)
		fmt.Fprint(w, "echo pwned\n")
	})
	mux.HandleFunc("/files/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(2<<20))
		w.Write(make([]byte, 2<<20))
	})
	mux.HandleFunc("/files/big-stream", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the cap must stop it as it streams.
		for range 64 {
			w.Write(make([]byte, 32<<10))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sessionid", Value: "s3cr3t", Path: "/"})
		http.Redirect(w, r, "/account", http.StatusSeeOther)
	})
	mux.HandleFunc("/account", func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie("sessionid"); err != nil {
			fmt.Fprint(w, `<title>Sign in</title><form method="post"><input name="u"></form>`)
			return
		}
		fmt.Fprint(w, `<title>Account</title><p>Welcome back.</p><a href="/logout">Log out</a>`)
	})
	mux.HandleFunc("/private/notes", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Private</title><p>not for agents</p>`)
	})
	mux.HandleFunc("/counted", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Counted</title><p>ok</p>`)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		// 150,000 paragraphs, about 600 KB: over web.MaxNodes (about 600,000 nodes estimated), gzipped
		// to a few KB on the wire.
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		gz.Write([]byte(strings.Repeat("<p>a", 150000)))
		gz.Close()
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		// 20 MB of HTML once decompressed, 20 KB on the wire.
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/html")
		gz := gzip.NewWriter(w)
		gz.Write([]byte("<html><body>"))
		gz.Write(make([]byte, 20<<20))
		gz.Close()
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		// A flood: 300 cookies of 3 KB, and one of 5 KB.
		for i := range 300 {
			http.SetCookie(w, &http.Cookie{Name: fmt.Sprintf("c%d", i), Value: strings.Repeat("x", 3000), Path: "/"})
		}
		http.SetCookie(w, &http.Cookie{Name: "big", Value: strings.Repeat("y", 5000), Path: "/"})
		fmt.Fprint(w, "<title>Cookies</title>")
	})
	mux.HandleFunc("/echo-cookies", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<title>Echo</title><p>%d cookies; big: %v</p>", len(r.Cookies()), strings.Contains(r.Header.Get("Cookie"), "big="))
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write([]byte("%PDF-1.4 ..."))
	})
	logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site.mu.Lock()
		site.hit[r.URL.Path] = append(site.hit[r.URL.Path], time.Now())
		site.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
	var stop func()
	var err error
	site.URL, stop, err = serveOn("127.0.0.1:0", logged)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// webFixture starts serve with the browserless manifest (and a second one
// on SearXNG's shape, "searx"), with extra serve arguments.
func webFixture(t *testing.T, rate float64, serveArgs ...string) (*fixture, *webSite, string) {
	t.Helper()
	site := serveWebSite(t)
	dir := t.TempDir()
	downloads := filepath.Join(dir, "downloads")
	if err := os.Mkdir(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	searx := filepath.Join(dir, "searx.toml")
	body := `
[tool]
name = "searx"
[browser]
engine = "http"
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
allowed_ports = ["1024-65535"]
requests_per_second_per_host = 0
[browser.search]
backend = "searxng"
url = "` + site.URL + `/searx/search"
`
	if err := os.WriteFile(searx, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, fmt.Sprintf(webManifest, rate, downloads, site.URL), append([]string{"--manifest", searx}, serveArgs...)...)
	return f, site, downloads
}

// TestWebEngine: each extract mode of fetch_page on real documentation
// pages, search_web on both backends' shapes, the page state Cedar sees,
// and no browser process at any point.
func TestWebEngine(t *testing.T) {
	t.Parallel()
	f, site, _ := webFixture(t, 0)
	mem := site.URL + "/docs/go-memory-model.html"
	wiki := site.URL + "/docs/wikipedia-time-loops.html"

	t.Run("text", func(t *testing.T) {
		out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": mem})
		for _, want := range []string{"Title: The Go Memory Model - The Go Programming Language", "URL: " + mem, "characters; characters 0 to 5000 follow", "; the rest: fetch_page {url: ",
			"# The Go Memory Model", "## Introduction", "data race"} {
			if !strings.Contains(out, want) {
				t.Errorf("text lacks %q:\n%s", want, clipText(out, 3000))
			}
		}
		for _, not := range []string{"siteTracker", "font-family", "Packages", "Creative Commons"} {
			if strings.Contains(out, not) {
				t.Errorf("text holds %q (script, style, nav or footer)", not)
			}
		}
		long := f.mustAllow(t, "web.fetch_page", map[string]any{"url": mem, "max_length": 20000})
		if len(long) < 15000 || !strings.Contains(long, "## Advice") {
			t.Errorf("max_length 20000 gave %d bytes", len(long))
		}
		// Above the limit is clamped to it, and the header says so (GAIA's
		// design clamps the model's extremes).
		clamped := f.mustAllow(t, "web.fetch_page", map[string]any{"url": mem, "max_length": 20001})
		if !strings.Contains(clamped, "max_length 20001 was clamped to 20000; characters 0 to 20000 follow") {
			t.Errorf("max_length 20001 does not say it was clamped:\n%s", clipText(clamped, 500))
		}
	})
	t.Run("html", func(t *testing.T) {
		out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": mem, "extract": "html", "max_length": 20000})
		if !strings.Contains(out, "<!DOCTYPE html>") || !strings.Contains(out, `<nav class="site-nav">`) || !strings.Contains(out, "characters 0 to 20000 follow") {
			t.Errorf("html is not the raw page, capped:\n%s", clipText(out, 3000))
		}
	})
	t.Run("links", func(t *testing.T) {
		res := f.callResult(t, "web.fetch_page", map[string]any{"url": wiki, "extract": "links", "max_length": 20000})
		text := resultText(res)
		if res.IsError || !strings.Contains(text, "- [Repeat Performance](https://en.wikipedia.org/wiki/Repeat_Performance)") {
			t.Fatalf("links:\n%s", clipText(text, 3000))
		}
		sc := structured(t, res)
		links, _ := sc["links"].([]any)
		total, _ := sc["total"].(float64)
		if len(links) < 50 || int(total) <= len(links) {
			t.Errorf("structured links: %d shown of %v (the page has more than fit in 20000 characters)", len(links), total)
		}
	})
	t.Run("tables", func(t *testing.T) {
		res := f.callResult(t, "web.fetch_page", map[string]any{"url": wiki, "extract": "tables", "max_length": 20000})
		text := resultText(res)
		if res.IsError || !strings.Contains(text, "Films with time loops") || !strings.Contains(text, "- Film: Repeat Performance; Year: 1947; Description: A woman") {
			t.Fatalf("tables:\n%s", clipText(text, 3000))
		}
		tables, _ := structured(t, res)["tables"].([]any)
		found := false
		for _, tab := range tables {
			m, _ := tab.(map[string]any)
			if cap, _ := m["caption"].(string); strings.HasPrefix(cap, "Films with time loops") {
				rows, _ := m["rows"].([]any)
				first, _ := rows[0].(map[string]any)
				found = first["Film"] == "Repeat Performance" && first["Year"] == "1947"
			}
		}
		if !found {
			t.Errorf("structured tables lack the films table's first row as header -> cell")
		}
	})
	t.Run("not a page", func(t *testing.T) {
		f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/binary"}, "application/pdf", "download_file")
		f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/docs/missing.html"}, "HTTP 404")
	})
	t.Run("search duckduckgo", func(t *testing.T) {
		res := f.callResult(t, "web.search_web", map[string]any{"query": "memory model", "num_results": 2})
		text := resultText(res)
		if res.IsError || !strings.Contains(text, "2 results from duckduckgo") || !strings.Contains(text, "1. Result 1 for memory model\n   "+mem) ||
			strings.Contains(text, "Result 3") || strings.Contains(text, "ads.example") {
			t.Fatalf("search:\n%s", text)
		}
		results, _ := structured(t, res)["results"].([]any)
		if len(results) != 2 {
			t.Errorf("structured results: %v", results)
		}
		// A query that makes the backend redirect elsewhere (another
		// origin, in scope) is not followed.
		f.mustRefuse(t, "web.search_web", map[string]any{"query": "!go " + f.siteURL + "/docs"}, "outside its own origin")
		// The results are fetched only when asked, and judged then.
		if out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": mem}); !strings.Contains(out, "data race") {
			t.Error("a result's page did not fetch")
		}
	})
	t.Run("search searxng", func(t *testing.T) {
		out := f.mustAllow(t, "searx.search_web", map[string]any{"query": "memory"})
		if !strings.Contains(out, "2 results from searxng") || !strings.Contains(out, "Memory model: memory") || !strings.Contains(out, "https://elsewhere.example/page") {
			t.Fatalf("searxng:\n%s", out)
		}
		f.mustRefuse(t, "searx.fetch_page", map[string]any{"url": "https://elsewhere.example/page"}, "elsewhere.example")
	})
	t.Run("page state", func(t *testing.T) {
		out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/account"})
		if !strings.Contains(out, `has_forms=true`) || !strings.Contains(out, `is_authenticated=false`) || !strings.Contains(out, `tab_count=1`) {
			t.Errorf("signed out:\n%s", out)
		}
		out = f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/signin"})
		if !strings.Contains(out, "Welcome back") || !strings.Contains(out, `is_authenticated=true`) || !strings.Contains(out, `title="Account"`) ||
			!strings.Contains(out, "(after 1 redirects)") || strings.Contains(out, "s3cr3t") {
			t.Errorf("signed in by the cookie the engine keeps:\n%s", out)
		}
	})
	t.Run("limits", func(t *testing.T) {
		f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/huge"}, "more than 150000 nodes", "download_file")
		f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/bomb"}, "larger than max_response_bytes (10485760 bytes)", "nothing was read")
		f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/cookies"})
		if out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/echo-cookies"}); !strings.Contains(out, "180 cookies; big: false") {
			t.Errorf("after a flood of cookies the jar sends: %s", out)
		}
	})
	// No browser, at any point.
	if _, n := processFigures(t, f.pid); n != 0 {
		t.Errorf("serve has %d descendant process(es): the browserless engine started one", n)
	}
}

// TestWebEngineDownloads: a hostile Content-Disposition name is saved
// under a safe name inside the directory; a file over max_download_bytes
// is refused, with or without a Content-Length, and nothing of it is
// left; a manifest with download_file and no download directory does not
// load.
func TestWebEngineDownloads(t *testing.T) {
	t.Parallel()
	f, site, downloads := webFixture(t, 0)
	out := f.mustAllow(t, "web.download_file", map[string]any{"url": site.URL + "/files/hostile"})
	sum := sha256.Sum256([]byte("echo pwned\n"))
	want := "bashrc__evil_name_rm.sh"
	if !strings.Contains(out, "saved as "+want) || !strings.Contains(out, hex.EncodeToString(sum[:])) || !strings.Contains(out, "text/x-shellscript") {
		t.Errorf("hostile name:\n%s", out)
	}
	again := f.mustAllow(t, "web.download_file", map[string]any{"url": site.URL + "/files/hostile", "filename": "../x/.hidden name"})
	if !strings.Contains(again, "saved as hidden_name") {
		t.Errorf("asked name:\n%s", again)
	}
	third := f.mustAllow(t, "web.download_file", map[string]any{"url": site.URL + "/files/hostile"})
	if !strings.Contains(third, "saved as bashrc__evil_name_rm_2.sh") {
		t.Errorf("a second file of the name:\n%s", third)
	}
	f.mustRefuse(t, "web.download_file", map[string]any{"url": site.URL + "/files/big"}, "max_download_bytes", "nothing was saved")
	f.mustRefuse(t, "web.download_file", map[string]any{"url": site.URL + "/files/big-stream"}, "max_download_bytes", "nothing was saved")
	entries, _ := os.ReadDir(downloads)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"bashrc__evil_name_rm.sh", "bashrc__evil_name_rm_2.sh", "hidden_name"}) {
		t.Errorf("the download directory holds %v", names)
	}
	if _, err := os.Stat(filepath.Join(downloads, "..", ".bashrc")); err == nil {
		t.Error("a file was written outside the download directory")
	}

	out, code := runBinary(t, "check", "--manifest", repoPath("examples/research-http.toml"), "--policies", repoPath("policies"))
	if code != 0 || !strings.Contains(out, "engine=http (no browser)") || !strings.Contains(out, "search: duckduckgo at https://html.duckduckgo.com/html/") ||
		strings.Contains(out, "dialogs=") {
		t.Errorf("check of the example: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	m := filepath.Join(dir, "nodir.toml")
	os.WriteFile(m, []byte("[tool]\nname = \"w\"\n[browser]\nengine = \"http\"\n[browser.commands.download_file]\n"), 0o644)
	msg, code := runBinary(t, "check", "--manifest", m, "--policies", repoPath("policies"))
	if code == 0 || !strings.Contains(msg, "nodir.toml:5:") || !strings.Contains(msg, "download_file: needs [browser.files] download_dir") {
		t.Errorf("download_file without a directory: exit %d\n%s", code, msg)
	}
}

// TestWebEngineEgress: the egress suite's address spellings and DNS
// cases, given to fetch_page directly and through a redirect of the
// allowed site: every one is refused and the canary sees nothing at all.
func TestWebEngineEgress(t *testing.T) {
	t.Parallel()
	f, site, _ := webFixture(t, 0, "--resolve", "app.test=127.0.0.1", "--resolve", "rebind.test=127.0.0.2", "--resolve", "mixed.test=127.0.0.1,127.0.0.2")
	canaryPort := f.canaryTo[strings.LastIndex(f.canaryTo, ":")+1:]
	targets := encodedNavigations(f.canaryTo)
	targets["name resolving to the canary"] = "http://rebind.test:" + canaryPort + "/"
	targets["name with a mixed answer"] = "http://mixed.test:" + canaryPort + "/"
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		u := targets[name]
		t.Run(name, func(t *testing.T) {
			out, refused := f.call(t, "web.fetch_page", map[string]any{"url": u})
			if !refused {
				t.Errorf("direct: allowed:\n%s", out)
			}
			via := site.URL + "/redirect?to=" + url.QueryEscape(u)
			out, refused = f.call(t, "web.fetch_page", map[string]any{"url": via})
			if !refused || !strings.Contains(out, "refused") {
				t.Errorf("through a redirect: %v\n%s", refused, out)
			}
		})
	}
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]
	if out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": "http://app.test:" + port + "/docs/go-memory-model.html"}); !strings.Contains(out, `domain="app.test"`) {
		t.Errorf("an allowed name through the gate:\n%s", clipText(out, 3000))
	}
	if !f.net.Clean() {
		t.Fatalf("the canary saw traffic: %s", f.net)
	}
}

// TestWebEngineRateLimit: requests to one host are spaced to
// requests_per_second_per_host, a call waiting for its turn rather than
// failing; a turn that would come after the call's timeout fails the call
// at once, saying why.
func TestWebEngineRateLimit(t *testing.T) {
	t.Parallel()
	f, site, _ := webFixture(t, 2) // one request every 500 ms
	for range 3 {
		f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/counted"})
	}
	times := site.times("/counted")
	if len(times) != 3 {
		t.Fatalf("%d requests", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 450*time.Millisecond {
			t.Errorf("request %d came %v after the one before: not spaced to 2 per second", i+1, gap)
		}
	}

	slow, slowSite, _ := webFixture(t, 0.05) // one every 20 s, beyond the 10 s timeout
	slow.mustAllow(t, "web.fetch_page", map[string]any{"url": slowSite.URL + "/counted"})
	slow.mustRefuse(t, "web.fetch_page", map[string]any{"url": slowSite.URL + "/counted"}, "waiting for its turn", "requests_per_second_per_host")
	if n := len(slowSite.times("/counted")); n != 1 {
		t.Errorf("%d requests reached the site, want 1", n)
	}
}

// TestWebEngineRateLimitCountsTheAddressDialled: the real binary's
// browserless engine spaces requests by the address it dials, not by the
// name in the URL. At one request per 1000 s, fetch_page of the site as
// 127.0.0.1 goes; the same site as localhost (--resolve'd to 127.0.0.1)
// and as [::ffff:127.0.0.1], and a redirect hop to it from a redirector on
// 127.0.0.3 (an address with a budget of its own), are each refused at
// once, waiting for their turn at 127.0.0.1. What the site recorded is
// the first request and nothing more.
func TestWebEngineRateLimitCountsTheAddressDialled(t *testing.T) {
	t.Parallel()
	site := serveWebSite(t)
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]
	var redirects atomic.Int64
	redirector, stop, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirects.Add(1)
		http.Redirect(w, r, "http://localhost:"+port+"/counted?via=redirect", http.StatusFound)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	// A turn 1000 s away comes after the call's timeout (30 s): refused at once.
	f := startWith(t, `
[tool]
name = "rate"
[browser]
engine = "http"
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3", "localhost", "[::ffff:7f00:1]"]
# localhost is both 127.0.0.1 and ::1 to Chromium's rules, which the scope keeps.
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32", "::1/128"]
allowed_ports = ["1024-65535"]
requests_per_second_per_host = 0.001
[browser.commands.fetch_page]
`, "--resolve", "localhost=127.0.0.1")
	f.mustAllow(t, "rate.fetch_page", map[string]any{"url": "http://127.0.0.1:" + port + "/counted"})
	for _, u := range []string{
		"http://localhost:" + port + "/counted",
		"http://[::ffff:127.0.0.1]:" + port + "/counted",
		redirector + "/to-localhost",
	} {
		f.mustRefuse(t, "rate.fetch_page", map[string]any{"url": u}, "waiting for its turn at 127.0.0.1", "requests_per_second_per_host")
	}
	if n := len(site.times("/counted")); n != 1 {
		t.Errorf("the site recorded %d requests for /counted, want 1: another spelling of 127.0.0.1 had a budget of its own", n)
	}
	if n := redirects.Load(); n != 1 {
		t.Errorf("the redirector on 127.0.0.3 got %d requests, want 1 (its own budget)", n)
	}
}

// TestWebEngineGovernance: Cedar decides the browserless commands as it
// does the browser's (a forbid on a URL pattern denies), an approval
// holds a critical command until a human answers, and every call is in
// the evidence log, which verifies and replays with the same engine.
func TestWebEngineGovernance(t *testing.T) {
	t.Parallel()
	pol := t.TempDir()
	for _, name := range []string{"baseline.cedar", "navigate.cedar", "risk.cedar", "files.cedar", "submit.cedar", "execute_js.cedar", "browsergate.cedarschema"} {
		data, err := os.ReadFile(repoPath("policies/" + name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(pol, name), data, 0o644)
	}
	os.WriteFile(filepath.Join(pol, "private.cedar"), []byte(`@id("no-private-pages")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "fetch_page" && resource.url like "*/private/*" };
@id("signed-in-download-needs-approval")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "download_file" && resource.page_state.is_authenticated } unless { resource.human_approved };
`), 0o644)
	f, site, downloads := webFixture(t, 0, "--policies", pol, "--resolve", "app.test=127.0.0.1")
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]

	f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/private/notes"}, "no-private-pages")
	// A redirect there is judged as the page itself would be.
	f.mustRefuse(t, "web.fetch_page", map[string]any{"url": site.URL + "/redirect?to=%2Fprivate%2Fnotes"}, "redirect 1 goes to", "no-private-pages")
	if n := len(site.times("/private/notes")); n != 0 {
		t.Errorf("the denied page was requested %d time(s)", n)
	}
	f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/signin"})
	// Signed in on 127.0.0.1; the page read last is on another host,
	// where the engine holds no cookie. A download from 127.0.0.1 carries
	// the session cookie, so Cedar sees is_authenticated and a human must
	// approve it.
	if out := f.mustAllow(t, "web.fetch_page", map[string]any{"url": "http://app.test:" + port + "/counted"}); !strings.Contains(out, "is_authenticated=false") {
		t.Fatalf("app.test is not signed in:\n%s", out)
	}
	h := f.callAsync(t, "web.download_file", map[string]any{"url": site.URL + "/files/hostile"})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "deny", id); err != nil {
		t.Fatalf("approvals deny: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); !refused || !strings.Contains(text, "denied") {
		t.Errorf("denied download: %v\n%s", refused, text)
	}
	h = f.callAsync(t, "web.download_file", map[string]any{"url": site.URL + "/files/hostile"})
	id = f.pendingID(t, h)
	if out, err := f.approvals(t, "approve", id); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); refused || !strings.Contains(text, "saved as") {
		t.Errorf("approved download: %v\n%s", refused, text)
	}
	// An approval is for the URL the human saw: where it redirects to is
	// judged as not approved, and here needs an approval of its own.
	h = f.callAsync(t, "web.download_file", map[string]any{"url": site.URL + "/redirect?to=%2Ffiles%2Fhostile"})
	id = f.pendingID(t, h)
	if out, err := f.approvals(t, "approve", id); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	if text, refused := h.wait(t); !refused || !strings.Contains(text, "needs a human's approval") || !strings.Contains(text, "ask for that URL directly") {
		t.Errorf("an approved download that redirects: %v\n%s", refused, text)
	}
	if entries, _ := os.ReadDir(downloads); len(entries) != 1 {
		t.Errorf("%d files downloaded, want the approved one", len(entries))
	}
	f.mustAllow(t, "web.fetch_page", map[string]any{"url": site.URL + "/docs/go-memory-model.html", "extract": "links"})

	f.cs.Close() // the daemon ends, and lets go of the log
	_, envs := logContents(t, f.evidence)
	var session string
	var commands []string
	for id, es := range envs {
		for _, e := range es {
			if e.Command == "fetch_page" || e.Command == "download_file" {
				session = id
				commands = append(commands, fmt.Sprintf("%s:%v", e.Command, e.Decision.Allowed))
			}
		}
	}
	if !slices.Contains(commands, "fetch_page:false") || !slices.Contains(commands, "download_file:true") || !slices.Contains(commands, "download_file:false") {
		t.Errorf("recorded: %v", commands)
	}
	out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, "evidence", "replay", "--evidence", f.evidence, "--session", session, "--resolve", "app.test=127.0.0.1")
	if code != 0 || !strings.Contains(out, "0 differ") || !strings.Contains(out, "with the browserless engine") || !strings.Contains(out, "download_file") {
		t.Errorf("replay of the browserless session: exit %d\n%s", code, out)
	}
	// The replay downloaded into a scratch directory of its own.
	if entries, _ := os.ReadDir(downloads); len(entries) != 1 {
		t.Errorf("after the replay the download directory holds %d files, want the session's one", len(entries))
	}
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &m)
	}
	return m
}

// TestWebEngineCannotReachTheDaemon: a scope that grants every port of
// 127.0.0.1 still does not let fetch_page reach the daemon's own HTTP
// front (its /healthz, its console, its MCP endpoint).
func TestWebEngineCannotReachTheDaemon(t *testing.T) {
	t.Parallel()
	d := startHTTP(t, `
[tool]
name = "web"
[browser]
engine = "http"
[browser.scope]
allowed_domains = ["127.0.0.1"]
allow_private_cidrs = ["127.0.0.1/32"]
requests_per_second_per_host = 0
[browser.commands.fetch_page]
`, "")
	cs := d.connect(t, "alice-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web.fetch_page", Arguments: map[string]any{"url": d.url + "/healthz"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || !strings.Contains(text, "browsergate's own HTTP front") {
		t.Errorf("fetch_page of the daemon's /healthz: %v\n%s", res.IsError, text)
	}
}
