package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// Result is one search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// SearchURL is the request URL for query at a backend's endpoint:
// DuckDuckGo's HTML endpoint takes q; SearXNG's takes q and format=json.
// The endpoint's own query parameters are kept.
func SearchURL(backend, endpoint, query string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("the search endpoint %q does not parse: %w", endpoint, err)
	}
	q := u.Query()
	q.Set("q", query)
	if backend == "searxng" {
		q.Set("format", "json")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

var (
	ddgResult  = cascadia.MustCompile(".result")
	ddgTitle   = cascadia.MustCompile(".result__title a, a.result__a")
	ddgSnippet = cascadia.MustCompile(".result__snippet")
)

// ParseDuckDuckGo reads the results of DuckDuckGo's HTML endpoint: each
// .result's title link (.result__title a) and snippet (.result__snippet).
// DuckDuckGo's links go through its redirector (/l/?uddg=<url>): the URL
// returned is the one it names. Ads and results without an http(s) link
// are left out; at most n are returned.
func ParseDuckDuckGo(doc *Document, n int) []Result {
	var out []Result
	for _, r := range cascadia.QueryAll(doc.Root, ddgResult) {
		if len(out) == n {
			break
		}
		if strings.Contains(classOf(r), "result--ad") {
			continue
		}
		a := cascadia.Query(r, ddgTitle)
		if a == nil {
			continue
		}
		href, _ := attr(a, "href")
		u, ok := resultURL(doc, href)
		if !ok {
			continue
		}
		res := Result{Title: collapse(textContent(a)), URL: u}
		if s := cascadia.Query(r, ddgSnippet); s != nil {
			res.Snippet = collapse(textContent(s))
		}
		out = append(out, res)
	}
	return out
}

// resultURL resolves a result link against the page and unwraps
// DuckDuckGo's redirector; only http(s) URLs are results.
func resultURL(doc *Document, href string) (string, bool) {
	u, err := doc.Base.Parse(strings.TrimSpace(href))
	if err != nil {
		return "", false
	}
	if strings.HasPrefix(u.Path, "/l/") {
		if target := u.Query().Get("uddg"); target != "" {
			if t, err := url.Parse(target); err == nil {
				u = t
			}
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", false
	}
	return u.String(), true
}

func classOf(n *html.Node) string {
	c, _ := attr(n, "class")
	return c
}

// ParseSearXNG reads the results of SearXNG's JSON API (format=json):
// results[].url, .title and .content; at most n, http(s) URLs only.
func ParseSearXNG(body []byte, n int) ([]Result, error) {
	var resp struct {
		Results []struct {
			URL     string `json:"url"`
			Title   string `json:"title"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("the SearXNG answer is not its JSON (is format=json enabled on the instance?): %w", err)
	}
	var out []Result
	for _, r := range resp.Results {
		if len(out) == n {
			break
		}
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		out = append(out, Result{Title: collapse(r.Title), URL: u.String(), Snippet: collapse(r.Content)})
	}
	return out, nil
}
