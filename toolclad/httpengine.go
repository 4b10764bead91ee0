package toolclad

import (
	"net/url"
)

// Search is the [browser.search] table: the backend search_web asks
// (engine = "http").
type Search struct {
	// Backend is SearchDuckDuckGo (its HTML endpoint, parsed) or
	// SearchSearXNG (its JSON API).
	Backend string
	// URL is the backend's endpoint. Its host must be inside the scope
	// like any other: the search request goes through the same gate.
	URL string
}

// The values of [browser.search] backend, and their default endpoints.
const (
	SearchDuckDuckGo = "duckduckgo"
	SearchSearXNG    = "searxng"

	defaultDuckDuckGoURL = "https://html.duckduckgo.com/html/"
)

// HTTPEngine is the [browser.http] table: the limits of the browserless
// engine's requests.
type HTTPEngine struct {
	// MaxResponseBytes caps the body of one response fetch_page or
	// search_web reads (download_file has max_download_bytes). Default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// RequestsPerSecondPerHost is [browser.scope]
	// requests_per_second_per_host: the engine's requests to one host (the
	// IP address dialled, whatever name a URL gives it) are spaced to this
	// rate (a call waits for its turn, within its timeout); 0 turns the
	// limit off. Default 1.
	RequestsPerSecondPerHost float64
}

// DefaultMaxResponseBytes is [browser.http] max_response_bytes when a
// manifest gives none (10 MB).
const DefaultMaxResponseBytes = 10 << 20

// decodeHTTPEngine reads what only engine = "http" uses: [browser.search],
// [browser.http] and [browser.scope] requests_per_second_per_host (read
// by decodeScope into rate). In a browser manifest [browser.search] and
// [browser.http] are errors, and the rate is the browser's pacing.
func decodeHTTPEngine(t *table, m *Manifest, rate float64, rateAt keyPath, rateSet bool) {
	b := &m.Browser
	b.HTTP = HTTPEngine{MaxResponseBytes: DefaultMaxResponseBytes, RequestsPerSecondPerHost: 1}
	isHTTP := b.Engine == EngineHTTP
	if !isHTTP {
		decodeBrowserPacing(t, m, rate, rateAt, rateSet)
		for _, key := range []string{"search", "http"} {
			if t.has(key) {
				t.get(key)
				t.r.errorf(t.at(key), "[browser.%s] is for engine = \"http\" (the browserless engine)", key)
			}
		}
		return
	}
	if rateSet && checkRate(t, rate, rateAt) {
		b.HTTP.RequestsPerSecondPerHost = rate
	}
	h := t.sub("http")
	var n int64
	if h.integer("max_response_bytes", &n) {
		if n < 1024 || n > maxDownloadLimit {
			h.r.errorf(h.at("max_response_bytes"), "must be between 1024 and %d bytes, got %d", int64(maxDownloadLimit), n)
		} else {
			b.HTTP.MaxResponseBytes = n
		}
	}
	h.done()

	s := t.sub("search")
	if s.oneOf("backend", &b.Search.Backend, SearchDuckDuckGo, SearchSearXNG) {
		b.Search.URL = defaultDuckDuckGoURL
		if b.Search.Backend == SearchSearXNG {
			b.Search.URL = ""
		}
	}
	if s.str("url", &b.Search.URL) {
		u, err := url.Parse(b.Search.URL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			s.r.errorf(s.at("url"), "%q is not an absolute http(s) URL", b.Search.URL)
		case u.User != nil:
			s.r.errorf(s.at("url"), "must not carry a user name or password (an API key comes from [secrets])")
		case b.Search.Backend == "":
			s.r.errorf(s.at("url"), "names an endpoint, but backend is not set: set backend = \"duckduckgo\" or \"searxng\"")
		}
	}
	if b.Search.Backend == SearchSearXNG && b.Search.URL == "" && !s.r.hasProblemAt(s.path) {
		s.r.errorf(s.at("backend"), "searxng has no public endpoint of its own: set url to your instance's (its /search)")
	}
	s.done()
	if m.Command("search_web") != nil && b.Search.Backend == "" {
		t.r.errorf(t.at("commands").child("search_web"), "needs [browser.search] backend: the search engine it asks")
	}
}
