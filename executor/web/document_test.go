package web_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/web"
)

const docs = "../../cmd/browsergate/testdata/docs/"

func parseFile(t *testing.T, name, pageURL string) *web.Document {
	t.Helper()
	d, err := web.Parse(readTestdata(t, docs+name), "text/html", pageURL)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestText: the readable text keeps the headings and the body's words,
// and leaves out script, style, navigation, asides and the footer.
func TestText(t *testing.T) {
	t.Parallel()
	d := parseFile(t, "go-memory-model.html", "https://go.dev/ref/mem")
	text, err := d.Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# The Go Memory Model", "## Introduction", "happens before", "sync.Once"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	for _, not := range []string{"siteTracker", "font-family", "Packages", "On this page", "Creative Commons"} {
		if strings.Contains(text, not) {
			t.Errorf("text holds %q, which is not the page's readable text", not)
		}
	}
	if d.Title() != "The Go Memory Model - The Go Programming Language" {
		t.Errorf("title %q", d.Title())
	}
}

// TestLinks: links are resolved against the page, with their text, once
// each; links within the page itself and javascript: are left out.
func TestLinks(t *testing.T) {
	t.Parallel()
	d, err := web.Parse([]byte(`<base href="https://docs.example/guide/"><a href="intro">Intro</a> <a href="/abs">Abs</a>
		<a href="#top">Top</a> <a href="javascript:alert(1)">JS</a> <a href="intro">Intro</a> <a href="https://other.example/x"><img alt="Other"></a>`),
		"text/html", "https://docs.example/guide/page")
	if err != nil {
		t.Fatal(err)
	}
	want := []web.Link{{Text: "Intro", URL: "https://docs.example/guide/intro"}, {Text: "Abs", URL: "https://docs.example/abs"},
		{Text: "Top", URL: "https://docs.example/guide/#top"}, // another document: the base's
		{Text: "Other", URL: "https://other.example/x"}}
	if got := d.Links(); !slices.Equal(got, want) {
		t.Errorf("links = %v, want %v", got, want)
	}
	wiki := parseFile(t, "wikipedia-time-loops.html", "https://en.wikipedia.org/wiki/List_of_films_featuring_time_loops")
	links := wiki.Links()
	if len(links) < 100 || !slices.Contains(links, web.Link{Text: "Repeat Performance", URL: "https://en.wikipedia.org/wiki/Repeat_Performance"}) {
		t.Errorf("%d links on the Wikipedia page, Repeat Performance among them: %v", len(links), slices.Contains(links, web.Link{Text: "Repeat Performance", URL: "https://en.wikipedia.org/wiki/Repeat_Performance"}))
	}
}

// TestTables: each table as rows of header -> cell, with its caption; a
// nested table is its own; an infobox's title row is its caption.
func TestTables(t *testing.T) {
	t.Parallel()
	wiki := parseFile(t, "wikipedia-time-loops.html", "https://en.wikipedia.org/wiki/List_of_films_featuring_time_loops")
	var films *web.Table
	for i, tab := range wiki.Tables() {
		if strings.HasPrefix(tab.Caption, "Films with time loops") {
			films = &wiki.Tables()[i]
		}
	}
	if films == nil {
		t.Fatal("no table captioned Films with time loops")
	}
	if !slices.Equal(films.Headers, []string{"Film", "Year", "Description"}) || len(films.Rows) < 20 {
		t.Fatalf("headers %v, %d rows", films.Headers, len(films.Rows))
	}
	if r := films.Rows[0]; r["Film"] != "Repeat Performance" || r["Year"] != "1947" || !strings.HasPrefix(r["Description"], "A woman who shot her hu") {
		t.Errorf("first row %v", r)
	}
	d, err := web.Parse([]byte(`<table><tr><th colspan=2>Widget</th></tr><tr><th>Size</th><td>3 <table><tr><td>inner</td></tr></table></td></tr></table>`), "text/html", "https://x.example/")
	if err != nil {
		t.Fatal(err)
	}
	tabs := d.Tables()
	if len(tabs) != 2 || tabs[0].Caption != "Widget" || tabs[0].Rows[0]["column 1"] != "Size" || tabs[0].Rows[0]["column 2"] != "3" || tabs[1].Rows[0]["column 1"] != "inner" {
		t.Errorf("tables = %+v", tabs)
	}
}

// TestSearchParsers read DuckDuckGo's HTML shape (its redirector
// unwrapped, ads left out) and SearXNG's JSON.
func TestSearchParsers(t *testing.T) {
	t.Parallel()
	page := `<div class="result results_links"><h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2Fref%2Fmem&amp;rut=x">The Go Memory Model</a></h2>
		<a class="result__snippet" href="#">Go's memory <b>model</b> specifies…</a></div>
		<div class="result result--ad"><h2 class="result__title"><a href="https://ads.example/">Ad</a></h2></div>
		<div class="result"><h2 class="result__title"><a href="https://pkg.go.dev/sync">sync</a></h2></div>
		<div class="result"><h2 class="result__title"><a href="javascript:x">bad</a></h2></div>`
	d, err := web.Parse([]byte(page), "text/html", "https://html.duckduckgo.com/html/?q=go")
	if err != nil {
		t.Fatal(err)
	}
	want := []web.Result{{Title: "The Go Memory Model", URL: "https://go.dev/ref/mem", Snippet: "Go's memory model specifies…"}, {Title: "sync", URL: "https://pkg.go.dev/sync"}}
	if got := web.ParseDuckDuckGo(d, 10); !slices.Equal(got, want) {
		t.Errorf("duckduckgo = %v, want %v", got, want)
	}
	if got := web.ParseDuckDuckGo(d, 1); len(got) != 1 {
		t.Errorf("num_results 1 gave %d", len(got))
	}
	got, err := web.ParseSearXNG([]byte(`{"results":[{"url":"https://go.dev/ref/mem","title":"Memory  model","content":"happens before"},{"url":"ftp://x/","title":"no"}]}`), 5)
	if err != nil || !slices.Equal(got, []web.Result{{Title: "Memory model", URL: "https://go.dev/ref/mem", Snippet: "happens before"}}) {
		t.Errorf("searxng = %v, %v", got, err)
	}
	if _, err := web.ParseSearXNG([]byte(`<html>`), 5); err == nil {
		t.Error("an HTML answer from SearXNG was read as results")
	}
	u, _ := web.SearchURL("searxng", "http://127.0.0.1:8888/search?lang=en", "go memory")
	if u != "http://127.0.0.1:8888/search?format=json&lang=en&q=go+memory" {
		t.Errorf("SearchURL = %s", u)
	}
}
