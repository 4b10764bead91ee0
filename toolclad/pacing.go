package toolclad

import "math"

// maxRequestsPerSecondPerHost is the highest requests_per_second_per_host
// a manifest may set.
const maxRequestsPerSecondPerHost = 1000

// decodeBrowserPacing reads [browser.scope] requests_per_second_per_host
// for a browser (engine = "cdp-direct"): the requests the session's pages
// make to one host are spaced to it. Unlike the browserless engine's, it
// is off unless the manifest sets it: a page loads many resources from
// its own host at once, and pacing them slows every page down.
func decodeBrowserPacing(t *table, m *Manifest, rate float64, rateAt keyPath, rateSet bool) {
	m.Browser.RequestsPerSecondPerHost = 0
	if rateSet && checkRate(t, rate, rateAt) {
		m.Browser.RequestsPerSecondPerHost = rate
	}
}

// checkRate reports whether rate is a requests_per_second_per_host a
// manifest may set, and says at rateAt why not.
func checkRate(t *table, rate float64, rateAt keyPath) bool {
	if rate < 0 || rate > maxRequestsPerSecondPerHost || math.IsNaN(rate) {
		t.r.errorf(rateAt, "must be between 0 (no limit) and %d requests per second, got %v", maxRequestsPerSecondPerHost, rate)
		return false
	}
	return true
}
